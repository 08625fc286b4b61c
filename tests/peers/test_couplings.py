"""Couplings imposed (symgen.model.couplings): a coupled joint has no coordinate of its own.

- Baxter (2 <mimic>) and the PR2 (10 <mimic>) from example-robot-data: nq, nv and the
  generated kernels (inverse dynamics, M, forward dynamics) against Pinocchio's own reading
  with ``buildModelFromUrdf(..., mimic=True)`` (its ABA rejects mimic joints, so its forward
  dynamics is the solve of its crba and rnea). Seed 0, 3 states per robot; tolerance 1e-9
  relative to the largest entry: both sides evaluate the same Newton-Euler sums in double
  (rounding ~1e-15 · the number of bodies), and the FD solve adds cond(M) ≤ ~1e5 here.
- The geared arm (examples/models/geared_arm.yaml): a rotor on a gear of ratio N reaches
  its joint as N²·J_rotor on the diagonal of M, computed by hand below; ID(FD(τ)) = τ.
- The principle of virtual work, independently of Pinocchio: τ = Tᵀ τ_tree, M = Tᵀ M_tree T
  with the tree dynamics of the same model with its couplings dropped.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from paths import EXAMPLES

import symgen
from symgen import reference as ref
from symgen.io.robots import example_robot_data_dir

pin = pytest.importorskip("pinocchio")

from symgen.peers.pinocchio import Bridge  # noqa: E402

KERNELS = ["inverse_dynamics", "mass_matrix", "forward_dynamics"]
TOLERANCE = 1e-9
ROBOTS = {"baxter": ("baxter_description/urdf/baxter.urdf", 2),
          "pr2": ("pr2_description/urdf/pr2.urdf", 10)}


def _rel(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - b)) / max(1.0, np.max(np.abs(b))))


@cache
def robot(name: str):
    path = example_robot_data_dir() / ROBOTS[name][0]
    model = symgen.load(path)
    ks = symgen.generate(model, KERNELS)
    return model, ks, Bridge(model, pin.buildModelFromUrdf(str(path), mimic=True))


@pytest.mark.parametrize("name", ROBOTS)
def test_mimic_joints_have_no_coordinates(name):
    model, _, br = robot(name)
    assert len(model.couplings) == ROBOTS[name][1]
    assert model.nv == model.tree_nv - ROBOTS[name][1] == br.pin_model.nv
    if name == "baxter":
        assert (model.tree_nv, model.nv) == (19, 17)


@pytest.mark.parametrize("name", ROBOTS)
def test_kernels_agree_with_pinocchio_mimic(name):
    model, ks, br = robot(name)
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = ref.random_configuration(model, rng)
        v, a, tau = (rng.standard_normal(model.nv) for _ in range(3))
        qp, vp = br.q_to_pin(q), br.v_to_pin(v)
        expected_tau = br.v_from_pin(pin.rnea(br.pin_model, br.data, qp, vp, br.v_to_pin(a)))
        assert _rel(ks.evaluate("inverse_dynamics", q=q, v=v, a=a)["tau"], expected_tau) \
            < TOLERANCE
        expected_m = br.matrix_from_pin(br.mass_matrix(qp))
        assert _rel(ks.evaluate("mass_matrix", q=q)["M"], expected_m) < TOLERANCE
        expected_a = br.v_from_pin(br.forward_dynamics(qp, vp, br.v_to_pin(tau)))
        assert _rel(ks.evaluate("forward_dynamics", q=q, v=v, tau=tau)["a"], expected_a) \
            < TOLERANCE


@cache
def geared():
    model = symgen.load(EXAMPLES / "geared_arm.yaml")
    return model, symgen.generate(model, [*KERNELS, "forward_kinematics"])


def test_geared_rotor_reflects_n_squared_inertia():
    """At q = 0 with the elbow straight, M[shoulder, shoulder] = I_arm + N_s² J_s + the
    rotor's own link share, all computed here from the YAML's numbers."""
    model, ks = geared()
    m = ks.evaluate("mass_matrix", q=np.zeros(model.nq))["M"]
    # shoulder about y through the origin: upper arm (2 kg rod 0.4 m, COM at 0.2),
    # forearm (1.2 kg rod 0.3 m, COM at 0.4 + 0.15), elbow rotor (0.2 kg on the axis at
    # 0.4, J_y 1e-4, turning at the shoulder's rate when q̇_elbow = 0), fingers (0.05 kg
    # each, COM at depth 0.4 + 0.3 + 0.02 and x = ∓0.02, J_y 7e-6), shoulder rotor
    # (J_y 2e-4 on the axis, turning at 50 q̇_shoulder).
    upper = 2.0 * 0.4**2 / 12 + 2.0 * 0.2**2
    fore = 1.2 * 0.3**2 / 12 + 1.2 * 0.55**2
    elbow_rotor = 1e-4 + 0.2 * 0.4**2
    fingers = 2 * (7e-6 + 0.05 * (0.72**2 + 0.02**2))
    shoulder_rotor = 50**2 * 2e-4
    expected = upper + fore + elbow_rotor + fingers + shoulder_rotor
    assert m[0, 0] == pytest.approx(expected, rel=1e-12)
    # elbow: forearm about its pivot, fingers, and the elbow rotor at 30² (its rate is
    # q̇_shoulder + 30 q̇_elbow)
    elbow = 1.2 * 0.3**2 / 12 + 1.2 * 0.15**2 + 2 * (7e-6 + 0.05 * (0.32**2 + 0.02**2)) \
        + 30**2 * 1e-4
    assert m[1, 1] == pytest.approx(elbow, rel=1e-12)


def test_geared_arm_virtual_work_and_round_trip():
    """τ = Tᵀ τ_tree and M = Tᵀ M_tree T with the uncoupled model's reference dynamics;
    ID(FD(τ)) = τ with the generated kernels (seed 4)."""
    model, ks = geared()
    free = model.without_couplings()
    p, q0, t = model.coupling_matrices()
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, v, a = (rng.standard_normal(model.nv) for _ in range(3))
        qt, vt, at = p @ q + q0, t @ v, t @ a
        tau = ks.evaluate("inverse_dynamics", q=q, v=v, a=a)["tau"]
        assert _rel(tau, t.T @ ref.inverse_dynamics(free, qt, vt, at)) < 1e-12
        m = ks.evaluate("mass_matrix", q=q)["M"]
        assert _rel(m, t.T @ ref.mass_matrix(free, qt) @ t) < 1e-12
        back = ks.evaluate("forward_dynamics", q=q, v=v, tau=tau)["a"]
        assert _rel(back, a) < 1e-10
        poses = ks.evaluate("forward_kinematics", q=q)["poses"]
        fk = ref.forward_kinematics(free, qt)
        right = model.body_names.index("right_finger")
        assert _rel(poses[right], fk["right_finger"][:3]) < 1e-14


def test_articulated_body_variant_is_refused_with_couplings():
    model, _ = geared()
    with pytest.raises(symgen.SymgenError, match="coupled joints"):
        symgen.generate(model, ["forward_dynamics"], symgen.Options(forward_dynamics="aba"))


def test_natural_coordinates_refuse_couplings():
    model, _ = geared()
    from symgen.natural import natural_model

    with pytest.raises(symgen.SymgenError, match="does not impose them"):
        natural_model(model)
