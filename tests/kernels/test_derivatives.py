"""Derivative kernels (inverse_dynamics_derivatives, forward_dynamics_derivatives: the
kernels' own programs differentiated in forward mode, symgen.ir.autodiff), compiled, against

- central finite differences of the compiled inverse and forward dynamics on random trees
  with every joint type, the configuration moved on its manifold by the compiled
  ``integrate`` (q ⊕ ±h eᵢ): step h = 1e-6, so truncation h²|f'''| and rounding ε|f|/h
  leave ~1e-10 of unit-scale values; bound 1e-6 relative to max(1, |J|∞), the forward
  dynamics' differences amplified by cond(M) (≤ 4e2 on these trees: ε·cond/h ≈ 4e-8);
- Pinocchio's analytical derivatives (computeRNEADerivatives, computeABADerivatives,
  Carpentier & Mansard 2018) on the Panda (fingers as independent joints: Pinocchio's ABA
  rejects mimic joints), the UR5, Solo12 (floating base) and Talos (floating base; slow
  tier): bound 1e-9 relative (the same sums in another order, ~nv ε each, and the forward
  dynamics' M⁻¹ with cond(M) ≤ 1e5 here);
- their own identities: ∂q̈/∂τ = M⁻¹ and ∂q̈/∂x = −M⁻¹ ∂τ/∂x at q̈ = FD(q, v, τ).

Seeds: trees 0-5 (every joint type; 1-5 and the robots but the UR5 in the slow tier),
states seed 3.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from random_models import build, random_spec, random_state

import symgen
from symgen.formulations.tree.catalogue_derivatives import (
    DERIVATIVE_FALLBACKS,
    DERIVATIVE_METHODS,
)
from symgen.io.robots import robot_urdf
from symgen.ir.printer import evaluate

pin = pytest.importorskip("pinocchio")

from symgen.peers.pinocchio import Bridge, pin_model_from_symgen  # noqa: E402

KERNELS = ["inverse_dynamics_derivatives", "forward_dynamics_derivatives",
           "inverse_dynamics", "forward_dynamics", "integrate", "mass_matrix_inverse"]
STEP = 1e-6
FD_TOLERANCE = 1e-6
PIN_TOLERANCE = 1e-9


def _rel(a, b) -> float:
    b = np.asarray(b)
    return float(np.max(np.abs(np.asarray(a) - b)) / max(1.0, float(np.max(np.abs(b)))))


@cache
def tree(seed: int):
    model = build(random_spec(seed))
    return model, symgen.compile_kernels(symgen.generate(model, KERNELS), vectorize=None)


def differences(lib, model, fn, q, v):
    """(∂f/∂q on the tangent space, ∂f/∂v) by central differences of compiled kernels."""
    dq, dv = [], []
    for e in np.eye(model.nv):
        plus, minus = lib.integrate(q, e, [STEP]), lib.integrate(q, e, [-STEP])
        dq.append((fn(plus, v) - fn(minus, v)) / (2 * STEP))
        dv.append((fn(q, v + STEP * e) - fn(q, v - STEP * e)) / (2 * STEP))
    return np.array(dq).T, np.array(dv).T


#: One tree in the default tier (the derivative programs take ~20 s each to compile); the
#: six, which cover every joint type, in the slow tier.
TREE_SEEDS = [0, *(pytest.param(s, marks=pytest.mark.slow) for s in range(1, 6))]


@pytest.mark.parametrize("seed", TREE_SEEDS)
def test_random_tree_derivatives_match_finite_differences(seed):
    model, lib = tree(seed)
    rng = np.random.default_rng(3)
    for _ in range(2):
        q, v, a, tau = random_state(model, rng)
        dtau_dq, dtau_dv = lib.inverse_dynamics_derivatives(q, v, a)
        fq, fv = differences(lib, model, lambda q_, v_, a=a: lib.inverse_dynamics(q_, v_, a),
                             q, v)
        assert _rel(dtau_dq, fq) <= FD_TOLERANCE and _rel(dtau_dv, fv) <= FD_TOLERANCE
        dqdd_dq, dqdd_dv, dqdd_dtau = lib.forward_dynamics_derivatives(q, v, tau)
        fq, fv = differences(lib, model,
                             lambda q_, v_, tau=tau: lib.forward_dynamics(q_, v_, tau), q, v)
        assert _rel(dqdd_dq, fq) <= FD_TOLERANCE and _rel(dqdd_dv, fv) <= FD_TOLERANCE
        # ∂q̈/∂τ = M⁻¹, and the forward derivatives are −M⁻¹ ∂τ at q̈ = FD(q, v, τ)
        minv = lib.mass_matrix_inverse(q)
        assert _rel(dqdd_dtau, minv) <= 1e-10
        qdd = lib.forward_dynamics(q, v, tau)
        d_q, d_v = lib.inverse_dynamics_derivatives(q, v, qdd)
        assert _rel(dqdd_dq, -minv @ d_q) <= 1e-9 and _rel(dqdd_dv, -minv @ d_v) <= 1e-9


ROBOTS = [("ur5", False), *(pytest.param(name, floating, marks=pytest.mark.slow)
                            for name, floating in (("panda", False), ("solo12", True),
                                                   ("talos", True)))]


@cache
def robot(name: str, floating: bool):
    model = symgen.load(robot_urdf(name), floating_base=floating, couplings=False)
    lib = symgen.compile_kernels(symgen.generate(model, KERNELS[:2]), vectorize=None)
    return model, lib, Bridge(model, pin_model_from_symgen(model))


@pytest.mark.parametrize(("name", "floating"), ROBOTS)
def test_robot_derivatives_match_pinocchio(name, floating):
    model, lib, br = robot(name, floating)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v, a, tau = random_state(model, rng)
        qp, vp = br.q_to_pin(q), br.v_to_pin(v)
        dq, dv, _ = pin.computeRNEADerivatives(br.pin_model, br.data, qp, vp, br.v_to_pin(a))
        got = lib.inverse_dynamics_derivatives(q, v, a)
        assert _rel(got[0], br.matrix_from_pin(dq)) <= PIN_TOLERANCE
        assert _rel(got[1], br.matrix_from_pin(dv)) <= PIN_TOLERANCE
        dq, dv, dtau = pin.computeABADerivatives(br.pin_model, br.data, qp, vp,
                                                 br.v_to_pin(tau))
        dtau = np.triu(dtau) + np.triu(dtau, 1).T
        got = lib.forward_dynamics_derivatives(q, v, tau)
        for ours, theirs in zip(got, (dq, dv, dtau), strict=True):
            assert _rel(ours, br.matrix_from_pin(theirs)) <= PIN_TOLERANCE


@pytest.mark.parametrize("method", ["forward", "reverse", "analytical"])
def test_every_inverse_derivative_method_matches_pinocchio(method):
    """Each derivation of inverse_dynamics_derivatives (the analytical recursions; forward
    and reverse mode where they decline), its program evaluated in Python, against Pinocchio
    on the UR5."""
    from symgen.formulations.tree.context import TreeContext, TreeTarget
    from symgen.registry import get

    model = symgen.load(robot_urdf("ur5"), couplings=False)
    spec = get("inverse_dynamics_derivatives")
    program = spec.derive(TreeContext(model), TreeTarget(spec.name, method=method), spec)
    br = Bridge(model, pin_model_from_symgen(model))
    q, v, a, _ = random_state(model, np.random.default_rng(3))
    got = evaluate(program, q=q, v=v, a=a)
    dq, dv, _ = pin.computeRNEADerivatives(br.pin_model, br.data, br.q_to_pin(q),
                                           br.v_to_pin(v), br.v_to_pin(a))
    assert _rel(got["dtau_dq"], br.matrix_from_pin(dq)) <= PIN_TOLERANCE
    assert _rel(got["dtau_dv"], br.matrix_from_pin(dv)) <= PIN_TOLERANCE


@pytest.mark.parametrize("method", DERIVATIVE_METHODS + DERIVATIVE_FALLBACKS)
def test_every_forward_derivative_method_matches_pinocchio(method):
    """Each derivation of forward_dynamics_derivatives (analytical, and the fallbacks), its
    program evaluated in Python, against Pinocchio's computeABADerivatives on the UR5."""
    from symgen.formulations.tree.context import TreeContext, TreeTarget
    from symgen.registry import get

    model = symgen.load(robot_urdf("ur5"), couplings=False)
    spec = get("forward_dynamics_derivatives")
    program = spec.derive(TreeContext(model), TreeTarget(spec.name, method=method), spec)
    br = Bridge(model, pin_model_from_symgen(model))
    rng = np.random.default_rng(3)
    q, v, _, tau = random_state(model, rng)
    got = evaluate(program, q=q, v=v, tau=tau)
    dq, dv, dtau = pin.computeABADerivatives(br.pin_model, br.data, br.q_to_pin(q),
                                             br.v_to_pin(v), br.v_to_pin(tau))
    dtau = np.triu(dtau) + np.triu(dtau, 1).T
    for key, theirs in zip(("dqdd_dq", "dqdd_dv", "dqdd_dtau"), (dq, dv, dtau), strict=True):
        assert _rel(got[key], br.matrix_from_pin(theirs)) <= PIN_TOLERANCE


@pytest.mark.parametrize("reference", ["local_world_aligned", "local", "world"])
def test_frame_jacobian_time_derivative_matches_pinocchio(reference):
    """J̇ of the UR5's default frames (the frame_jacobian program differentiated along
    δ = v) against Pinocchio's getFrameJacobianTimeVariation in the same reference (bound
    1e-9), and, world-aligned, J̇ v = the classical acceleration at a = 0
    (frame_jacobian_dot_v)."""
    model = symgen.load(robot_urdf("ur5"), couplings=False)
    options = symgen.Options(jacobian_reference=reference)
    ks = symgen.generate(model, ["frame_jacobian_time_derivative", "frame_jacobian_dot_v"],
                         options)
    lib = symgen.compile_kernels(ks, vectorize=None)
    br = Bridge(model, pin_model_from_symgen(model))
    rf = {"local_world_aligned": pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
          "local": pin.ReferenceFrame.LOCAL, "world": pin.ReferenceFrame.WORLD}[reference]
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v, _, _ = random_state(model, rng)
        pin.computeJointJacobiansTimeVariation(br.pin_model, br.data, br.q_to_pin(q),
                                               br.v_to_pin(v))
        pin.updateFramePlacements(br.pin_model, br.data)
        for frame in ks.context.frames:
            theirs = pin.getFrameJacobianTimeVariation(br.pin_model, br.data,
                                                       br.frame_id(frame), rf)
            ours = getattr(lib, f"frame_jacobian_time_derivative_{frame}")(q, v)
            assert _rel(ours, br.jacobian_from_pin(theirs)) <= PIN_TOLERANCE
            if reference == "local_world_aligned":
                classical = getattr(lib, f"frame_jacobian_dot_v_{frame}")(q, v)
                assert _rel(ours @ v, classical) <= 1e-12
