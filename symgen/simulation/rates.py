"""Configuration rates q̇ = f(q, v) of every joint layout (docs/conventions.md), so that a
standard ODE integrator can advance q as a vector: v itself for vector joints, and for a
unit quaternion (x, y, z, w) with body-frame angular velocity ω the rate ½ q ⊗ (ω, 0)
(a free joint's translation moves at R(q) v, v its body-frame linear velocity)."""

from __future__ import annotations

import numpy as np

from symgen.model import JointType, Model
from symgen.model.joint_motion import quaternion_rotation

Array = np.ndarray


def _quaternion_rate(quat: Array, omega: Array) -> Array:
    """d/dt of the unit quaternion (x, y, z, w) turning with body-frame ω: ½ q ⊗ (ω, 0)."""
    x, y, z, w = quat
    wx, wy, wz = omega
    return 0.5 * np.array([
        w * wx + y * wz - z * wy,
        w * wy + z * wx - x * wz,
        w * wz + x * wy - y * wx,
        -(x * wx + y * wy + z * wz),
    ])


def _rotation(quat: Array) -> Array:
    return np.array(quaternion_rotation(*quat), dtype=float)


class ConfigurationRates:
    """``rate(q, v)`` → q̇ and ``normalise(q)`` (unit quaternions) for ``model``."""

    def __init__(self, model: Model) -> None:
        self.nq = model.nq
        self.quaternions: list[tuple[slice, slice, bool]] = []  # (quat in q, ω in v, free)
        self.vector_q: list[int] = []
        self.vector_v: list[int] = []
        for joint in model.independent_joints:
            qs, vs = model.q_slices[joint.name], model.v_slices[joint.name]
            if joint.type is JointType.SPHERICAL:
                self.quaternions.append((qs, vs, False))
            elif joint.type is JointType.FREE:
                self.quaternions.append((slice(qs.start + 3, qs.stop),
                                         slice(vs.start, vs.start + 3), True))
            else:
                self.vector_q += list(range(qs.start, qs.stop))
                self.vector_v += list(range(vs.start, vs.stop))

    def rate(self, q: Array, v: Array) -> Array:
        out = np.zeros(self.nq)
        out[self.vector_q] = v[self.vector_v]
        for qs, vs, free in self.quaternions:
            quat = q[qs]
            out[qs] = _quaternion_rate(quat, v[vs])
            if free:  # position rate: R v_body, v_body after ω in v
                position = slice(qs.start - 3, qs.start)
                out[position] = _rotation(quat) @ v[vs.stop:vs.stop + 3]
        return out

    def normalise(self, q: Array) -> Array:
        out = q.copy()
        for qs, _, _ in self.quaternions:
            out[qs] /= np.linalg.norm(out[qs])
        return out


__all__ = ["ConfigurationRates"]
