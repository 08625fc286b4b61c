"""Generalized forces of a model's force elements (springs, dampers, joint actuators) in
joint coordinates, by virtual power (García de Jalón & Bayo 1994, §4.4; the same laws as
the natural-coordinate formulation):

- a point spring between point a on body A and point b on body B, d = r_b − r_a, L = |d|,
  u = d / L: tension T = k(L − L₀) + c L̇ with L̇ = uᵀ(ṙ_b − ṙ_a), and Q = −T (J_b − J_a)ᵀ u
  (J the points' linear Jacobians; eq. 4.102-4.107). L₀ None: the distance at the zero
  configuration (q = neutral);
- a joint spring (−k(θ − rest) − c θ̇) or actuator (F) on a 1-DOF joint: a force or torque
  along the joint's axis between its two bodies. On a tree joint θ is its coordinate (a
  coupled joint's ratio·q_master + offset), so Q adds F ∂θ/∂q. On a loop joint, with
  F_P, F_C its frames and a its axis (world a_w = R_P a): a torque pair ±F a_w on the child
  and parent bodies (revolute, continuous), Q = F a_wᵀ(J_ω,C − J_ω,P); a force pair ±F a_w
  through the origin of F_C (prismatic), Q = F a_wᵀ(J_C − J_P) at that point. θ is the
  rotation of F_C in F_P about a, atan2(a·½vee(R − Rᵀ), (tr R − 1)/2) with R = R_Pᵀ R_C,
  or its slide a·R_Pᵀ(p_C − p_P); θ̇ = ∂θ/∂q · q̇ with the row above.

Numpy only, written from the laws above with the reference kinematics (no symbolic code);
``symgen verify`` compares the closed-loop dynamics kernels with it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from symgen.model import JointType, Model
from symgen.model.elements import JointActuator, JointSpring, PointSpring
from symgen.reference._numeric import (
    NumericModel,
    model_forces,
    prepare,
    tree_configuration,
    tree_rates,
)
from symgen.reference.integrate import neutral_configuration
from symgen.reference.kinematics import TreeKinematics, _ancestors, tree_kinematics
from symgen.reference.spatial import pose_to_inverse_motion_transform

Array = np.ndarray
#: Loop-joint types a joint spring or actuator may act on (their axis turns or slides).
TURNING = (JointType.REVOLUTE, JointType.CONTINUOUS)


def _point_jacobian(nm: NumericModel, tk: TreeKinematics, body: int, point: Array
                    ) -> tuple[Array, Array]:
    """(J_ω, J_v): 3 × nv_tree angular Jacobian of ``body`` and linear Jacobian of its
    material point at the world position ``point``: the spatial column 0_X_j S_j moved to
    the point, v = v_O + ω × p (Featherstone 2008, eq. 2.24)."""
    ang, lin = np.zeros((3, nm.nv)), np.zeros((3, nm.nv))
    for j in _ancestors(nm, body):
        col = pose_to_inverse_motion_transform(tk.rotation[j], tk.position[j]) @ tk.s[j]
        ang[:, nm.joints[j].v] = col[:3]
        lin[:, nm.joints[j].v] = col[3:] + np.cross(col[:3].T, point).T
    return ang, lin


def _world_point(tk: TreeKinematics, body: int, local: Array) -> Array:
    r, p = tk.pose(body)
    return r @ local + p


def _loop_joint_row(nm: NumericModel, tk: TreeKinematics, model: Model, name: str
                    ) -> tuple[float, Array]:
    """(θ, ∂θ/∂q_tree) of the 1-DOF loop joint ``name`` (module documentation)."""
    joint = next(j for j in model.loop_joints if j.name == name)
    parent, child = nm.body_index(joint.parent), nm.body_index(joint.child)
    rb_p, pb_p = tk.pose(parent)
    rb_c, pb_c = tk.pose(child)
    rp = rb_p @ np.array(joint.placement.rotation, float)
    pp = rb_p @ np.array(joint.placement.translation, float) + pb_p
    rc = rb_c @ np.array(joint.child_placement.rotation, float)
    pc = rb_c @ np.array(joint.child_placement.translation, float) + pb_c
    a = np.array(joint.axis, float)
    a /= np.linalg.norm(a)
    a_world = rp @ a
    ang_p, lin_p = _point_jacobian(nm, tk, parent, pc) if parent >= 0 else (0.0, 0.0)
    ang_c, lin_c = _point_jacobian(nm, tk, child, pc) if child >= 0 else (0.0, 0.0)
    if joint.type in TURNING:
        r = rp.T @ rc
        sine = a @ (0.5 * np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]]))
        theta = float(np.arctan2(sine, 0.5 * (np.trace(r) - 1.0)))
        return theta, a_world @ (ang_c - ang_p)
    theta = float(a @ (rp.T @ (pc - pp)))
    return theta, a_world @ (lin_c - lin_p)


def _spring_rest_lengths(model: Model, params: Mapping[str, float] | None) -> dict[str, float]:
    """L₀ of every point spring (None: the distance at the zero configuration)."""
    resolved = model.resolve(params)
    nm = prepare(resolved)
    tk = tree_kinematics(nm, tree_configuration(nm, neutral_configuration(resolved)))
    out = {}
    for e in resolved.force_elements:
        if isinstance(e, PointSpring):
            if e.rest_length is not None:
                out[e.name] = float(e.rest_length)
                continue
            ra = _world_point(tk, nm.body_index(e.body_a), np.array(e.point_a, float))
            rb = _world_point(tk, nm.body_index(e.body_b), np.array(e.point_b, float))
            out[e.name] = float(np.linalg.norm(rb - ra))
    return out


def element_forces(model: Model, q, v, params: Mapping[str, float] | None = None) -> Array:
    """Q(q, v) of ``model``'s force elements in the model's coordinates (module
    documentation); zeros when it has none."""
    resolved = model.resolve(params)
    nm = prepare(resolved)
    q_tree = tree_configuration(nm, q)
    v_tree = tree_rates(nm, "v", v)
    q_total = np.zeros(nm.nv)
    if not resolved.force_elements:
        return model_forces(nm, q_total)
    tk = tree_kinematics(nm, q_tree)
    rest = _spring_rest_lengths(model, params)
    tree_joints = {j.name: j for j in nm.joints}
    for e in resolved.force_elements:
        if isinstance(e, PointSpring):
            a, b = nm.body_index(e.body_a), nm.body_index(e.body_b)
            ra = _world_point(tk, a, np.array(e.point_a, float))
            rb = _world_point(tk, b, np.array(e.point_b, float))
            d = rb - ra
            length = float(np.linalg.norm(d))
            u = d / length
            ja = _point_jacobian(nm, tk, a, ra)[1] if a >= 0 else np.zeros((3, nm.nv))
            jb = _point_jacobian(nm, tk, b, rb)[1] if b >= 0 else np.zeros((3, nm.nv))
            grad = u @ (jb - ja)  # ∂L/∂q_tree
            tension = (float(e.stiffness) * (length - rest[e.name])
                       + float(e.damping) * float(grad @ v_tree))
            q_total -= tension * grad
            continue
        if e.joint in tree_joints:
            nj = tree_joints[e.joint]
            theta = float(q_tree[nj.q][0])
            grad = np.zeros(nm.nv)
            grad[nj.v.start] = 1.0
        else:
            theta, grad = _loop_joint_row(nm, tk, resolved, e.joint)
        if isinstance(e, JointSpring):
            force = -(float(e.stiffness) * (theta - float(e.rest))
                      + float(e.damping) * float(grad @ v_tree))
        else:
            assert isinstance(e, JointActuator)
            force = float(e.force)
        q_total += force * grad
    return model_forces(nm, q_total)


__all__ = ["element_forces"]
