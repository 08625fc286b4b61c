"""The tree catalogue, first family: kinematics and the dynamics of the spanning tree
(Jain's spatial operator algebra on the hinge tree), registered in :mod:`symgen.registry` in
catalogue order. A derivation here is one line naming the recursion of
:mod:`..recursions`, :mod:`..articulated`, :mod:`..ltdl`, :mod:`..kinematics` or
:mod:`..integrate` that computes the kernel's outputs, wrapped by
:func:`.derivation.tree_program`. Their numpy references and Pinocchio counterparts are
verify's (:mod:`symgen.apps.verify.reference_queries`,
:mod:`symgen.apps.verify.pinocchio_queries`).
"""

from __future__ import annotations

from symgen.errors import SymgenError
from symgen.formulations import articulated, kinematics, ltdl, recursions
from symgen.formulations.integrate import configuration_rates, integrate
from symgen.formulations.tree.context import FORMULATION
from symgen.formulations.tree.derivation import (
    ACC_DOC,
    TAU_DOC,
    element_forces_of,
    flat,
    nv_nv_shape,
    nv_shape,
    one,
    potential_of,
    tree_of,
    tree_program,
)
from symgen.registry import Kernel, register

register(Kernel(
    "forward_kinematics", FORMULATION,
    "world pose [R | p] (3×4, row-major) of every body and named frame",
    ("q",),
    one("poses", lambda c: (len(c.pose_names), 3, 4),
        "world pose [R | p] (3×4, row-major) of every body, then every named frame"),
    tree_program(lambda d: kinematics.forward_kinematics(d.b, tree_of(d), d.pose_names)),
))

register(Kernel(
    "frame_jacobian", FORMULATION, "6×nv Jacobian [angular; linear] of a frame", ("q",),
    one("J", lambda c: (6, c.model.nv), "Jacobian, rows [angular; linear] (6 × nv, row-major)"),
    tree_program(lambda d: flat(kinematics.frame_jacobian(d.b, tree_of(d), d.frame_name,
                                                          d.reference))),
    per_frame=True,
))

register(Kernel(
    "frame_jacobian_dot_v", FORMULATION,
    "J̇(q, v)·v: classical acceleration [ω̇; p̈] of a frame at zero joint acceleration",
    ("q", "v"),
    one("Jdot_v", lambda c: (6,),
        "J̇(q, v)·v: classical acceleration [ω̇; p̈] at zero joint acceleration"),
    tree_program(lambda d: kinematics.frame_jacobian_dot_v(d.b, tree_of(d), d.get("v"),
                                                           d.frame_name, d.reference)),
    per_frame=True,
))

register(Kernel(
    "inverse_dynamics", FORMULATION,
    "joint forces M(q) a + C(q, v) v + g(q) − Σ Jᵀ f_ext (Newton-Euler)", ("q", "v", "a"),
    one("tau", nv_shape, TAU_DOC),
    tree_program(lambda d: recursions.inverse_dynamics(d.b, tree_of(d), d.get("v"), d.get("a"),
                                                       d.get("f_ext"))),
    takes_forces=True,
    without_elements=True,
    # depth-first from 1,000 assignments (gcc 12 -O3, user builds): G1 29-DOF (1,600
    # assignments) 29 %, Talos (1,612) 21 %, iCub (1,883) 17 % faster; below, the
    # formulation's order: Go1 (640) 14 %, ANYmal C (730) 9 %, Solo12 (649) 8 % faster than
    # scheduled, UR5, Panda and Baxter (855) within the noise (±3 %)
    schedule=True,
    schedule_min=1000,
))

register(Kernel(
    "mass_matrix", FORMULATION, "joint-space mass matrix M(q), nv×nv", ("q",),
    one("M", nv_nv_shape, "joint-space mass matrix (nv × nv, row-major)"),
    tree_program(lambda d: flat(recursions.mass_matrix(d.b, tree_of(d)))),
))

register(Kernel(
    "bias_forces", FORMULATION, "C(q, v) v + g(q)", ("q", "v"),
    one("tau", nv_shape, TAU_DOC),
    tree_program(lambda d: recursions.inverse_dynamics(d.b, tree_of(d), d.get("v"), None)),
    without_elements=True,
))

register(Kernel(
    "gravity_forces", FORMULATION, "g(q)", ("q",),
    one("tau", nv_shape, TAU_DOC),
    tree_program(lambda d: recursions.inverse_dynamics(d.b, tree_of(d), None, None)),
    without_elements=True,
))

register(Kernel(
    "element_forces", FORMULATION,
    "generalized forces Q(q, v) of the model's springs, dampers and actuators",
    ("q", "v"),
    one("Q", nv_shape, "generalized forces of the force elements (nv), N and N·m: the Q "
        "constrained_forward_dynamics adds to tau (zeros without force elements)"),
    tree_program(element_forces_of),
    default=False,
    doc="By virtual power (García de Jalón & Bayo 1994, eq. 4.102-4.107): point springs "
    "−(k(L − L₀) + c L̇) ∂L/∂q, joint springs −(k(θ − rest) + c θ̇) ∂θ/∂q, actuators F ∂θ/∂q "
    "(model-format.md §5); tree and loop joints, coupled joints through their master. "
    "Zeros for a model without force elements, so that generic code need not branch.",
))

register(Kernel(
    "forward_dynamics", FORMULATION,
    "joint accelerations M⁻¹(τ − C v − g) by the cheaper of the two methods",
    ("q", "v", "tau"), one("a", nv_shape, ACC_DOC),
    tree_program(lambda d: articulated.forward_dynamics(d.b, tree_of(d), d.get("v"),
                                                        d.get("tau"), d.get("f_ext"))),
    comparison="solve", takes_forces=True,
    variants=("forward_dynamics_aba", "forward_dynamics_ltdl"),
    loop_variants=("forward_dynamics_embedded", "forward_dynamics_multipliers"),
    doc="For a model with loop joints it closes the loops: the cheaper of "
    "forward_dynamics_embedded and forward_dynamics_multipliers (docs/loops.md).",
    without_elements=True,
))

register(Kernel(
    "forward_dynamics_aba", FORMULATION,
    "forward dynamics by the O(N) articulated-body (innovations) recursion",
    ("q", "v", "tau"), one("a", nv_shape, ACC_DOC),
    tree_program(lambda d: articulated.forward_dynamics(d.b, tree_of(d), d.get("v"),
                                                        d.get("tau"), d.get("f_ext"))),
    comparison="solve", takes_forces=True, default=False,
    without_elements=True,
))

register(Kernel(
    "forward_dynamics_ltdl", FORMULATION,
    "forward dynamics by the mass matrix and a sparse LᵀDL solve",
    ("q", "v", "tau"), one("a", nv_shape, ACC_DOC),
    tree_program(lambda d: ltdl.forward_dynamics(d.b, tree_of(d), d.get("v"), d.get("tau"),
                                                 d.get("f_ext"))),
    comparison="solve", takes_forces=True, default=False,
    without_elements=True,
))

register(Kernel(
    "mass_matrix_inverse", FORMULATION,
    "M(q)⁻¹ from the innovations factorization, without inverting M", ("q",),
    one("Minv", nv_nv_shape, "inverse of the mass matrix (nv × nv, row-major)"),
    tree_program(lambda d: flat(_minv_module(d.method, tree_of(d).coupled)
                                 .mass_matrix_inverse(d.b, tree_of(d)))),
    comparison="solve", methods=("ltdl", "articulated"),
    doc="Two derivations, the cheaper kept: L⁻¹D⁻¹L⁻ᵀ from the sparse LᵀDL factor of M, "
    "one triangle (the only one for coupled joints), or the articulated-body factorization.",
))


def _minv_module(method: str, coupled: bool):
    """The module whose ``mass_matrix_inverse`` derives M⁻¹ by ``method`` (``""``, a
    program used inside another derivation: the articulated-body one where it applies)."""
    if method == "articulated" and coupled:
        raise SymgenError("the articulated-body factorization needs one hinge per DOF")
    return ltdl if method == "ltdl" or coupled else articulated

register(Kernel(
    "energy", FORMULATION, "[kinetic, potential, elements] energy, J", ("q", "v"),
    one("energy", lambda c: (3,),
        "[kinetic, potential (gravity), elements (the force elements' potential)] energy, J"),
    tree_program(lambda d: [*kinematics.energy(d.b, tree_of(d), d.get("v")), potential_of(d)]),
    doc="elements: ½k(L − L₀)² per point spring, ½k(θ − rest)² per joint spring, −F θ per "
    "actuator (θ as element_forces reads it; 0 without force elements); dampers dissipate "
    "and have none. The sum of the three is the mechanical energy, constant in a motion "
    "without dampers or joint torques.",
))

register(Kernel(
    "integrate", FORMULATION, "q ⊕ v·dt on the joint manifolds", ("q", "v", "dt"),
    one("q_next", lambda c: (c.model.nq,), "configuration q ⊕ v·dt (nq)"),
    tree_program(lambda d: integrate(d.b, d.model, d.inputs["q"], d.inputs["v"],
                                     d.inputs["dt"][0])),
    uses_tree=False,
))

register(Kernel(
    "configuration_rates", FORMULATION,
    "q̇ = rate(q, v), the right-hand side of q for standard ODE solvers", ("q", "v"),
    one("qdot", lambda c: (c.model.nq,),
        "configuration rate q̇ (nq): v for vector joints, ½ q ⊗ (ω, 0) for a quaternion "
        "(x, y, z, w), R(q) v for a free joint's position"),
    tree_program(lambda d: configuration_rates(d.b, d.model, d.inputs["q"], d.inputs["v"])),
    uses_tree=False, default=False,
    doc="The derivative of integrate(q, v, t) at t = 0 (docs/conventions.md, "
    "'Configuration integration'): with forward_dynamics, ẋ = (q̇, v̇) for scipy's "
    "solve_ivp and other integrators of vectors; the quaternions then drift off unit norm "
    "by the solver's error, so normalise them between steps (or at the end). Not in the "
    "default set (name it).",
))
