"""Per-joint kinematics, numerically: one table entry per joint type (:data:`JOINTS`).

Each joint moves its child frame relative to the joint frame (the child frame at q = 0);
the q/v layouts are those of docs/conventions.md. ``S`` and ``c_J`` are expressed in child
(body) coordinates, so that the joint's relative spatial velocity is ``v_J = S v_j`` and, with
the apparent derivative of S in body coordinates, ``c_J = S̊ v_j`` (Featherstone 2008, §4.4,
eqs. 4.34-4.35 and Table 4.1, extended to the joint types below).

This table is written from the textbook, independently of the symbolic declarations in
:mod:`symgen.joints` (it never calls them): the tests compare the two.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from symgen.model import JointType
from symgen.reference._numeric import NumericJoint
from symgen.reference.spatial import (
    cross,
    quaternion_exp,
    quaternion_multiply,
    quaternion_to_rotation,
    rotation_about,
    skew,
)

Array = np.ndarray
Pose = Callable[[NumericJoint, Array], tuple[Array, Array]]
Subspace = Callable[[NumericJoint, Array], Array]
Bias = Callable[[NumericJoint, Array, Array], Array]
Step = Callable[[Array, Array], Array]
Rate = Callable[[Array, Array], Array]


def _vector_step(qj: Array, step: Array) -> Array:
    return qj + step


def _vector_rate(qj: Array, vj: Array) -> Array:
    """q̇ = v: the joint's v is the rate of its coordinates (docs/conventions.md)."""
    return np.array(vj, dtype=float)


def quaternion_rate(quat: Array, omega: Array) -> Array:
    """q̇ of the unit quaternion q = (x, y, z, w) of a frame turning with angular velocity ω
    expressed in that frame: q̇ = ½ q ⊗ (ω, 0) (Solà, "Quaternion kinematics for the
    error-state Kalman filter", 2017, arXiv:1711.02508, "Time derivatives": q̇ = ½ q ⊗ ω_L,
    ω_L the local rate), written as the matrix of right multiplication by the pure
    quaternion (ω, 0), q̇ = ½ Ω(ω) q with, in scalar-last order,
    Ω(ω) = [[−ω×, ω], [−ωᵀ, 0]]."""
    w = np.asarray(omega, dtype=float)
    big_omega = np.zeros((4, 4))
    big_omega[:3, :3] = -skew(w)
    big_omega[:3, 3] = w
    big_omega[3, :3] = -w
    return 0.5 * big_omega @ np.asarray(quat, dtype=float)


def _no_bias(joint: NumericJoint, qj: Array, vj: Array) -> Array:
    return np.zeros(6)


def _columns(angular: list[Array | None], linear: list[Array | None]) -> Array:
    """S from its angular and linear column parts (None: zero)."""
    s = np.zeros((6, len(angular)))
    for i, (w, v) in enumerate(zip(angular, linear, strict=True)):
        if w is not None:
            s[:3, i] = w
        if v is not None:
            s[3:, i] = v
    return s


@dataclass(frozen=True)
class JointFormulas:
    """One joint type: pose (R, p) of the child frame in the joint frame, S(q) (6 x nv),
    c_J(q, v), q ⊕ step (step = v·dt), whether the last four q entries are a unit
    quaternion (identity (0, 0, 0, 1) at the neutral configuration), and the configuration
    rate q̇(q, v)."""

    pose: Pose
    subspace: Subspace
    bias: Bias = _no_bias
    integrate: Step = _vector_step
    quaternion: bool = False
    rate: Rate = _vector_rate


# ---------------------------------------------------------------- revolute, continuous
def _revolute_pose(j: NumericJoint, qj: Array) -> tuple[Array, Array]:
    return rotation_about(j.axis, qj[0]), np.zeros(3)


def _revolute_s(j: NumericJoint, qj: Array) -> Array:
    return _columns([j.axis], [None])


# ---------------------------------------------------------------- prismatic
def _prismatic_pose(j: NumericJoint, qj: Array) -> tuple[Array, Array]:
    return np.eye(3), qj[0] * j.axis


def _prismatic_s(j: NumericJoint, qj: Array) -> Array:
    return _columns([None], [j.axis])


# ---------------------------------------------------------------- helical (pitch h)
def _helical_pose(j: NumericJoint, qj: Array) -> tuple[Array, Array]:
    return rotation_about(j.axis, qj[0]), j.pitch * qj[0] * j.axis


def _helical_s(j: NumericJoint, qj: Array) -> Array:
    return _columns([j.axis], [j.pitch * j.axis])


# ---------------------------------------------------------------- cylindrical (d, θ)
def _cylindrical_pose(j: NumericJoint, qj: Array) -> tuple[Array, Array]:
    return rotation_about(j.axis, qj[1]), qj[0] * j.axis


def _cylindrical_s(j: NumericJoint, qj: Array) -> Array:
    return _columns([None, j.axis], [j.axis, None])


# ---------------------------------------------------------------- universal (q1, q2)
def _universal_pose(j: NumericJoint, qj: Array) -> tuple[Array, Array]:
    return rotation_about(j.axis, qj[0]) @ rotation_about(j.axis2, qj[1]), np.zeros(3)


def _universal_s(j: NumericJoint, qj: Array) -> Array:
    """ω = R2ᵀ a1 q̇1 + a2 q̇2, with R2 = Rot(a2, q2)."""
    return _columns([rotation_about(j.axis2, qj[1]).T @ j.axis, j.axis2], [None, None])


def _universal_bias(j: NumericJoint, qj: Array, vj: Array) -> Array:
    """d/dt(R2ᵀ) = −q̇2 a2× R2ᵀ, so c_J = [q̇1 q̇2 (R2ᵀ a1) × a2; 0]."""
    w1 = rotation_about(j.axis2, qj[1]).T @ j.axis
    return np.concatenate([vj[0] * vj[1] * cross(w1, j.axis2), np.zeros(3)])


# ---------------------------------------------------------------- planar (x, y, θ)
def _planar_pose(j: NumericJoint, qj: Array) -> tuple[Array, Array]:
    return rotation_about(j.axis, qj[2]), qj[0] * j.e1 + qj[1] * j.e2


def _planar_s(j: NumericJoint, qj: Array) -> Array:
    """v = q̇: linear velocity of the child origin Rᵀ(ẋ e1 + ẏ e2), ω = n θ̇."""
    rt = rotation_about(j.axis, qj[2]).T
    return _columns([None, None, j.axis], [rt @ j.e1, rt @ j.e2, None])


def _planar_bias(j: NumericJoint, qj: Array, vj: Array) -> Array:
    """d/dt(Rᵀ) = −θ̇ n× Rᵀ, so c_J = [0; θ̇ (Rᵀ(ẋ e1 + ẏ e2)) × n]."""
    rt = rotation_about(j.axis, qj[2]).T
    lin = rt @ (vj[0] * j.e1 + vj[1] * j.e2)
    return np.concatenate([np.zeros(3), vj[2] * cross(lin, j.axis)])


# ---------------------------------------------------------------- spherical (quaternion)
def _spherical_pose(j: NumericJoint, qj: Array) -> tuple[Array, Array]:
    return quaternion_to_rotation(qj), np.zeros(3)


def _spherical_s(j: NumericJoint, qj: Array) -> Array:
    return np.vstack([np.eye(3), np.zeros((3, 3))])


def _spherical_step(qj: Array, step: Array) -> Array:
    """q ⊗ exp(ω dt / 2)."""
    return quaternion_multiply(qj, quaternion_exp(step))


def _spherical_rate(qj: Array, vj: Array) -> Array:
    """q̇ = ½ Ω(ω) q, ω = v in the child frame."""
    return quaternion_rate(qj, vj)


# ---------------------------------------------------------------- free (p, quaternion)
def _free_pose(j: NumericJoint, qj: Array) -> tuple[Array, Array]:
    return quaternion_to_rotation(qj[3:]), qj[:3].copy()


def _free_s(j: NumericJoint, qj: Array) -> Array:
    return np.eye(6)


def se3_exp_translation(omega: Array, vel: Array) -> Array:
    """Translation part ``V(ω) v`` of the SE(3) exponential of the twist ``[ω; v]``:
    ``V = 1 + (1 − cos θ)/θ² ω× + (θ − sin θ)/θ³ (ω×)²`` with θ = |ω| (Murray, Li & Sastry
    1994, eq. 2.36)."""
    theta = float(np.linalg.norm(omega))
    w = skew(omega)
    if theta < 1e-3:  # Taylor series, avoiding the cancellation in 1 - cos θ
        t2 = theta * theta
        b = 0.5 - t2 / 24.0 + t2 * t2 / 720.0
        c = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0
    else:
        b = (1.0 - np.cos(theta)) / theta**2
        c = (theta - np.sin(theta)) / theta**3
    return vel + b * (w @ vel) + c * (w @ (w @ vel))


def _free_step(qj: Array, step: Array) -> Array:
    """(p, R) ← (p, R)·exp([ω; v] dt), the twist in body coordinates."""
    position = qj[:3] + quaternion_to_rotation(qj[3:]) @ se3_exp_translation(step[:3], step[3:])
    return np.concatenate([position, quaternion_multiply(qj[3:], quaternion_exp(step[:3]))])


def _free_rate(qj: Array, vj: Array) -> Array:
    """The body twist [ω; v] = g⁻¹ġ (Murray, Li & Sastry 1994, §2.4, the body velocity):
    ṗ = R v, and the quaternion's ½ Ω(ω) q."""
    return np.concatenate([quaternion_to_rotation(qj[3:]) @ vj[3:],
                           quaternion_rate(qj[3:], vj[:3])])


_REVOLUTE = JointFormulas(_revolute_pose, _revolute_s)

#: The numeric formulas of every movable joint type.
JOINTS: dict[JointType, JointFormulas] = {
    JointType.REVOLUTE: _REVOLUTE,
    JointType.CONTINUOUS: _REVOLUTE,
    JointType.PRISMATIC: JointFormulas(_prismatic_pose, _prismatic_s),
    JointType.HELICAL: JointFormulas(_helical_pose, _helical_s),
    JointType.CYLINDRICAL: JointFormulas(_cylindrical_pose, _cylindrical_s),
    JointType.UNIVERSAL: JointFormulas(_universal_pose, _universal_s, _universal_bias),
    JointType.PLANAR: JointFormulas(_planar_pose, _planar_s, _planar_bias),
    JointType.SPHERICAL: JointFormulas(
        _spherical_pose, _spherical_s, integrate=_spherical_step, quaternion=True,
        rate=_spherical_rate,
    ),
    JointType.FREE: JointFormulas(_free_pose, _free_s, integrate=_free_step, quaternion=True,
                                  rate=_free_rate),
}


def formulas(joint: NumericJoint) -> JointFormulas:
    """The table entry of ``joint``'s type."""
    try:
        return JOINTS[joint.type]
    except KeyError:
        raise ValueError(
            f"joint {joint.name!r}: unsupported joint type {joint.type.value!r}"
        ) from None


def joint_pose(joint: NumericJoint, qj: Array) -> tuple[Array, Array]:
    """Pose (R, p) of the child frame in the joint frame for the joint coordinates ``qj``."""
    return formulas(joint).pose(joint, qj)


def motion_subspace(joint: NumericJoint, qj: Array) -> Array:
    """``S(q)`` (6 x nv) in child coordinates: ``v_J = S v_j``."""
    return formulas(joint).subspace(joint, qj)


def bias_acceleration(joint: NumericJoint, qj: Array, vj: Array) -> Array:
    """``c_J = S̊(q, q̇) v_j`` in child coordinates; zero where S is constant."""
    return formulas(joint).bias(joint, qj, vj)


__all__ = [
    "JOINTS",
    "JointFormulas",
    "bias_acceleration",
    "formulas",
    "joint_pose",
    "motion_subspace",
    "quaternion_rate",
    "se3_exp_translation",
]
