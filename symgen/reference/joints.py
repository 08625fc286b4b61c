"""Per-joint kinematics: joint transform, motion subspace S(q) and bias c_J = (dS/dt)·q̇.

Each joint moves its child frame relative to the joint frame (the child frame at q = 0);
the q/v layouts are those of docs/conventions.md. ``S`` and ``c_J`` are expressed in child
(body) coordinates, so that the joint's relative spatial velocity is ``v_J = S v_j`` and, with
the apparent derivative of S in body coordinates, ``c_J = S̊ v_j`` (Featherstone 2008, §4.4,
eqs. 4.34-4.35 and Table 4.1, extended to the joint types below).
"""

from __future__ import annotations

import numpy as np

from ..model import JointType
from ._numeric import NumericJoint
from .spatial import cross, quaternion_to_rotation, rotation_about

Array = np.ndarray

_ROTATING_1DOF = (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.HELICAL)


def joint_pose(joint: NumericJoint, qj: Array) -> tuple[Array, Array]:
    """Pose (R, p) of the child frame in the joint frame for the joint coordinates ``qj``."""
    t = joint.type
    a = joint.axis
    if t in (JointType.REVOLUTE, JointType.CONTINUOUS):
        return rotation_about(a, qj[0]), np.zeros(3)
    if t is JointType.PRISMATIC:
        return np.eye(3), qj[0] * a
    if t is JointType.HELICAL:
        return rotation_about(a, qj[0]), joint.pitch * qj[0] * a
    if t is JointType.CYLINDRICAL:
        return rotation_about(a, qj[1]), qj[0] * a
    if t is JointType.UNIVERSAL:
        return rotation_about(a, qj[0]) @ rotation_about(joint.axis2, qj[1]), np.zeros(3)
    if t is JointType.PLANAR:
        return rotation_about(a, qj[2]), qj[0] * joint.e1 + qj[1] * joint.e2
    if t is JointType.SPHERICAL:
        return quaternion_to_rotation(qj), np.zeros(3)
    if t is JointType.FREE:
        return quaternion_to_rotation(qj[3:]), qj[:3].copy()
    raise ValueError(f"joint {joint.name!r}: unsupported joint type {t.value!r}")


def motion_subspace(joint: NumericJoint, qj: Array) -> Array:
    """``S(q)`` (6 x nv) in child coordinates: ``v_J = S v_j``."""
    t = joint.type
    a = joint.axis
    s = np.zeros((6, joint.nv))
    if t in _ROTATING_1DOF:
        s[:3, 0] = a
        if t is JointType.HELICAL:
            s[3:, 0] = joint.pitch * a
    elif t is JointType.PRISMATIC:
        s[3:, 0] = a
    elif t is JointType.CYLINDRICAL:
        s[3:, 0] = a
        s[:3, 1] = a
    elif t is JointType.UNIVERSAL:
        # ω = R2^T a1 q̇1 + a2 q̇2, with R2 = Rot(a2, q2)
        s[:3, 0] = rotation_about(joint.axis2, qj[1]).T @ a
        s[:3, 1] = joint.axis2
    elif t is JointType.PLANAR:
        # v = q̇: linear velocity of the child origin R^T (ẋ e1 + ẏ e2), ω = n θ̇
        rt = rotation_about(a, qj[2]).T
        s[3:, 0] = rt @ joint.e1
        s[3:, 1] = rt @ joint.e2
        s[:3, 2] = a
    elif t is JointType.SPHERICAL:
        s[:3, :] = np.eye(3)
    elif t is JointType.FREE:
        s[:, :] = np.eye(6)
    else:
        raise ValueError(f"joint {joint.name!r}: unsupported joint type {t.value!r}")
    return s


def bias_acceleration(joint: NumericJoint, qj: Array, vj: Array) -> Array:
    """``c_J = S̊(q, q̇) v_j`` in child coordinates; zero where S is constant.

    Universal: d/dt(R2^T) = -q̇2 a2× R2^T, so c_J = [q̇1 q̇2 (R2^T a1) × a2; 0].
    Planar: d/dt(R^T) = -θ̇ n× R^T, so c_J = [0; θ̇ (R^T (ẋ e1 + ẏ e2)) × n].
    """
    c = np.zeros(6)
    if joint.type is JointType.UNIVERSAL:
        w1 = rotation_about(joint.axis2, qj[1]).T @ joint.axis
        c[:3] = vj[0] * vj[1] * cross(w1, joint.axis2)
    elif joint.type is JointType.PLANAR:
        rt = rotation_about(joint.axis, qj[2]).T
        lin = rt @ (vj[0] * joint.e1 + vj[1] * joint.e2)
        c[3:] = vj[2] * cross(lin, joint.axis)
    return c


__all__ = ["bias_acceleration", "joint_pose", "motion_subspace"]
