"""Closed loops and couplings read from MJCF (``<equality><connect>``, ``<joint>``), checked
against the same mechanisms written in symgen's YAML and against Pinocchio's reading of the
MJCF file (``buildModelAndLegacyConstraintsFromMJCF`` + ``constraintDynamics``).

The MJCF files place every body frame at its joint with hinge axes along z and ``ref`` = 0,
so their joint coordinates are the YAML models' (the same angles from the same assembled
zero configuration). States: q assembled (``LoopClosure.assemble``) from the zero
configuration moved by 0.2 N(0, 1) per coordinate, v = N x with N an orthonormal basis of
the null space of the loop Jacobian, x, τ ~ N(0, 1); seed 0.

Constrained accelerations are computed here with numpy from the reference's M, bias forces
and the numeric loop closure's H, Ḣq̇ (Müller 2014, eq. 20-23): q̈ = q̈_p + N z with
q̈_p = −H⁺ Ḣq̇ and Nᵀ M N z = Nᵀ (τ − C − M q̈_p), the unique solution at a consistent state.
Both models go through this same code; what differs is only what the readers made of the
files, so the bound is rounding: 1e-10 relative to max(1, |q̈|∞) (the systems have
cond(NᵀMN) ≤ 1e4; 1e4 · ε ≈ 2e-12). Against Pinocchio (another solver, proximal
iterations to 1e-12 accuracy) the issue's bound 1e-8 applies.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from paths import EXAMPLES

import symgen
from symgen import reference as ref
from symgen.loops import LoopClosure, analyse_loops

MECHANISMS = {"four_bar": 1, "five_bar": 2, "four_bar_knee": 3}
STATES = 4
RTOL_YAML = 1e-10
RTOL_PINOCCHIO = 1e-8


def constrained_accelerations(model, q, v, tau):
    """q̈ of the loop-closed model by the null-space method (module docstring)."""
    closure = LoopClosure(model)
    h = np.vstack(closure.jacobians(q))
    gamma = np.concatenate(closure.biases(q, v))
    m = ref.mass_matrix(model, q)
    c = ref.bias_forces(model, q, v)
    _, s, vt = np.linalg.svd(h)
    rank = int(np.sum(s > 1e-10 * s[0]))
    n = vt[rank:].T
    a_p = -np.linalg.pinv(h, rcond=1e-10) @ gamma
    z = np.linalg.solve(n.T @ m @ n, n.T @ (tau - c - m @ a_p))
    return a_p + n @ z


def consistent_states(model, count=STATES, seed=0):
    rng = np.random.default_rng(seed)
    closure = LoopClosure(model)
    states = []
    for _ in range(count):
        q = closure.assemble(0.2 * rng.standard_normal(model.nq))
        h = np.vstack(closure.jacobians(q))
        _, s, vt = np.linalg.svd(h)
        n = vt[int(np.sum(s > 1e-10 * s[0])):].T
        v = n @ rng.standard_normal(n.shape[1])
        states.append((q, v, rng.standard_normal(model.nv)))
    return states


def relative(a, b):
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


@cache
def compiled(path):
    """The compiled constrained_forward_dynamics of the model in ``path``."""
    ks = symgen.generate(symgen.load(path), ["constrained_forward_dynamics"])
    return symgen.compile_kernels(ks, vectorize=None)


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_compiled_constrained_dynamics_of_mjcf_and_yaml_agree(name):
    """The generated kernels of the two readings, each solving its own saddle-point system
    in double: the same 1e-10 bound (module docstring)."""
    yaml = symgen.load(EXAMPLES / f"{name}.yaml")
    mjcf_lib, yaml_lib = compiled(EXAMPLES / f"{name}.xml"), compiled(EXAMPLES / f"{name}.yaml")
    for q, v, tau in consistent_states(yaml):
        got, _ = mjcf_lib.constrained_forward_dynamics(q, v, tau)
        expected, _ = yaml_lib.constrained_forward_dynamics(q, v, tau)
        assert relative(got, expected) < RTOL_YAML
        assert relative(got, constrained_accelerations(yaml, q, v, tau)) < RTOL_YAML


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_mjcf_loop_has_the_yaml_dof_and_dynamics(name):
    mjcf = symgen.load(EXAMPLES / f"{name}.xml")
    yaml = symgen.load(EXAMPLES / f"{name}.yaml")
    assert mjcf.joint_names == yaml.joint_names
    assert analyse_loops(mjcf).dof == analyse_loops(yaml).dof == MECHANISMS[name]
    for q, v, tau in consistent_states(yaml):
        expected = constrained_accelerations(yaml, q, v, tau)
        got = constrained_accelerations(mjcf, q, v, tau)
        assert relative(got, expected) < RTOL_YAML


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_mjcf_loop_agrees_with_pinocchio_constraint_dynamics(name):
    pin = pytest.importorskip("pinocchio")
    from symgen.peers.pinocchio_constraints import constraint_dynamics

    path = EXAMPLES / f"{name}.xml"
    model = symgen.load(path)
    pin_model, constraints = pin.buildModelAndLegacyConstraintsFromMJCF(str(path))
    assert len(constraints) == len(model.loop_joints)
    # Pinocchio 4.1's MJCF reader ignores <option gravity> (its model keeps (0, 0, -9.81));
    # MuJoCo, which defines the format, applies it: give Pinocchio the file's gravity.
    assert np.allclose(pin_model.gravity.linear, (0, 0, -9.81))
    pin_model.gravity = pin.Motion(np.r_[model.gravity, 0.0, 0.0, 0.0])
    lib = compiled(path)
    for q, v, tau in consistent_states(model):
        expected = constraint_dynamics(model, pin_model, list(constraints), q, v, tau)
        assert relative(constrained_accelerations(model, q, v, tau), expected) < RTOL_PINOCCHIO
        got, _ = lib.constrained_forward_dynamics(q, v, tau)
        assert relative(got, expected) < RTOL_PINOCCHIO


COUPLED = """<mujoco model="coupled">
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0" ref="10"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04"/>
      <body name="lower" pos="0 0 -0.4">
        <joint name="elbow" type="hinge" axis="0 1 0" ref="-20"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint joint1="elbow" joint2="shoulder" polycoef="0.1 -2 0 0 0"/>
  </equality>
</mujoco>
"""


def test_joint_equality_couples_like_a_mimic(tmp_path):
    """``<joint joint1 joint2 polycoef="a0 a1 ...">``: q1 − q1₀ = a0 + a1 (q2 − q2₀), the
    coupling of a URDF <mimic multiplier=a1 offset=a0> in symgen's coordinates; checked by
    the reference's M and ID of the coupled model against the uncoupled model's through
    the coupling's map T = [1, a1]ᵀ (M = Tᵀ M_tree T, τ = Tᵀ τ_tree), seed 1."""
    path = tmp_path / "coupled.xml"
    path.write_text(COUPLED)
    coupled = symgen.load(path)
    free = symgen.load(path, couplings=False)
    assert coupled.nv == 1 and free.nv == 2
    [c] = coupled.couplings
    assert (c.joint, c.master, c.ratio, c.offset) == ("elbow", "shoulder", -2.0, 0.1)
    t = np.array([[1.0], [-2.0]])
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, v, a = rng.standard_normal(3)
        q_tree = np.array([q, 0.1 - 2.0 * q])
        np.testing.assert_allclose(ref.mass_matrix(coupled, [q]),
                                   t.T @ ref.mass_matrix(free, q_tree) @ t, rtol=1e-13)
        tau_tree = ref.inverse_dynamics(free, q_tree, t @ [v], t @ [a])
        np.testing.assert_allclose(ref.inverse_dynamics(coupled, [q], [v], [a]),
                                   t.T @ tau_tree, rtol=1e-12, atol=1e-12)
