"""Rigid transforms whose entries may be numbers or parameter expressions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from symgen.model.scalars import Mat3, Scalar, Vec3, cos, simplify_scalar, sin

IDENTITY3: Mat3 = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
ZERO3: Vec3 = (0.0, 0.0, 0.0)


def vec3(v: Sequence[Scalar]) -> Vec3:
    a, b, c = (simplify_scalar(x) for x in v)
    return (a, b, c)


def mat3(m: Sequence[Sequence[Scalar]]) -> Mat3:
    r0, r1, r2 = (vec3(row) for row in m)
    return (r0, r1, r2)


def mat_mul(a: Mat3, b: Mat3) -> Mat3:
    return mat3([[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)])


def mat_vec(a: Mat3, v: Vec3) -> Vec3:
    return vec3([sum(a[i][k] * v[k] for k in range(3)) for i in range(3)])


def transpose(a: Mat3) -> Mat3:
    return mat3([[a[j][i] for j in range(3)] for i in range(3)])


def vec_add(a: Vec3, b: Vec3) -> Vec3:
    return vec3([a[i] + b[i] for i in range(3)])


def vec_sub(a: Vec3, b: Vec3) -> Vec3:
    return vec3([a[i] - b[i] for i in range(3)])


def vec_scale(s: Scalar, a: Vec3) -> Vec3:
    return vec3([s * x for x in a])


def rotation_from_rpy(roll: Scalar, pitch: Scalar, yaw: Scalar) -> Mat3:
    """URDF convention: R = Rz(yaw) Ry(pitch) Rx(roll) (fixed axes x, y, z)."""
    cr, sr, cp, sp, cy, sy = cos(roll), sin(roll), cos(pitch), sin(pitch), cos(yaw), sin(yaw)
    return mat3(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


@dataclass(frozen=True)
class Transform:
    """Pose of a child frame in a parent frame: p_parent = rotation @ p_child + translation."""

    rotation: Mat3 = IDENTITY3
    translation: Vec3 = ZERO3

    @classmethod
    def from_xyz_rpy(
        cls, xyz: Sequence[Scalar] = ZERO3, rpy: Sequence[Scalar] = ZERO3
    ) -> Transform:
        return cls(rotation_from_rpy(*rpy), vec3(xyz))

    def compose(self, other: Transform) -> Transform:
        """``self * other``: the pose of ``other``'s child frame in ``self``'s parent frame."""
        return Transform(
            mat_mul(self.rotation, other.rotation),
            vec_add(mat_vec(self.rotation, other.translation), self.translation),
        )

    def inverse(self) -> Transform:
        rt = transpose(self.rotation)
        return Transform(rt, vec_scale(-1.0, mat_vec(rt, self.translation)))

    def apply(self, point: Vec3) -> Vec3:
        return vec_add(mat_vec(self.rotation, point), self.translation)

    @property
    def is_identity(self) -> bool:
        return self.rotation == IDENTITY3 and self.translation == ZERO3


def rpy_from_rotation(r: Mat3) -> tuple[float, float, float]:
    """Roll, pitch, yaw with ``rotation_from_rpy(roll, pitch, yaw) == r`` up to rounding.

    Pitch from the first column's height; yaw from its horizontal direction; roll from what
    is left, ``Ry(pitch)ᵀ Rz(yaw)ᵀ r = Rx(roll)``, so that a yaw blurred near pitch = ±π/2
    (gimbal lock) is compensated by the roll instead of spoiling the rotation.
    """
    m = [[float(x) for x in row] for row in r]
    pitch = math.atan2(-m[2][0], math.hypot(m[0][0], m[1][0]))
    yaw = math.atan2(m[1][0], m[0][0]) if math.hypot(m[0][0], m[1][0]) > 0 else 0.0
    rest = mat_mul(transpose(rotation_from_rpy(0.0, pitch, yaw)), r)
    roll = math.atan2(float(rest[2][1]), float(rest[1][1]))
    return roll, pitch, yaw


def xyz_rpy(t: Transform) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """``t`` as the URDF-style ``xyz`` and ``rpy`` the builder takes."""
    x, y, z = (float(v) for v in t.translation)
    return (x, y, z), rpy_from_rotation(t.rotation)


def planar_directions(normal: Sequence[float]) -> tuple[Vec3, Vec3]:
    """In-plane unit directions of a planar joint (docs/conventions.md): e1 = the x axis
    projected on the plane (the y axis when |n·x| > 0.9), e2 = n × e1."""
    n = [float(x) for x in normal]
    ref = [0.0, 1.0, 0.0] if abs(n[0]) > 0.9 else [1.0, 0.0, 0.0]
    d = sum(a * b for a, b in zip(n, ref, strict=True))
    e1 = [r - d * a for r, a in zip(ref, n, strict=True)]
    norm = math.sqrt(sum(x * x for x in e1))
    e1 = [x / norm for x in e1]
    e2 = [n[1] * e1[2] - n[2] * e1[1], n[2] * e1[0] - n[0] * e1[2], n[0] * e1[1] - n[1] * e1[0]]
    return vec3(e1), vec3(e2)
