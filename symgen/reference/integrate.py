"""Configurations: neutral and random configurations, q ⊕ v·dt on each joint's manifold
(docs/conventions.md, "Configuration integration") and the configuration rate q̇(q, v)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from symgen.model import Model
from symgen.reference._numeric import model_configuration, prepare, tree_configuration, tree_rates
from symgen.reference.joints import formulas, se3_exp_translation

Array = np.ndarray
_IDENTITY_QUATERNION = np.array([0.0, 0.0, 0.0, 1.0])


def neutral_configuration(model: Model, params: Mapping[str, float] | None = None) -> Array:
    """Zeros, with identity quaternions ``(0, 0, 0, 1)`` for spherical and free joints."""
    nm = prepare(model, params)
    q = np.zeros(nm.nq)
    for joint in nm.joints:
        if formulas(joint).quaternion:
            q[joint.q][-4:] = _IDENTITY_QUATERNION
    return model_configuration(nm, q)


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
        if formulas(joint).quaternion:
            quat = rng.standard_normal(4)
            q[joint.q][-4:] = quat / np.linalg.norm(quat)
    return model_configuration(nm, q)


def integrate(model: Model, q, v, dt: float, params: Mapping[str, float] | None = None) -> Array:
    """q ⊕ v·dt: vector joints add v·dt; a spherical joint right-multiplies its quaternion by
    exp(ω dt/2); a free joint applies (p, R) ← (p, R)·exp([ω; v] dt) (body twist)."""
    nm = prepare(model, params)
    q = tree_configuration(nm, q)
    v = tree_rates(nm, "v", v)
    dt = float(dt)
    if not np.isfinite(dt):
        raise ValueError("dt must be a finite number")
    out = q.copy()
    for joint in nm.joints:
        out[joint.q] = formulas(joint).integrate(q[joint.q], v[joint.v] * dt)
    return model_configuration(nm, out)


def configuration_rates(model: Model, q, v, params: Mapping[str, float] | None = None) -> Array:
    """q̇ (nq) at (q, v), the right-hand side a standard ODE solver advances q with: v for
    vector joints; for a unit quaternion (x, y, z, w) turning with body-frame ω,
    q̇ = ½ q ⊗ (ω, 0) (Solà 2017, "Time derivatives"); for a free joint's position,
    ṗ = R(q) v with v the body-frame velocity of the origin (Murray, Li & Sastry 1994, §2.4)."""
    nm = prepare(model, params)
    q = tree_configuration(nm, q)
    v = tree_rates(nm, "v", v)
    out = np.zeros_like(q)
    for joint in nm.joints:
        out[joint.q] = formulas(joint).rate(q[joint.q], v[joint.v])
    return model_configuration(nm, out)


__all__ = [
    "configuration_rates",
    "integrate",
    "neutral_configuration",
    "random_configuration",
    "se3_exp_translation",
]
