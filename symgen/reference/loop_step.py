"""Integration steps of closed loops in joint coordinates, in numpy: the reference of the
kernels ``loop_step``, ``loop_step_rk4`` and ``loop_project``, written from García de Jalón
& Bayo (*Kinematic and Dynamic Simulation of Multibody Systems*, 1994) and Bayo & Ledesma
("Augmented Lagrangian and mass-orthogonal projection methods for constrained multibody
dynamics", Nonlinear Dynamics 9, 1996), with dense solves.

The mechanism is given as :class:`LoopDynamics`, a set of functions of the configuration
(M, C, τ + Q, Φ, G, Ġq̇ and q ⊕ Δ), so that any implementation of them (the numpy
reference dynamics with the numeric loop closure, in ``symgen verify``) can be stepped.
Equations: M q̈ + C + Gᵀλ = τ + Q, Φ(q) = 0. The penalties A (one per constraint row) are
settings, given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Array = np.ndarray


@dataclass(frozen=True)
class LoopDynamics:
    """The functions a step evaluates: ``mass(q)``, ``bias(q, v)`` (C: Coriolis, centrifugal
    and gravity), ``applied(q, v, tau)`` (τ + Q of the force elements), ``phi(q)``,
    ``jac(q)`` (G on the tangent space), ``gamma(q, v)`` (Ġ q̇), ``integrate(q, dq)``
    (q ⊕ Δ)."""

    mass: Callable[[Array], Array]
    bias: Callable[[Array, Array], Array]
    applied: Callable[[Array, Array, Array], Array]
    phi: Callable[[Array], Array]
    jac: Callable[[Array], Array]
    gamma: Callable[[Array, Array], Array]
    integrate: Callable[[Array, Array], Array]


def augmented_solve(mass: Array, jac: Array, alpha: Array, r: Array, c: Array,
                    lam: Array | None, iterations: int, refinement: int
                    ) -> tuple[Array, Array]:
    """(x, λ) with M x + Gᵀλ = r, G x + c = 0 by the augmented-Lagrangian iteration
    (book eq. 5.48–5.51): (M + GᵀAG) x = r − Gᵀ(λ + A c), λ ← λ + A(G x + c), from ``lam``
    (zeros: None), ``iterations`` updates, then the same on the residuals
    (``refinement`` updates) once."""
    lead = mass + jac.T @ (alpha[:, None] * jac)

    def run(r_: Array, c_: Array, lam_: Array, count: int) -> tuple[Array, Array]:
        x = np.linalg.solve(lead, r_ - jac.T @ (lam_ + alpha * c_))
        for _ in range(count):
            lam_ = lam_ + alpha * (jac @ x + c_)
            x = np.linalg.solve(lead, r_ - jac.T @ (lam_ + alpha * c_))
        return x, lam_

    start = np.zeros(jac.shape[0]) if lam is None else np.asarray(lam, float)
    x, lam_ = run(r, c, start, iterations)
    dx, dlam = run(r - mass @ x - jac.T @ lam_, jac @ x + c, np.zeros_like(lam_), refinement)
    return x + dx, lam_ + dlam


@dataclass(frozen=True)
class Settings:
    """The step h, the acceleration-level penalties ``alpha``, the iteration counts."""

    h: float
    alpha: Array
    iterations: int
    refinement: int
    projection_iterations: int


def project(d: LoopDynamics, s: Settings, q: Array, v: Array) -> tuple[Array, Array]:
    """q onto Φ = 0 (Newton steps with the mass-orthogonal correction: M Δ + Gᵀλ = 0,
    G Δ + Φ = 0), then v onto G v = 0 (M v₁ + Gᵀλ = M v, G v₁ = 0) at the projected q."""
    for _ in range(s.projection_iterations):
        m, g = d.mass(q), d.jac(q)
        dq, _ = augmented_solve(m, g, s.alpha, np.zeros(len(v)), d.phi(q), None,
                                s.iterations, s.refinement)
        q = d.integrate(q, dq)
    m, g = d.mass(q), d.jac(q)
    v, _ = augmented_solve(m, g, s.alpha, m @ v, np.zeros(g.shape[0]), None, s.iterations,
                           s.refinement)
    return q, v


def project_accelerations(d: LoopDynamics, s: Settings, q: Array, v: Array, a: Array
                          ) -> Array:
    """q̈ onto G q̈ + Ġq̇ = 0 at a consistent (q, q̇): M q̈₁ + Gᵀλ = M q̈, G q̈₁ + Ġq̇ = 0."""
    m, g = d.mass(q), d.jac(q)
    return augmented_solve(m, g, s.alpha, m @ a, d.gamma(q, v), None, s.iterations,
                           s.refinement)[0]


def accelerations(d: LoopDynamics, s: Settings, q: Array, v: Array, tau: Array,
                  lam: Array) -> tuple[Array, Array]:
    """q̈ and λ at (q, q̇): M q̈ + Gᵀλ = τ + Q − C, G q̈ + Ġq̇ = 0, from the multipliers
    ``lam``."""
    return augmented_solve(d.mass(q), d.jac(q), s.alpha, d.applied(q, v, tau) - d.bias(q, v),
                           d.gamma(q, v), lam, s.iterations, s.refinement)


def rk4_step(d: LoopDynamics, s: Settings, q: Array, v: Array, lam: Array, tau: Array
             ) -> tuple[Array, Array, Array]:
    """One classical Runge-Kutta step of the index-1 equations (stage configurations
    q ⊕ c·h·k, the multipliers carried from stage to stage), then :func:`project`."""
    h = s.h
    k1, lam = accelerations(d, s, q, v, tau, lam)
    v2 = v + h / 2 * k1
    k2, lam = accelerations(d, s, d.integrate(q, h / 2 * v), v2, tau, lam)
    v3 = v + h / 2 * k2
    k3, lam = accelerations(d, s, d.integrate(q, h / 2 * v2), v3, tau, lam)
    v4 = v + h * k3
    k4, lam = accelerations(d, s, d.integrate(q, h * v3), v4, tau, lam)
    q1 = d.integrate(q, h / 6 * (v + 2 * v2 + 2 * v3 + v4))
    q1, v1 = project(d, s, q1, v + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    return q1, v1, lam


def _saddle_solve(mass: Array, jac: Array, top: Array, bottom: Array) -> Array:
    """y of M x + Gᵀy = top, G x = bottom, least-norm where G loses rank (dense, numpy)."""
    w = np.linalg.solve(mass, jac.T)
    return np.linalg.lstsq(jac @ w, jac @ np.linalg.solve(mass, top) - bottom, rcond=1e-10)[0]


def trapezoidal_step(d: LoopDynamics, s: Settings, step_alpha: Array, iterations: int,
                     q: Array, v: Array, a: Array, lam: Array, tau: Array
                     ) -> tuple[Array, Array, Array, Array]:
    """One index-3 augmented-Lagrangian trapezoidal step (book §8.5, eq. 8.124–8.135) on the
    tangent space at q: Δ the unknown, q₁ = q ⊕ Δ, q̇₁ = (2/h)Δ − q̇,
    q̈₁ = (4/h²)Δ − (4/h)q̇ − q̈; Newton on f = M q̈₁ + C + Gᵀ(α(Φ + μΦ̇) + λ*) − τ − Q with
    the quasi-tangent (4/h²)M + GᵀβG, β = α(1 + 2μ/h), μ = h/50, from the predictor
    Δ = h q̇ + (h²/2) q̈, λ* ← λ* + α(Φ + μΦ̇) after each iteration (``step_alpha`` = α). At
    h ≤ 1 ms the carried multipliers are first re-fitted to their force at the predictor
    (λ* ← S⁺ G(q̃) M⁻¹ G(q)ᵀλ*) and q, q̇, q̈ are projected after it (:func:`project`, and
    M q̈₁ + Gᵀλ = M q̈, G q̈₁ + Ġq̇₁ = 0); above, the penalised projections with the last
    tangent, P = M + (h²/4)GᵀβG (Bayo & Ledesma 1996), and the multiplier filter
    λ* ← βG P⁻¹Gᵀλ* (h²/4)."""
    h = s.h
    mu = h / 50.0
    beta = step_alpha * (1 + 2 * mu / h)
    delta = h * v + 0.5 * h * h * a

    def rates(step: Array) -> tuple[Array, Array]:
        return (2 / h) * step - v, (4 / h**2) * step - (4 / h) * v - a

    refit = h <= 1e-3 * (1 + 1e-9)
    if refit:
        q_pred = d.integrate(q, delta)
        lam = _saddle_solve(d.mass(q_pred), d.jac(q_pred), d.jac(q).T @ lam,
                            np.zeros(len(lam)))
    for k in range(iterations):
        q1 = d.integrate(q, delta)
        v1, a1 = rates(delta)
        g = d.jac(q1)
        violation = d.phi(q1) + mu * (g @ v1)
        if k:
            lam = lam + step_alpha * violation
        m = d.mass(q1)
        f = m @ a1 + d.bias(q1, v1) + g.T @ (step_alpha * violation + lam) - d.applied(
            q1, v1, tau)
        tangent = (4 / h**2) * m + g.T @ (beta[:, None] * g)
        delta = delta - np.linalg.solve(tangent, f)
    q1 = d.integrate(q, delta)
    v1, a1 = rates(delta)
    lam = lam + step_alpha * (d.phi(q1) + mu * (d.jac(q1) @ v1))
    if refit:
        q1, v1 = project(d, s, q1, v1)
        return q1, v1, project_accelerations(d, s, q1, v1, a1), lam
    v1 = np.linalg.solve(tangent, (4 / h**2) * m @ v1)
    a1 = np.linalg.solve(tangent, (4 / h**2) * m @ a1 - g.T @ (beta * d.gamma(q1, v1)))
    lam = beta * (g @ np.linalg.solve(tangent, g.T @ lam))
    return q1, v1, a1, lam


__all__ = ["LoopDynamics", "Settings", "accelerations", "augmented_solve", "project",
           "project_accelerations",
           "rk4_step", "trapezoidal_step"]
