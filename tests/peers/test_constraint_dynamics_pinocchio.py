"""Compiled ``constrained_forward_dynamics`` against Pinocchio's ``constraintDynamics`` with
the loop joints as rigid constraints (symgen.peers.pinocchio_constraints).

States: q closed by ``LoopClosure(model).assemble`` from the zero configuration moved by
0.2 N(0, 1) per velocity coordinate, v = N x with N an orthonormal basis of the null space
of the full loop Jacobian G (numpy SVD) and x, τ ~ N(0, 1); seed 0. The accelerations are
then unique, whatever the redundancy of the constraint rows on either side.

Tolerances, from the error analysis of the two solves:

- q̈: both sides solve the saddle-point system K [q̈; λ] = b, K = [[M, −Gᵀ], [G, 0]] (G
  on independent rows), by backward-stable factorisations (symgen: LᵀDL of M and LDLᵀ of
  the Schur complement; Pinocchio: its contact Cholesky with proximal refinement). The
  relative forward error is ≲ ε cond(K) g, g = max(1, |q̈₀|∞) / max(1, |q̈|∞) the
  cancellation of the range-space route q̈ = q̈₀ + M⁻¹Gᵀλ, q̈₀ = M⁻¹(τ − C). The test
  computes this estimate at every state and requires it ≤ ESTIMATE_MAX = 2e-10 (at most
  1.1e-10 here, on the knee: cond(K) ≤ 3.4e2, g ≤ 1.5e3, its 50 g links having tiny
  inertia; the Delta: 2.5e2, 6.8e2; RSSR: 5.6e4, 1); the bound RTOL = 1e-9 (of
  max(1, |q̈|∞)) leaves a factor 5 over it for the constants of the factorisations.
  Pinocchio's own constraint residual is checked to 1e-11 by ``constraint_dynamics``.
- G q̈ + Ġ q̇ = 0: on every raw row of the numeric loop closure (Müller 2014, eq. 20-23,
  ``LoopClosure.jacobians``/``biases``, no generated code), relative to
  max(1, |H|∞ |q̈|∞, |γ|∞). A residual is a backward error, without the cond(K) factor:
  ≲ ε g ≤ 4e-13 here (measured ≤ 3e-13); bound 1e-10 (for H from independent code, whose
  rounding is of the same order).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from paths import EXAMPLES

pin = pytest.importorskip("pinocchio")

import symgen  # noqa: E402
from symgen import reference as ref  # noqa: E402
from symgen.io.builder import ModelBuilder  # noqa: E402
from symgen.loops import LoopClosure, analyse_loops  # noqa: E402
from symgen.peers.pinocchio import Bridge, pin_model_from_symgen  # noqa: E402
from symgen.peers.pinocchio_constraints import (  # noqa: E402
    AXIS_OFFSET,
    constraint_dynamics,
    loop_constraint_models,
    pin_model_with_loops,
)
from symgen.reference.integrate import integrate  # noqa: E402

RTOL = 1e-9
RESIDUAL_RTOL = 1e-10
ESTIMATE_MAX = 2e-10
EPS = np.finfo(float).eps
STATES = 4
KERNELS = ["constrained_forward_dynamics", "loop_jacobian"]


def welded_chain():
    """A planar chain of four links from the ground, the last welded to the ground by a
    fixed loop joint: a four-bar (ground pivots (0, 0) and (1.2, 0)), 1 DOF. (symgen's loop
    analysis does not take fixed loop joints yet: only the constraint model is checked.)"""
    b = ModelBuilder("welded_chain", root="ground", gravity=(0, -9.81, 0), plane="xy")
    points = [(0.0, 0.0), (0.0, 1.0), (1.0, 1.1), (1.2, 0.0)]
    parent, origin = "ground", (0.0, 0.0)
    for k, p in enumerate(points):
        end = points[k + 1] if k + 1 < len(points) else (1.7, 0.0)
        b.body(f"l{k}", mass=1.0, com=((end[0] - p[0]) / 2, (end[1] - p[1]) / 2, 0.0),
               inertia=(0.05, 0.05, 0.1))
        b.joint(f"r{k}", "revolute", parent, f"l{k}", xyz=(p[0] - origin[0], p[1] - origin[1], 0))
        parent, origin = f"l{k}", p
    b.loop_joint("weld", "fixed", "l3", "ground", child_xyz=(1.2, 0.0, 0.0))
    return b.build()


MODELS = {
    "five_bar": lambda: symgen.load(EXAMPLES / "five_bar.yaml"),
    "four_bar_knee": lambda: symgen.load(EXAMPLES / "four_bar_knee.yaml"),
    "delta_robot": lambda: symgen.load(EXAMPLES / "delta_robot.yaml"),
    "rssr": lambda: symgen.load(EXAMPLES / "rssr.yaml"),  # a spherical loop joint
}


@cache
def built(name: str):
    model = MODELS[name]()
    lib = symgen.compile_kernels(symgen.generate(model, KERNELS), vectorize=None)
    return model, lib


def states(model, lib, seed: int = 0):
    closure = LoopClosure(model)
    rank = analyse_loops(model).rank
    rng = np.random.default_rng(seed)
    for _ in range(STATES):
        q = closure.assemble(integrate(model, np.zeros(model.nq),
                                       0.2 * rng.normal(size=model.nv), 1.0))
        assert np.max(np.abs(closure.residual(q))) <= 1e-10
        _, sigma, vt = np.linalg.svd(lib.loop_jacobian(q))
        assert int(np.sum(sigma > 1e-8 * sigma[0])) == rank  # away from singular positions
        basis = vt[rank:].T
        yield q, basis @ rng.normal(size=basis.shape[1]), rng.normal(size=model.nv)


#: The delta's kernels take ~20 s to derive cold: checked in the slow tier (CI runs both).
SLOW = {"delta_robot"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in sorted(MODELS)])
def test_accelerations_match_pinocchio_constraint_dynamics(name):
    model, lib = built(name)
    pin_model, constraints = pin_model_with_loops(model)
    closure = LoopClosure(model)
    rows = list(analyse_loops(model).rows)
    worst = worst_estimate = worst_residual = 0.0
    for q, v, tau in states(model, lib):
        a, _ = lib.constrained_forward_dynamics(q, v, tau)
        a_pin = constraint_dynamics(model, pin_model, constraints, q, v, tau)
        # the first-order error estimate that RTOL is derived from (module docstring)
        m = ref.mass_matrix(model, q)
        g = lib.loop_jacobian(q)[rows]
        kkt = np.block([[m, -g.T], [g, np.zeros((len(rows), len(rows)))]])
        a0 = np.linalg.solve(m, tau - ref.bias_forces(model, q, v))
        growth = max(1.0, np.max(np.abs(a0))) / max(1.0, np.max(np.abs(a)))
        estimate = EPS * np.linalg.cond(kkt) * growth
        worst_estimate = max(worst_estimate, estimate)
        assert estimate <= ESTIMATE_MAX
        scale = max(1.0, float(np.max(np.abs(a))))
        error = float(np.max(np.abs(a - a_pin))) / scale
        worst = max(worst, error)
        assert error <= RTOL, f"{name}: relative error {error:.2e}"
        # every raw row of the relative acceleration at the cut joints vanishes
        h = np.vstack(closure.jacobians(q))
        gamma = np.concatenate(closure.biases(q, v))
        res_scale = max(1.0, np.max(np.abs(h)) * np.max(np.abs(a)), np.max(np.abs(gamma)))
        residual = float(np.max(np.abs(h @ a + gamma))) / res_scale
        worst_residual = max(worst_residual, residual)
        assert residual <= RESIDUAL_RTOL, f"{name}: constraint residual {residual:.2e}"
    print(f"{name}: max relative error vs pinocchio {worst:.2e} (estimate "
          f"{worst_estimate:.1e}), max constraint residual {worst_residual:.1e}")


def test_constraint_models_follow_the_loop_joint_types():
    counts = {"five_bar": ["CONTACT_3D"] * 2, "rssr": ["CONTACT_3D"],
              "delta_robot": ["CONTACT_3D"] * 10}
    for name, kinds in counts.items():
        _, constraints = pin_model_with_loops(MODELS[name]())
        assert [c.type.name for c in constraints] == kinds
    # a fixed loop joint: one 6-D constraint whose two frames coincide at the (closed) q = 0
    pin_model, constraints = pin_model_with_loops(welded_chain())
    assert [c.type.name for c in constraints] == ["CONTACT_6D"]
    data = pin_model.createData()
    pin.forwardKinematics(pin_model, data, pin.neutral(pin_model))
    (c,) = constraints
    x1 = data.oMi[c.joint1_id] * c.joint1_placement
    x2 = data.oMi[c.joint2_id] * c.joint2_placement
    assert np.linalg.norm(pin.log6(x1.actInv(x2)).vector) <= 1e-12
    assert np.linalg.norm(x1.translation - [1.2, 0, 0]) <= 1e-12
    # the revolute's second point lies AXIS_OFFSET along the axis, on both sides
    model = MODELS["five_bar"]()
    pin_model, (first, second) = pin_model_with_loops(model)
    for p1, p2 in ((first.joint1_placement, second.joint1_placement),
                   (first.joint2_placement, second.joint2_placement)):
        axis = p1.rotation @ np.array(model.loop_joints[0].axis)
        assert np.allclose(p2.translation - p1.translation, AXIS_OFFSET * axis, atol=1e-15)
    # at an assembled configuration both points of each constraint coincide
    data = pin_model.createData()
    q = LoopClosure(model).assemble(np.array([0.1, -0.2, 0.05, 0.1]))
    pin.forwardKinematics(pin_model, data, Bridge(model, pin_model).q_to_pin(q))
    for c in (first, second):
        x1 = data.oMi[c.joint1_id] * c.joint1_placement
        x2 = data.oMi[c.joint2_id] * c.joint2_placement
        assert np.linalg.norm(x1.translation - x2.translation) <= 1e-10


def test_unsupported_loop_joint_type_is_a_one_line_error():
    b = ModelBuilder("slider_loop", root="ground")
    b.body("a", mass=1.0, inertia=(0.1, 0.1, 0.1))
    b.body("c", mass=1.0, inertia=(0.1, 0.1, 0.1))
    b.joint("ja", "revolute", "ground", "a")
    b.joint("jc", "prismatic", "ground", "c", axis=(1, 0, 0))
    b.loop_joint("slide", "prismatic", "a", "c", axis=(1, 0, 0))
    model = b.build()
    with pytest.raises(ValueError, match=r"^loop joint 'slide': no Pinocchio constraint[^\n]*$"):
        loop_constraint_models(model, pin_model_from_symgen(model))
