"""Numerical derivatives for the references of the derivative kernels: central differences
on the joint manifolds (q ⊕ ±h δ by the reference :func:`~symgen.reference.integrate.integrate`,
derivatives in the tangent space as Carpentier & Mansard, RSS 2018, §II) and the Lie-group
term −ad_v of the linearized state equation (docs/derivatives.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from symgen.model import JointType, Model
from symgen.reference.integrate import integrate

#: Step of the central differences of the numpy reference derivatives (relative error
#: ~ h² |∂³f| + ε |f| / h ≈ 1e-10 on unit-scale states).
DIFFERENCE_STEP = 1e-6


def central_differences(model: Model, q: np.ndarray, v: np.ndarray,
                        fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
                        params: Mapping[str, float] | None = None,
                        directions: np.ndarray | None = None, v_step: float | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(∂f/∂q on the tangent space, ∂f/∂v) of ``fn(q, v)`` by central differences:
    q ⊕ ±h X eₖ and v ± h_v eₖ, X the identity, or ``directions`` (nv × r: derivatives along
    its columns, v then of length r; e.g. the loop manifold's X, whose second-order
    departures from the manifold cancel in the central difference). h_v is ``v_step``
    (default h): the central difference of a function quadratic in v (the dynamics: Coriolis
    and centripetal terms, dampers) is exact for any step, and a large one spares it the
    rounding ε|f|/h, 2e-5 on Andrews' squeezer (|q̈| ~ 1e5) with h = 1e-6."""
    h = DIFFERENCE_STEP
    hv = h if v_step is None else v_step
    q, v = np.asarray(q, float), np.asarray(v, float)
    x = np.eye(model.nv) if directions is None else directions
    dq, dv = [], []
    for k, e in enumerate(np.eye(x.shape[1])):
        plus = integrate(model, q, x[:, k], h, params=params)
        minus = integrate(model, q, x[:, k], -h, params=params)
        dq.append((fn(plus, v) - fn(minus, v)) / (2 * h))
        dv.append((fn(q, v + hv * e) - fn(q, v - hv * e)) / (2 * hv))
    return np.array(dq).T, np.array(dv).T


def time_derivative(model: Model, q: np.ndarray, v: np.ndarray,
                    fn: Callable[[np.ndarray], np.ndarray],
                    params: Mapping[str, float] | None = None) -> np.ndarray:
    """d/dt ``fn(q)`` as q moves with v, by central differences along q ⊕ ±h v."""
    h = DIFFERENCE_STEP
    q, v = np.asarray(q, float), np.asarray(v, float)
    plus = integrate(model, q, v, h, params=params)
    minus = integrate(model, q, v, -h, params=params)
    return (fn(plus) - fn(minus)) / (2 * h)


def lie_term(model: Model, v: np.ndarray) -> np.ndarray:
    """−ad_v on the rows and columns of each spherical and free joint, zero elsewhere."""
    nv = model.nv
    lie = np.zeros((nv, nv))

    def skew(w: np.ndarray) -> np.ndarray:
        return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])

    for joint in model.independent_joints:
        s = model.v_slices[joint.name]
        if joint.type is JointType.SPHERICAL:
            lie[s, s] = -skew(v[s])
        elif joint.type is JointType.FREE:
            k = s.start
            w, u = v[k:k + 3], v[k + 3:k + 6]
            lie[k:k + 3, k:k + 3] = lie[k + 3:k + 6, k + 3:k + 6] = -skew(w)
            lie[k + 3:k + 6, k:k + 3] = -skew(u)
    return lie


__all__ = ["DIFFERENCE_STEP", "central_differences", "lie_term",
           "time_derivative"]
