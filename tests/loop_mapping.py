"""Mapping a joint-coordinate state and acceleration of a closed-loop model onto the
natural coordinates of the same model (docs/natural.md), with the numpy reference
kinematics only (no generated code): used to compare the two formulations' accelerations.

A point r on body k at lever l (world axes) moves with ṙ = J_lin v − l × J_ang v and
r̈ = B q̈ + b, b = p̈₀ + ω̇₀ × l + ω × (ω × l) with [ω̇₀; p̈₀] = J̇v; a unit vector has the
angular part only.
"""

from __future__ import annotations

import numpy as np

from symgen import reference as ref
from symgen.formulations.natural.planar import PlanarModeller
from symgen.loops import LoopClosure
from symgen.reference.spatial import skew


def natural_map(model, nm, q, v) -> tuple[np.ndarray, np.ndarray]:
    """(B, b) with ṙ = B v and r̈ = B q̈ + b for the free natural coordinates."""
    mod = nm.modeller
    planar = isinstance(mod, PlanarModeller)
    fk = ref.forward_kinematics(model, q)
    rows, bias, bodies = [], [], {}
    for e in mod.points if planar else mod.entities:
        if e.fixed:
            continue
        body = model.body_names[e.body if planar else e.owner]
        if body not in bodies:
            jac = ref.frame_jacobian(model, q, body)
            bodies[body] = jac, ref.frame_jacobian_dot_v(model, q, v, body), jac[:3] @ v
        jac, jdv, omega = bodies[body]
        lever = fk[body][:3, :3] @ (np.append(e.local, 0.0) if planar else e.local)
        is_point = planar or e.kind == "p"
        rows.append(-skew(lever) @ jac[:3] + (jac[3:] if is_point else 0.0))
        bias.append(np.cross(jdv[:3], lever) + np.cross(omega, np.cross(omega, lever))
                    + (jdv[3:] if is_point else 0.0))
    k = 2 if planar else 3
    return np.vstack([r[:k] for r in rows]), np.concatenate([c[:k] for c in bias])


def relative_error(x, y) -> float:
    return float(np.max(np.abs(np.asarray(x) - y))) / max(1.0, float(np.max(np.abs(y))))


def assembled_states(model, lib, keep, count: int = 3, seed: int = 0):
    """``count`` states (seed ``seed``): q assembled (``LoopClosure.assemble``) from the
    neutral configuration moved by 0.2 N(0, 1) per coordinate, v in the null space of the
    kept loop rows of the compiled ``loop_jacobian`` (numpy SVD), τ standard normal."""
    closure = LoopClosure(model)
    rng = np.random.default_rng(seed)
    q0 = ref.neutral_configuration(model)
    out = []
    for _ in range(count):
        q = closure.assemble(ref.integrate(model, q0, 0.2 * rng.normal(size=model.nv), 1.0),
                             tolerance=1e-15)
        _, sigma, vt = np.linalg.svd(lib.loop_jacobian(q)[keep])
        tangent = vt[int(np.sum(sigma > 1e-8 * sigma[0])):].T
        out.append((q, tangent @ rng.normal(size=tangent.shape[1]),
                    rng.normal(size=model.nv)))
    return out
