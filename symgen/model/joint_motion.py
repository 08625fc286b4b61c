"""Joint motions on model scalars (floats or parameter expressions): X_J(q), the pose of the
child frame in the joint frame (docs/conventions.md, joint table; Featherstone 2008,
Table 4.1), used where a joint is replaced by its pose at fixed values (locked joints,
:mod:`symgen.model.reduction`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from symgen.model.joint_types import JointType
from symgen.model.scalars import Mat3, Scalar, Vec3, cos, sin
from symgen.model.transform import Transform, mat3, mat_mul, planar_directions, vec3

if TYPE_CHECKING:
    from symgen.model.elements import Joint


def rotation_about(axis: Vec3, angle: Scalar) -> Mat3:
    """Rodrigues: R = c I + s [a]× + (1 − c) a aᵀ for a unit axis a."""
    c, s = cos(angle), sin(angle)
    x, y, z = axis
    k = 1 - c
    return mat3(
        [
            [c + k * x * x, k * x * y - s * z, k * x * z + s * y],
            [k * x * y + s * z, c + k * y * y, k * y * z - s * x],
            [k * x * z - s * y, k * y * z + s * x, c + k * z * z],
        ]
    )


def quaternion_rotation(qx: Scalar, qy: Scalar, qz: Scalar, qw: Scalar) -> Mat3:
    """Rotation of the unit quaternion (x, y, z, w), scalar last."""
    return mat3(
        [
            [1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)],
            [2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)],
            [2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)],
        ]
    )


def along(axis: Vec3, d: Scalar) -> Vec3:
    return vec3([d * a for a in axis])


def _planar(joint: Joint, q: Sequence[Scalar]) -> Transform:
    """x, y along the two in-plane directions of the normal ``axis``, θ about it."""
    e1, e2 = planar_directions(joint.axis)
    p = vec3([q[0] * u + q[1] * w for u, w in zip(e1, e2, strict=True)])
    return Transform(rotation_about(joint.axis, q[2]), p)


#: X_J(q) of every joint type.
MOTIONS: dict[JointType, Callable[[Joint, Sequence[Scalar]], Transform]] = {
    JointType.REVOLUTE: lambda j, q: Transform(rotation_about(j.axis, q[0])),
    JointType.CONTINUOUS: lambda j, q: Transform(rotation_about(j.axis, q[0])),
    JointType.PRISMATIC: lambda j, q: Transform(translation=along(j.axis, q[0])),
    JointType.HELICAL: lambda j, q: Transform(rotation_about(j.axis, q[0]),
                                              along(j.axis, j.pitch * q[0])),
    JointType.CYLINDRICAL: lambda j, q: Transform(rotation_about(j.axis, q[1]),
                                                  along(j.axis, q[0])),
    JointType.UNIVERSAL: lambda j, q: Transform(mat_mul(rotation_about(j.axis, q[0]),
                                                        rotation_about(j.axis2, q[1]))),
    JointType.PLANAR: _planar,
    JointType.SPHERICAL: lambda j, q: Transform(quaternion_rotation(*q)),
    JointType.FREE: lambda j, q: Transform(quaternion_rotation(*q[3:]), vec3(q[:3])),
    JointType.FIXED: lambda j, q: Transform(),
}


def joint_motion(joint: Joint, q: Sequence[Scalar]) -> Transform:
    """``X_J(q)`` of ``joint`` on model scalars (unit axes)."""
    return MOTIONS[joint.type](joint, q)


__all__ = ["MOTIONS", "along", "joint_motion", "quaternion_rotation", "rotation_about"]
