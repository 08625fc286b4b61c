"""Generalized forces of a model's force elements (springs, dampers, joint actuators) on the
hinge tree, by virtual power (García de Jalón & Bayo 1994, §4.4, eq. 4.102-4.107; the laws
of the natural-coordinate formulation, in joint coordinates):

- a point spring, d = r_b − r_a, L = |d|, u = d/L, ∂L/∂q = uᵀ(J_b − J_a) (the points'
  linear Jacobian columns over the hinges that are not common to both bodies):
  Q = −(k(L − L₀) + c ∂L/∂q·q̇) ∂L/∂q, L₀ None the distance at the zero configuration;
- a joint spring −k(θ − rest) − c θ̇ or an actuator F on a 1-DOF joint, Q = F ∂θ/∂q: on a
  tree joint θ is its coordinate (ratio·q_master + offset when coupled: ∂θ/∂q = ratio on the
  master's DOF); on a loop joint a torque pair ±F a_w (revolute, continuous; a_w its axis in
  the world, θ = atan2(a·½vee(R − Rᵀ), (tr R − 1)/2) with R the rotation of F_C in F_P,
  ∂θ/∂q = a_wᵀ(J_ω,C − J_ω,P)) or a force pair ±F a_w through the origin of F_C (prismatic,
  θ = a·R_Pᵀ(p_C − p_P), ∂θ/∂q = a_wᵀ(J_C − J_P) at that point).

Their potential (:func:`element_potential`, the ``elements`` entry of the ``energy`` kernel):
V = Σ ½k(L − L₀)² (point springs) + Σ ½k(θ − rest)² (joint springs) − Σ F θ (constant
actuators), with L and θ as above, so that Q(q, 0) = −∂V/∂q (the dampers' −c L̇ ∂L/∂q and
−c θ̇ ∂θ/∂q dissipate and have no potential). On a loop joint θ is read with atan2 and
jumps by 2π when the joint passes ±π: so does the potential of a joint spring or actuator
there.

The numpy references are :func:`symgen.reference.forces.element_forces` and
:func:`symgen.reference.energy.element_energy`.
"""

from __future__ import annotations

from collections.abc import Sequence

from symgen.formulations.kinematics import frame_pose, jacobian_columns, world_poses
from symgen.formulations.recursions import accumulate
from symgen.formulations.tree.hinges import (
    Constants,
    CutFrames,
    FrameRef,
    SymbolicTree,
    _joint_coordinates,
    build_tree,
)
from symgen.ir.expr import ZERO, Expr, atan2, esum, sqrt
from symgen.ir.program import ProgramBuilder
from symgen.model import JointType, Model
from symgen.model.elements import JointActuator, JointSpring, PointSpring
from symgen.spatial import Pose, dot, emit_vec, mat_mul, mat_t_vec, mat_vec, number, sub, transpose


def _point(b: ProgramBuilder, tree: SymbolicTree, poses: list[Pose], k: Constants,
           body: str, local: Sequence[object]) -> tuple[int, tuple[Expr, ...]]:
    """(hinge, world position) of the point ``local`` fixed on ``body``."""
    ref = tree.locate(body)
    frame = FrameRef(body, ref.hinge, ref.R, k.vec(local))  # type: ignore[arg-type]
    return ref.hinge, frame_pose(b, poses, frame).p


def _difference_row(b: ProgramBuilder, tree: SymbolicTree, poses: list[Pose],
                    hinge_a: int, hinge_b: int, point: Sequence[Expr],
                    direction: Sequence[Expr], angular: bool) -> list[Expr]:
    """directionᵀ(J_b − J_a) (nv): the linear (or, with ``angular``, angular) Jacobian
    columns of bodies b and a at the world ``point``, over the hinges not common to both."""
    up_a = tree.ancestors(hinge_a) if hinge_a >= 0 else []
    up_b = tree.ancestors(hinge_b) if hinge_b >= 0 else []
    row: list[Expr] = [ZERO] * tree.nv
    for sign, chain in ((-1.0, [h for h in up_a if h not in up_b]),
                        (1.0, [h for h in up_b if h not in up_a])):
        for d, w, lin in jacobian_columns(b, tree, poses, chain, point):
            value = b.emit(sign * dot(direction, w if angular else lin))
            row[d] = accumulate(b, row[d], value)
    return row


def _rest_length(b: ProgramBuilder, model: Model, params: Sequence[Expr], snap: float,
                 spring: PointSpring) -> Expr:
    """L₀: the spring's own, else the distance of its points at q = neutral."""
    if spring.rest_length is not None:
        return Constants(b, model, params, snap).scalar(spring.rest_length)
    zero = [number(x) for x in model.neutral_configuration]
    tree = build_tree(model, b, zero, params, snap=snap)
    poses = world_poses(b, tree)
    k = Constants(b, model, params, snap)
    _, ra = _point(b, tree, poses, k, spring.body_a, spring.point_a)
    _, rb = _point(b, tree, poses, k, spring.body_b, spring.point_b)
    d = emit_vec(b, sub(rb, ra))
    return b.emit(sqrt(dot(d, d)))


def _loop_joint(b: ProgramBuilder, tree: SymbolicTree, poses: list[Pose], cut: CutFrames
                ) -> tuple[Expr, list[Expr]]:
    """(θ, ∂θ/∂q) of a 1-DOF loop joint (module documentation)."""
    fp, fc = frame_pose(b, poses, cut.parent), frame_pose(b, poses, cut.child)
    a_world = emit_vec(b, mat_vec(fp.R, cut.axis))
    turning = cut.type in (JointType.REVOLUTE, JointType.CONTINUOUS)
    row = _difference_row(b, tree, poses, cut.parent.hinge, cut.child.hinge, fc.p, a_world,
                          angular=turning)
    if turning:
        r = mat_mul(transpose(fp.R), fc.R)
        axial = [0.5 * (r[2][1] - r[1][2]), 0.5 * (r[0][2] - r[2][0]), 0.5 * (r[1][0] - r[0][1])]
        theta = b.emit(atan2(b.emit(dot(cut.axis, axial)),
                             b.emit(0.5 * (r[0][0] + r[1][1] + r[2][2]) - 0.5)))
    else:
        theta = b.emit(dot(cut.axis, mat_t_vec(fp.R, sub(fc.p, fp.p))))
    return theta, row


def _joint_value(b: ProgramBuilder, tree: SymbolicTree, poses: list[Pose], k: Constants,
                 q: Sequence[Expr], name: str) -> tuple[Expr, list[Expr]]:
    """(θ, ∂θ/∂q) of the 1-DOF tree or loop joint ``name`` (module documentation)."""
    model = tree.model
    joint = next((j for j in model.joints if j.name == name), None)
    if joint is None:
        return _loop_joint(b, tree, poses, next(c for c in tree.cuts if c.name == name))
    qj, dofs, ratio = _joint_coordinates(b, k, model, joint, q)
    grad = [ZERO] * tree.nv
    grad[dofs[0]] = ratio if ratio is not None else number(1.0)
    return qj[0], grad


def element_potential(b: ProgramBuilder, tree: SymbolicTree, q: Sequence[Expr],
                      params: Sequence[Expr], snap: float) -> Expr:
    """V(q) of the model's force elements (module documentation): ½k(L − L₀)² per point
    spring, ½k(θ − rest)² per joint spring, −F θ per actuator; 0 when it has none."""
    model = tree.model
    if not model.force_elements:
        return ZERO
    k = Constants(b, model, params, snap)
    poses = world_poses(b, tree)
    terms: list[Expr] = []
    for e in model.force_elements:
        if isinstance(e, PointSpring):
            _, ra = _point(b, tree, poses, k, e.body_a, e.point_a)
            _, rb = _point(b, tree, poses, k, e.body_b, e.point_b)
            d = emit_vec(b, sub(rb, ra))
            stretch = b.emit(sqrt(dot(d, d)) - _rest_length(b, model, params, snap, e))
            terms.append(b.emit(0.5 * k.scalar(e.stiffness) * stretch * stretch))
            continue
        theta, _ = _joint_value(b, tree, poses, k, q, e.joint)
        if isinstance(e, JointSpring):
            stretch = b.emit(theta - k.scalar(e.rest))
            terms.append(b.emit(0.5 * k.scalar(e.stiffness) * stretch * stretch))
        else:
            assert isinstance(e, JointActuator)
            terms.append(b.emit(-k.scalar(e.force) * theta))
    return b.emit(esum(terms))


def element_forces(b: ProgramBuilder, tree: SymbolicTree, q: Sequence[Expr],
                   v: Sequence[Expr], params: Sequence[Expr], snap: float) -> list[Expr] | None:
    """Q(q, q̇) of the model's force elements (nv expressions), None when it has none."""
    model = tree.model
    if not model.force_elements:
        return None
    k = Constants(b, model, params, snap)
    poses = world_poses(b, tree)
    total: list[Expr] = [ZERO] * tree.nv

    def rate(row: Sequence[Expr]) -> Expr:
        return esum([x * vd for x, vd in zip(row, v, strict=True) if x is not ZERO])

    for e in model.force_elements:
        if isinstance(e, PointSpring):
            ha, ra = _point(b, tree, poses, k, e.body_a, e.point_a)
            hb, rb = _point(b, tree, poses, k, e.body_b, e.point_b)
            d = emit_vec(b, sub(rb, ra))
            length = b.emit(sqrt(dot(d, d)))
            u = emit_vec(b, [x / length for x in d])
            grad = _difference_row(b, tree, poses, ha, hb, rb, u, angular=False)
            # the material point of body a at r_b moves like r_a plus ω_a × d, which is
            # normal to u: uᵀJ_a is the same at r_a and r_b
            force = b.emit(-(k.scalar(e.stiffness)
                             * (length - _rest_length(b, model, params, snap, e))
                             + k.scalar(e.damping) * rate(grad)))
        else:
            theta, grad = _joint_value(b, tree, poses, k, q, e.joint)
            if isinstance(e, JointSpring):
                force = b.emit(-(k.scalar(e.stiffness) * (theta - k.scalar(e.rest))
                                 + k.scalar(e.damping) * rate(grad)))
            else:
                assert isinstance(e, JointActuator)
                force = k.scalar(e.force)
        total = [t if g is ZERO else accumulate(b, t, b.emit(force * g))
                 for t, g in zip(total, grad, strict=True)]
    return total


__all__ = ["element_forces", "element_potential"]
