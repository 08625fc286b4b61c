"""Numpy reference solvers of the natural-coordinate formulations (García de Jalón &
Bayo 1994): the generated kernels are checked against these, and these against the book's
worked example (Ex. 10.5) and the spatial-operator dynamics.

- :func:`lagrange_accelerations`: index-1 Lagrange multipliers with Baumgarte
  stabilisation (book eq. 5.10 with c replaced by eq. 5.28);
- :func:`augmented_lagrangian_accelerations`: the iterated penalty form (eq. 5.51);
- :func:`trapezoidal_step`: one step of the index-3 augmented Lagrangian with the trapezoidal
  rule, positions as unknowns, a fixed number of Newton iterations on the quasi-tangent
  matrix, the Heun/Taylor predictor (§8.5, eq. 8.124-8.135), and mass-orthogonal projections
  of velocities and accelerations;
- :func:`rk4_step`: one classical Runge-Kutta step of the index-1 equations with
  augmented-Lagrangian accelerations (eq. 5.48-5.51) and mass-orthogonal projections;
- :func:`assemble` (Newton-Raphson, least-squares form eq. 3.15) and
  :func:`consistent_velocities`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from symgen.errors import SymgenError
from symgen.reference.loop_step import augmented_solve

Array = np.ndarray


class NaturalModel(Protocol):
    """What these solvers read of a natural-coordinate model
    (:class:`symgen.formulations.natural.model.NaturalModel` has it): sizes, the constant
    M, Φ, Φ_q, Φ̇_q q̇ and Q at numbers, the metric shift γ of a singular M and the step's
    penalty rule (:func:`symgen.formulations.natural.penalty.choose_penalty`)."""

    name: str
    mass_matrix: Array

    @property
    def n(self) -> int: ...

    @property
    def m(self) -> int: ...

    @property
    def mass_matrix_regular(self) -> bool: ...

    def phi(self, q: Sequence[float]) -> Array: ...

    def phi_q(self, q: Sequence[float]) -> Array: ...

    def phi_q_dot_qdot(self, q: Sequence[float], qd: Sequence[float]) -> Array: ...

    def generalized_forces(self, q: Array, qd: Array, tau: Array | None = None,
                           params: Array | None = None) -> Array: ...

    def metric_shift(self, q: Sequence[float] | None = None) -> float: ...

    def step_penalty(self, h: float, mu: float, alpha: float | None = None,
                     q: Array | None = None) -> Array: ...

    def step_refits(self, h: float) -> bool: ...

    def rk4_penalties(self) -> tuple[Array, Array]: ...


def lagrange_accelerations(
    nm: NaturalModel, q: Array, qd: Array, alpha: float = 0.0, beta: float = 0.0,
    tau: Array | None = None, params: Array | None = None,
) -> tuple[Array, Array]:
    """q̈ and λ from [[M, Φ_qᵀ], [Φ_q, 0]] [q̈; λ] = [Q; c − 2αΦ̇ − β²Φ], c = −Φ̇_q q̇
    (book eq. 5.10, 5.28; α = β = 0: no stabilisation). Redundant constraints make the
    matrix singular: the least-squares solution of the (consistent) system is then taken,
    whose q̈ is the unique constrained acceleration (λ: the minimum-norm set)."""
    pq = nm.phi_q(q)
    n, m = nm.n, nm.m
    a = np.zeros((n + m, n + m))
    a[:n, :n] = nm.mass_matrix
    a[:n, n:] = pq.T
    a[n:, :n] = pq
    rhs = np.concatenate([
        nm.generalized_forces(q, qd, tau, params),
        -nm.phi_q_dot_qdot(q, qd) - 2 * alpha * (pq @ qd) - beta**2 * nm.phi(q),
    ])
    sol = np.linalg.lstsq(a, rhs, rcond=None)[0]
    return sol[:n], sol[n:]


def augmented_lagrangian_accelerations(
    nm: NaturalModel, q: Array, qd: Array, alpha: float, iterations: int,
    omega: float = 10.0, mu: float = 1.0, tau: Array | None = None,
) -> list[Array]:
    """The iterates of book eq. 5.51: M q̈₀ = Q, then
    (M + Φ_qᵀαΦ_q) q̈ᵢ₊₁ = M q̈ᵢ − Φ_qᵀα(Φ̇_q q̇ + 2Ωμ Φ̇ + Ω² Φ); returns [q̈₁, ..., q̈_k].
    Tolerates redundant constraints and singular positions. q̈₀ enters only as M q̈₀ = Q,
    so M is never inverted: a singular M is fine when M + Φ_qᵀαΦ_q is regular."""
    pq = nm.phi_q(q)
    m_ = nm.mass_matrix
    lead = m_ + alpha * pq.T @ pq
    bias = alpha * pq.T @ (nm.phi_q_dot_qdot(q, qd) + 2 * omega * mu * (pq @ qd)
                           + omega**2 * nm.phi(q))
    momentum = nm.generalized_forces(q, qd, tau)  # M q̈₀
    out = []
    for _ in range(iterations):
        qdd = np.linalg.solve(lead, momentum - bias)
        momentum = m_ @ qdd
        out.append(qdd)
    return out


@dataclass
class StepSettings:
    """Settings of :func:`trapezoidal_step`: time step h, penalty α, damping μ (the book
    uses h/μ between 30 and 80; default h/50), and the fixed number of Newton iterations.

    Default penalty: the diagonal matrix of the model's rule (:meth:`NaturalModel.step_penalty`,
    i.e. :func:`symgen.formulations.natural.penalty.choose_penalty`), chosen from M
    and Φ_q at the assembled configuration so that each multiplier update contracts the
    multiplier error by ~1e-4 within a roundoff budget (documented there). A scalar
    ``alpha`` is used for every constraint instead."""

    h: float
    alpha: float | None = None
    mu: float | None = None
    iterations: int = 2
    #: :func:`trapezoidal_step`'s treatment of the multipliers and projections: True, the
    #: carried multipliers re-fitted to their force at the predictor and exact
    #: mass-orthogonal projections; False, the multipliers carried as they are, filtered,
    #: and the projections of the penalised metric; None (default): what ``nc_step`` does
    #: (:meth:`NaturalModel.step_refits`: the first for closed loops up to 1 ms).
    refit: bool | None = None

    @property
    def damping(self) -> float:
        return self.mu if self.mu is not None else self.h / 50.0

    def penalty(self, nm: NaturalModel, q: Array | None = None) -> Array:
        """The penalty matrix's diagonal (one α per constraint; at ``q`` when the model has
        no assembled configuration)."""
        return nm.step_penalty(self.h, self.damping, self.alpha, q)


def trapezoidal_step(
    nm: NaturalModel, q: Array, qd: Array, qdd: Array, s: StepSettings, lam: Array | None = None,
    tau: Array | None = None, params: Array | None = None,
) -> tuple[Array, Array, Array, Array]:
    """One step of the index-3 augmented Lagrangian with the trapezoidal rule (book §8.5),
    line for line what :func:`symgen.formulations.natural.step.step_program` generates
    (its docstring has the reasons and the measurements):

    q̇ = (2/h) q − q̂̇, q̈ = (4/h²) q − q̂̈ (eq. 8.128-8.129, with the erratum q̂̈);
    f(q) = M q̈ + Φ_qᵀ(α(Φ + μΦ̇) + λ*) − Q = 0 by Newton on the quasi-tangent
    (4/h²)M + Φ_qᵀβΦ_q, β = α(1 + 2μ/h) (eq. 8.131-8.134), from the predictor
    q̃ = q + h q̇ + h²/2 q̈ (eq. 8.135), with λ* ← λ* + α(Φ + μΦ̇) after each iteration
    (eq. 8.126). With ``s.refit`` (by default: a mechanism with closed loops at h ≤ 1 ms,
    :meth:`NaturalModel.step_refits`):

    - the carried multipliers are re-fitted to the force they exert,
      λ* ← S⁺ Φ_q(q̃) A⁻¹ Φ_q(q)ᵀλ*, S = Φ_q(q̃) A⁻¹ Φ_q(q̃)ᵀ (A = M + γΦ_qᵀΦ_q, γ = 0 for a
      regular M; pseudo-inverse: redundant rows): near a singular position λ grows as 1/θ
      while the force Φ_qᵀλ stays smooth;
    - the projections are exact and mass-orthogonal, q̇ ← q̇ − W S⁺ Φ_q q̇,
      q̈ ← q̈ − W S⁺ (Φ_q q̈ + Φ̇_q q̇) with W = A⁻¹Φ_q(q̃)ᵀ and Φ_q at t + h (the
      predictor's S, as the generated step factors it once).

    Otherwise (the default for open chains and above 1 ms): the multipliers carried as they
    are, the
    projections P q̇ = M q̇*, P q̈ = M q̈* − (h²/4)Φ_qᵀβ Φ̇_q q̇ with P = M + (h²/4)Φ_qᵀβΦ_q
    the last iteration's quasi-tangent times h²/4 (Bayo & Ledesma 1996, Nonlinear Dyn.
    9:113-130), and with the model-derived penalty (``s.alpha`` None) the filter
    λ* ← (h²/4) B Φ_q P⁻¹ Φ_qᵀ λ*, which multiplies each component by a/(1 + a) over the
    eigenvalues a of the scaled compliance B^½ S' B^½ (S' = (h²/4)Φ_q M⁻¹Φ_qᵀ): it drops
    the component along a direction in which Φ_q is nearly singular, which would otherwise
    wind up (on the parallelogram chain at h = 1e-5 it grew to 5e10 within the first
    passage and the step diverged), and with it the force the exact solution needs there.

    Q(q, q̇, τ) is evaluated at the iterate (τ held over the step; its derivatives are left
    out of the quasi-tangent). Returns q, q̇, q̈ at t + h and the multipliers λ*."""
    m_ = nm.mass_matrix
    h, alpha, mu = s.h, s.penalty(nm, q), s.damping
    lam = np.zeros(nm.m) if lam is None else lam.copy()
    hat_d = qd + (2 / h) * q
    hat_dd = qdd + (4 / h) * qd + (4 / h**2) * q
    q1 = q + h * qd + 0.5 * h**2 * qdd
    beta = alpha * (1 + 2 * mu / h)
    refit = nm.step_refits(h) if s.refit is None else (s.refit and nm.m > 0)
    if refit:
        w, s_pinv = _range_space(nm, q1)
        lam = s_pinv @ (w.T @ (nm.phi_q(q).T @ lam))
    for _ in range(s.iterations):
        v1 = (2 / h) * q1 - hat_d
        a1 = (4 / h**2) * q1 - hat_dd
        pq = nm.phi_q(q1)
        forces = nm.generalized_forces(q1, v1, tau, params)
        f = m_ @ a1 + pq.T @ (alpha * (nm.phi(q1) + mu * (pq @ v1)) + lam) - forces
        projector = m_ + (h**2 / 4) * pq.T @ (beta[:, None] * pq)  # (h²/4)·quasi-tangent
        q1 = q1 - (h**2 / 4) * np.linalg.solve(projector, f)
        v1 = (2 / h) * q1 - hat_d
        lam = lam + alpha * (nm.phi(q1) + mu * (nm.phi_q(q1) @ v1))
    v1 = (2 / h) * q1 - hat_d
    a1 = (4 / h**2) * q1 - hat_dd
    if refit:
        pq = nm.phi_q(q1)
        v1 = v1 - w @ (s_pinv @ (pq @ v1))
        a1 = a1 - w @ (s_pinv @ (pq @ a1 + nm.phi_q_dot_qdot(q1, v1)))
        return q1, v1, a1, lam
    v1 = np.linalg.solve(projector, m_ @ v1)
    a1 = np.linalg.solve(projector, m_ @ a1 - (h**2 / 4) * pq.T @
                         (beta * nm.phi_q_dot_qdot(q1, v1)))
    if s.alpha is None:
        lam = (h**2 / 4) * beta * (pq @ np.linalg.solve(projector, pq.T @ lam))
    return q1, v1, a1, lam


def rk4_step(
    nm: NaturalModel, q: Array, qd: Array, qdd: Array, h: float, tau: Array | None = None,
    params: Array | None = None, projection_iterations: int = 2, lam: Array | None = None,
    alpha: Array | None = None, position_alpha: Array | None = None, iterations: int = 4,
    refinement: int = 2,
) -> tuple[Array, Array, Array, Array]:
    """One classical Runge-Kutta step (order 4) of the index-1 equations
    M q̈ + Φ_qᵀλ = Q, Φ_q q̈ + Φ̇_q q̇ = 0 (``qdd`` is the first stage), line for line what
    :func:`symgen.formulations.natural.step.rk4_step_program` generates: each later stage's
    q̈ by the augmented-Lagrangian iteration (book eq. 5.48-5.51,
    :func:`symgen.reference.loop_step.augmented_solve`: ``iterations`` multiplier updates
    from the previous stage's multipliers, the first from ``lam`` (zeros: None), then
    ``refinement`` on the residuals) with the penalty diagonal ``alpha``; then the
    mass-orthogonal coordinate projections by the same solves (Hairer & Wanner 1996,
    §VII.2; Bayo & Ledesma 1996): ``projection_iterations`` Newton steps
    Ā Δ + Φ_qᵀλ = 0, Φ_q Δ + Φ = 0 with the penalty diagonal ``position_alpha``, the
    velocities Ā q̇' + Φ_qᵀλ = Ā q̇, Φ_q q̇' = 0 at the projected q, and the accelerations and
    multipliers there, both with ``alpha`` (penalties: by default the model's,
    :meth:`NaturalModel.rk4_penalties`). Ā = M, or M + γΦ_qᵀΦ_q for a singular M (the
    right-hand side of the accelerations then Q − γΦ_qᵀΦ̇_q q̇: the same q̈ and λ). Returns
    q, q̇, q̈, λ at t + h; with redundant constraints λ is not unique (its dependent part is
    the one carried), Φ_qᵀλ is."""
    stage, position = nm.rk4_penalties()
    stage = stage if alpha is None else np.asarray(alpha, float)
    position = position if position_alpha is None else np.asarray(position_alpha, float)
    lam = np.zeros(nm.m) if lam is None else np.asarray(lam, float)

    def solve(pq: Array, r: Array, c: Array, start: Array | None, penalty: Array
              ) -> tuple[Array, Array]:
        return augmented_solve(_metric(nm, pq)[0], pq, penalty, r, c, start, iterations,
                               refinement)

    def accel(qs: Array, vs: Array, lam: Array, penalty: Array) -> tuple[Array, Array]:
        pq = nm.phi_q(qs)
        jdq = nm.phi_q_dot_qdot(qs, vs)
        forces = nm.generalized_forces(qs, vs, tau, params) - nm.metric_shift() * pq.T @ jdq
        return solve(pq, forces, jdq, lam, penalty)

    k1q, k1v = qd, qdd
    k2q = qd + h / 2 * k1v
    k2v, lam = accel(q + h / 2 * k1q, k2q, lam, stage)
    k3q = qd + h / 2 * k2v
    k3v, lam = accel(q + h / 2 * k2q, k3q, lam, stage)
    k4q = qd + h * k3v
    k4v, lam = accel(q + h * k3q, k4q, lam, stage)
    q1 = q + h / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
    v1 = qd + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
    for _ in range(projection_iterations):
        step, _ = solve(nm.phi_q(q1), np.zeros(nm.n), nm.phi(q1), None, position)
        q1 = q1 + step
    pq = nm.phi_q(q1)
    v1, _ = solve(pq, _metric(nm, pq)[0] @ v1, np.zeros(nm.m), None, stage)
    a1, lam = accel(q1, v1, lam, stage)
    return q1, v1, a1, lam


def _metric(nm: NaturalModel, pq: Array) -> tuple[Array, float]:
    """(A, γ): A = M + γΦ_qᵀΦ_q with γ = :meth:`.NaturalModel.metric_shift` (0 for a
    regular M), as the generated programs do."""
    gamma = nm.metric_shift()
    return np.asarray(nm.mass_matrix, float) + gamma * pq.T @ pq, gamma


def _range_space(nm: NaturalModel, q: Array) -> tuple[Array, Array]:
    """W = A⁻¹Φ_qᵀ and the pseudo-inverse of S = Φ_q W (redundant rows: rank-deficient S)."""
    pq = nm.phi_q(q)
    w = np.linalg.solve(_metric(nm, pq)[0], pq.T)
    return w, np.linalg.pinv(pq @ w, rcond=1e-10, hermitian=True)


def assemble(nm: NaturalModel, q_guess: Array, fixed: Sequence[int] = (),
             tol: float = 1e-12, max_iter: int = 50) -> Array:
    """Newton-Raphson on Φ(q) = 0 from a rough guess, in least-squares form (book eq. 3.15,
    minimum-norm steps: redundant constraints are fine); the coordinates ``fixed`` keep
    their guessed values (e.g. the input angle)."""
    q = np.array(q_guess, dtype=float)
    free = [i for i in range(nm.n) if i not in set(fixed)]
    for _ in range(max_iter):
        phi = nm.phi(q)
        if np.max(np.abs(phi), initial=0.0) < tol:
            return q
        step = np.linalg.lstsq(nm.phi_q(q)[:, free], -phi, rcond=None)[0]
        q[free] += step
    residual = np.abs(nm.phi(q)).max()
    raise RuntimeError(f"{nm.name}: assembly did not converge (|Φ| = {residual:.2e})")


def consistent_velocities(nm: NaturalModel, q: Array, known: dict[int, float]) -> Array:
    """The q̇ of least kinetic energy ½q̇ᵀMq̇ with Φ_q q̇ = 0 and the given coordinate rates
    (redundant constraints allowed): with M = LLᵀ and q̇ = L⁻ᵀy, y is the minimum-norm
    least-squares solution, so no idle motion (a bar's spin) is invented. With a singular M
    (covered by the constraints) the weight is M + γAᵀA, A the stacked rows: on the feasible
    set q̇ᵀAᵀAq̇ is constant, so the minimiser is the same."""
    rows = [nm.phi_q(q)]
    rhs = [np.zeros(nm.m)]
    for index, value in known.items():
        e = np.zeros((1, nm.n))
        e[0, index] = 1.0
        rows.append(e)
        rhs.append(np.array([value]))
    weight = nm.mass_matrix
    if not nm.mass_matrix_regular:
        stacked = np.vstack(rows)
        gamma = np.linalg.eigvalsh(weight)[-1] / max(np.linalg.norm(stacked, 2) ** 2, 1e-300)
        weight = weight + gamma * stacked.T @ stacked
    chol = np.linalg.cholesky(weight)
    a = np.vstack(rows) @ np.linalg.inv(chol).T
    y = np.linalg.lstsq(a, np.concatenate(rhs), rcond=None)[0]
    qd = np.linalg.solve(chol.T, y)
    residual = np.max(np.abs(nm.phi_q(q) @ qd), initial=0.0)
    if residual > 1e-9 * max(np.max(np.abs(qd), initial=0.0), 1.0):
        raise SymgenError(f"{nm.name}: the given rates are not compatible with the "
                          f"constraints (residual {residual:.1e})")
    return qd


__all__ = [
    "StepSettings",
    "assemble",
    "augmented_lagrangian_accelerations",
    "consistent_velocities",
    "lagrange_accelerations",
    "rk4_step",
    "trapezoidal_step",
]
