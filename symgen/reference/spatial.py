"""Spatial (6D) vector algebra on numpy arrays, motion vectors ``[angular; linear]``.

Notation and formulas follow Featherstone, *Rigid Body Dynamics Algorithms* (2008), ch. 2:
``X`` is a Plücker motion transform ``B_X_A`` taking motion vectors from A to B coordinates,
its force counterpart is ``X^{-T}`` and ``X^T`` takes forces from B back to A.
"""

from __future__ import annotations

import math

import numpy as np

Array = np.ndarray

# 3-vector helpers work on Python floats (``tolist``): for 3-vectors this is an order of
# magnitude faster than numpy's general routines (np.cross, np.eye, ...).


def cross(a: Array, b: Array) -> Array:
    """Cross product ``a × b`` of two 3-vectors."""
    a0, a1, a2 = a.tolist()
    b0, b1, b2 = b.tolist()
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def skew(v: Array) -> Array:
    """The 3x3 matrix ``v×`` with ``skew(v) @ w = cross(v, w)`` (Featherstone eq. 2.20)."""
    x, y, z = v.tolist()
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def rotation_about(axis: Array, angle: float) -> Array:
    """Rotation by ``angle`` about the unit vector ``axis``:
    ``1 + sin θ k× + (1 − cos θ) (k×)²`` (Rodrigues' formula)."""
    x, y, z = axis.tolist()
    s, c = math.sin(angle), math.cos(angle)
    t = 1.0 - c
    return np.array(
        [
            [c + t * x * x, t * x * y - s * z, t * x * z + s * y],
            [t * x * y + s * z, c + t * y * y, t * y * z - s * x],
            [t * x * z - s * y, t * y * z + s * x, c + t * z * z],
        ]
    )


def quaternion_to_rotation(quat: Array) -> Array:
    """Rotation matrix of the unit quaternion ``(x, y, z, w)`` (scalar last; not renormalised)."""
    x, y, z, w = quat
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def quaternion_multiply(a: Array, b: Array) -> Array:
    """Hamilton product ``a ⊗ b`` of quaternions stored ``(x, y, z, w)``."""
    av, aw = a[:3], a[3]
    bv, bw = b[:3], b[3]
    return np.concatenate([aw * bv + bw * av + cross(av, bv), [aw * bw - av @ bv]])


def quaternion_exp(rotation_vector: Array) -> Array:
    """Unit quaternion ``exp(φ/2)`` of the rotation vector ``φ`` (angle |φ| about φ/|φ|)."""
    angle = float(np.linalg.norm(rotation_vector))
    half = 0.5 * angle
    # sin(half)/angle, with its Taylor series near zero
    s = np.sin(half) / angle if angle > 1e-8 else 0.5 - angle * angle / 48.0
    return np.concatenate([s * rotation_vector, [np.cos(half)]])


def pose_to_motion_transform(rotation: Array, translation: Array) -> Array:
    """``B_X_A`` for frame B posed at (``rotation``, ``translation``) in frame A, i.e.
    ``p_A = rotation @ p_B + translation``: ``[[E, 0], [-E r×, E]]`` with ``E = rotation^T``,
    ``r = translation`` (Featherstone eq. 2.24)."""
    e = rotation.T
    x = np.zeros((6, 6))
    x[:3, :3] = e
    x[3:, 3:] = e
    x[3:, :3] = -e @ skew(translation)
    return x


def pose_to_inverse_motion_transform(rotation: Array, translation: Array) -> Array:
    """``A_X_B`` (the inverse of :func:`pose_to_motion_transform`): ``[[R, 0], [r× R, R]]``."""
    x = np.zeros((6, 6))
    x[:3, :3] = rotation
    x[3:, 3:] = rotation
    x[3:, :3] = skew(translation) @ rotation
    return x


def cross_motion(v: Array, m: Array) -> Array:
    """``v × m`` for motion vectors: ``[ω × m_ω; ω × m_O + v_O × m_ω]`` (Featherstone
    eq. 2.31)."""
    w, u = v[:3], v[3:]
    return np.concatenate([cross(w, m[:3]), cross(w, m[3:]) + cross(u, m[:3])])


def cross_force(v: Array, f: Array) -> Array:
    """``v ×* f`` for a force vector f: ``[ω × n + v_O × f; ω × f]`` (Featherstone
    eq. 2.32)."""
    w, u = v[:3], v[3:]
    return np.concatenate([cross(w, f[:3]) + cross(u, f[3:]), cross(w, f[3:])])


def spatial_inertia(mass: float, com: Array, inertia_com: Array) -> Array:
    """Spatial inertia about the frame origin of a body with ``mass``, centre of mass ``com``
    and rotational inertia ``inertia_com`` about the COM: ``[[I_c + m c× c×^T, m c×],
    [m c×^T, m 1]]`` (Featherstone eq. 2.63)."""
    c = skew(com)
    out = np.zeros((6, 6))
    out[:3, :3] = inertia_com + mass * c @ c.T
    out[:3, 3:] = mass * c
    out[3:, :3] = mass * c.T
    out[3:, 3:] = mass * np.eye(3)
    return out


def homogeneous(rotation: Array, translation: Array) -> Array:
    """The 4x4 homogeneous matrix ``[[R, p], [0, 1]]``."""
    t = np.eye(4)
    t[:3, :3] = rotation
    t[:3, 3] = translation
    return t


__all__ = [
    "cross",
    "cross_force",
    "cross_motion",
    "homogeneous",
    "pose_to_inverse_motion_transform",
    "pose_to_motion_transform",
    "quaternion_exp",
    "quaternion_multiply",
    "quaternion_to_rotation",
    "rotation_about",
    "skew",
    "spatial_inertia",
]
