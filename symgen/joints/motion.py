"""Joint motions on model scalars (floats or parameter expressions), used where a joint is
replaced by its pose at fixed values (locked joints, :mod:`symgen.model.reduction`)."""

from __future__ import annotations

from symgen.model.scalars import Mat3, Scalar, Vec3, cos, sin
from symgen.model.transform import mat3, vec3


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


__all__ = ["along", "quaternion_rotation", "rotation_about"]
