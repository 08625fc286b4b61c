"""Configurations: neutral and random configurations, and q ⊕ v·dt on each joint's manifold
(docs/conventions.md, "Configuration integration")."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..model import JointType, Model
from ._numeric import prepare, vector
from .spatial import quaternion_exp, quaternion_multiply, quaternion_to_rotation, skew

Array = np.ndarray
_IDENTITY_QUATERNION = np.array([0.0, 0.0, 0.0, 1.0])


def neutral_configuration(model: Model, params: Mapping[str, float] | None = None) -> Array:
    """Zeros, with identity quaternions ``(0, 0, 0, 1)`` for spherical and free joints."""
    nm = prepare(model, params)
    q = np.zeros(nm.nq)
    for joint in nm.joints:
        if joint.type in (JointType.SPHERICAL, JointType.FREE):
            q[joint.q][-4:] = _IDENTITY_QUATERNION
    return q


def random_configuration(
    model: Model,
    rng: np.random.Generator | None = None,
    params: Mapping[str, float] | None = None,
) -> Array:
    """Uniform values in [-π, π] for every vector coordinate (angles and translations alike;
    joint limits are ignored) and uniformly random unit quaternions."""
    nm = prepare(model, params)
    rng = np.random.default_rng() if rng is None else rng
    q = rng.uniform(-np.pi, np.pi, nm.nq)
    for joint in nm.joints:
        if joint.type in (JointType.SPHERICAL, JointType.FREE):
            quat = rng.standard_normal(4)
            q[joint.q][-4:] = quat / np.linalg.norm(quat)
    return q


def se3_exp_translation(omega: Array, vel: Array) -> Array:
    """Translation part ``V(ω) v`` of the SE(3) exponential of the twist ``[ω; v]``:
    ``V = 1 + (1 − cos θ)/θ² ω× + (θ − sin θ)/θ³ (ω×)²`` with θ = |ω|."""
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


def integrate(model: Model, q, v, dt: float, params: Mapping[str, float] | None = None) -> Array:
    """q ⊕ v·dt: vector joints add v·dt; a spherical joint right-multiplies its quaternion by
    exp(ω dt/2); a free joint applies (p, R) ← (p, R)·exp([ω; v] dt) (body twist)."""
    nm = prepare(model, params)
    q = vector("q", q, nm.nq)
    v = vector("v", v, nm.nv)
    dt = float(dt)
    if not np.isfinite(dt):
        raise ValueError("dt must be a finite number")
    out = q.copy()
    for joint in nm.joints:
        qj, vj = q[joint.q], v[joint.v] * dt
        if joint.type is JointType.SPHERICAL:
            out[joint.q] = quaternion_multiply(qj, quaternion_exp(vj))
        elif joint.type is JointType.FREE:
            step = se3_exp_translation(vj[:3], vj[3:])
            position = qj[:3] + quaternion_to_rotation(qj[3:]) @ step
            out[joint.q] = np.concatenate(
                [position, quaternion_multiply(qj[3:], quaternion_exp(vj[:3]))]
            )
        else:
            out[joint.q] = qj + vj
    return out


__all__ = ["integrate", "neutral_configuration", "random_configuration"]
