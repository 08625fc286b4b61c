"""The natural-coordinate integration steps as straight-line programs:

- ``nc_step``: one step of the index-3 augmented Lagrangian with the trapezoidal rule
  (García de Jalón & Bayo 1994, §8.5, eq. 8.124-8.135): positions as unknowns, a fixed
  number of Newton iterations on the quasi-tangent (4/h²)M + Φ_qᵀβΦ_q (unrolled sparse
  LDLᵀ), the Heun/Taylor predictor and mass-orthogonal projections; for closed loops at
  steps up to 1 ms the carried multipliers re-fitted to their force and exact
  projections, which keep the step second order through singular positions; h, α, μ and
  the iteration count are baked in;
- ``nc_step_rk4``: one classical Runge-Kutta step of the index-1 equations, each stage's
  accelerations by the augmented-Lagrangian iteration (eq. 5.48-5.51) carried from stage to
  stage, with mass-orthogonal coordinate projections (Hairer & Wanner 1996, §VII.2; Bayo &
  Ledesma 1996) by the same solves: fourth order, and robust through singular positions
  and redundant constraints.

Both are written in the vector algebra of :mod:`symgen.formulations.dense`, line for line
their numpy twins :func:`symgen.reference.natural.trapezoidal_step` and
:func:`symgen.reference.natural.rk4_step`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from symgen.formulations import sparse
from symgen.formulations.augmented import AugmentedSystem
from symgen.formulations.dense import Diagonal, Matrix, Vector, gram
from symgen.formulations.natural.kernels import Evaluator, NaturalOptions, saddle
from symgen.formulations.natural.model import NaturalModel
from symgen.formulations.natural.penalty import rk4_penalties
from symgen.ir.expr import ZERO, Expr
from symgen.ir.program import Program, ProgramBuilder

#: Newton iterations of the position projection of :func:`rk4_step_program`: the residual
#: after an RK4 step is O(h⁵) and the constraints are quadratic, so two Newton steps leave
#: O(h²⁰).
PROJECTION_ITERATIONS = 2
#: Multiplier updates of each augmented-Lagrangian solve of :func:`rk4_step_program`, and of
#: its refinement (:class:`_Augmented`).
ITERATIONS = 4
REFINEMENT_ITERATIONS = 2


def step_program(nm: NaturalModel, opts: NaturalOptions) -> Program:
    """One index-3 augmented-Lagrangian trapezoidal step (book §8.5; it reproduces
    :func:`symgen.reference.natural.trapezoidal_step` operation for operation):

    q̇ = (2/h) q − q̂̇, q̈ = (4/h²) q − q̂̈ (eq. 8.128-8.129); Newton on
    f(q) = M q̈ + Φ_qᵀ(α(Φ + μΦ̇) + λ*) − Q (eq. 8.131-8.132) with the quasi-tangent
    (4/h²)M + Φ_qᵀβΦ_q, β = α(1 + 2μ/h) (eq. 8.133-8.134), from the predictor
    q̃ = q + h q̇ + (h²/2) q̈ (eq. 8.135); λ* ← λ* + α(Φ + μΦ̇) after each iteration
    (eq. 8.126). The multipliers carried from step to step and the projections depend on h
    (:meth:`.model.NaturalModel.step_refits`):

    - **closed loops, h ≤ 1 ms** (the penalty rule's reference step): before the
      iterations the carried multipliers are re-fitted to the force they exert,
      λ* ← S⁻¹Φ_q(q̃) A⁻¹ Φ_q(q)ᵀλ*,
      S = Φ_q(q̃) A⁻¹ Φ_q(q̃)ᵀ (the saddle-point factorization of ``nc_accelerations`` at the
      predictor: A = M, or M + γΦ_qᵀΦ_q for a singular M; semidefinite, so redundant rows
      get 0); after them, exact mass-orthogonal projections with the same factorization,
      q̇ ← q̇ − W S⁻¹ Φ_q q̇, q̈ ← q̈ − W S⁻¹(Φ_q q̈ + Φ̇_q q̇), W = A⁻¹Φ_q(q̃)ᵀ, Φ_q at q + h;
    - **open chains** (no singular position to pass), **h > 1 ms**: the multipliers
      carried as they are, the projections P q̇ = M q̇*,
      P q̈ = M q̈* − (h²/4)Φ_qᵀβ Φ̇_q q̇ with the last factored quasi-tangent
      (P = M + (h²/4)Φ_qᵀβΦ_q; Bayo & Ledesma 1996) and (model-derived penalty) the
      multiplier filter λ* ← (h²/4) β Φ_q P⁻¹ Φ_qᵀ λ*.

    **Why** (docs/natural.md has the measurements). Near a singular position Φ_q loses rank
    along one direction (the 4-bar chain: the cranks horizontal, θ = 0): the exact
    multipliers grow as 1/θ while the force Φ_qᵀλ they exert stays finite and smooth. The
    book's update contracts the multiplier error along a direction of scaled compliance a
    by 1/(1 + a) per iteration, and a ∝ ρθ² there; the filter drops what the iterations
    cannot converge (a/(1 + a)), which stops its windup but also removes that force. So
    over a band |θ| ≲ (ρσ₀)^-½ of fixed width (~10⁻² rad) the step lacked an O(1) part of
    the constraint force: an impulse error per passage independent of h, and since ρ ∝ h
    below 1 ms the band even widened as h shrank (the 40-loop chain over 20 s: 3-10·10⁻⁴ m
    at every h from 5·10⁻⁴ to 10⁻⁵ s; the 2-loop chain about first order). The
    carried force is smooth through the passage, so re-fitting λ* to it at q̃ gives the
    1/θ multiplier the iterations cannot build (its error is the force's change over the
    step), and drops what exerts no force (the windup the filter was for). The penalised
    projections, soft in the same band, then let a kick from a step landing within the
    pivot tolerance of the singular position (|θ| ≲ 10⁻⁵) ring in the trapezoidal rule's
    undamped (−1)ⁿ mode; the exact ones remove it at the next step. The step is then second
    order through the passages down to the rounding floor. At coarse steps the exact
    projections turn the step's position error along the singular direction (off the
    branch) into a velocity error (position error)·|q̇|/θ at a step landing near the
    singular position (the 2-loop chain left its branch at h = 3 and 10 ms), where the
    penalised ones are soft: hence the switch at the reference step, which like the penalty
    rule assumes motions of a few Hz (hω ≲ 10⁻²). Cost: one saddle-point factorization and
    three solves per step (the 40-loop chain: 29,241 operations instead of 20,579)."""
    ev = Evaluator(nm)
    n, m = nm.n, nm.m
    h = opts.step
    choice = opts.penalty(nm)
    if choice.warning:
        warnings.warn(choice.warning, stacklevel=2)
    mu = opts.damping
    A = Diagonal(choice.alpha)  # α
    B = Diagonal(a * (1 + 2 * mu / h) for a in A.d)  # β = α(1 + 2μ/h), eq. 8.133
    M = Matrix.constant(np.asarray(nm.mass_matrix, float))
    inertia = (4 / h**2) * M  # ∂(M q̈)/∂q
    b = ProgramBuilder("nc_step", f"one augmented-Lagrangian trapezoidal step, h = {h:g} s")
    q = Vector(b.input("q", n, "natural coordinates at t"))
    qd = Vector(b.input("qd", n, "natural velocities at t"))
    qdd = Vector(b.input("qdd", n, "natural accelerations at t"))
    lam = Vector(b.input("lam", m, "augmented-Lagrangian multipliers (zeros at the start)"))
    tau = b.input("tau", len(nm.actuated), "joint forces/torques over the step") \
        if nm.actuated else []
    hat_d = (qd + (2 / h) * q).emit(b)  # q̂̇, eq. 8.129
    hat_dd = (qdd + (4 / h) * qd + (4 / h**2) * q).emit(b)  # q̂̈
    q1 = (q + h * qd + 0.5 * h * h * qdd).emit(b)  # predictor, eq. 8.135
    refit = nm.step_refits(h)
    if refit:
        # S = Φ_q A⁻¹ Φ_qᵀ factored at the predictor q̃ (the saddle-point system of
        # nc_accelerations); λ* ← S⁻¹Φ_q(q̃) A⁻¹ Φ_q(q)ᵀλ*: the carried force, re-fitted
        schur = saddle(b, nm, ev.phi_q(b, q1))
        carried = (ev.phi_q(b, q).T @ lam).emit(b)
        lam = Vector(schur.solve(carried, [ZERO] * m)[1])
    for _ in range(opts.iterations):
        v1 = ((2 / h) * q1 - hat_d).emit(b)  # eq. 8.128
        a1 = ((4 / h**2) * q1 - hat_dd).emit(b)
        pq = ev.phi_q(b, q1)
        phi = ev.phi(b, q1)
        rate = (pq @ v1).emit(b)  # Φ̇ = Φ_q q̇
        weight = (A @ (phi + mu * rate) + lam).emit(b)  # α(Φ + μΦ̇) + λ*
        force = (pq.T @ weight).emit(b)
        ma = (M @ a1).emit(b)
        forces = ev.forces(b, q1, v1, tau)
        f = (ma + force - forces).emit(b)  # eq. 8.132
        tangent = (inertia + gram(b, pq, B.d)).emit(b)  # eq. 8.134
        factored = sparse.factor_auto(b, tangent)
        step = sparse.solve(b, factored, f)
        q1 = (q1 - step).emit(b)  # eq. 8.131
        v1 = ((2 / h) * q1 - hat_d).emit(b)
        phi = ev.phi(b, q1)
        rate = (ev.phi_q(b, q1) @ v1).emit(b)
        lam = (lam + A @ (phi + mu * rate)).emit(b)  # eq. 8.126
    v1 = ((2 / h) * q1 - hat_d).emit(b)
    a1 = ((4 / h**2) * q1 - hat_dd).emit(b)
    if refit:  # mass-orthogonal projections onto Φ_q q̇ = 0, Φ_q q̈ + Φ̇_q q̇ = 0 at q + h
        pq = ev.phi_q(b, q1)
        v1 = (v1 + schur.correction(b, n, (pq @ v1).emit(b))).emit(b)
        jdq = ev.phi_q_dot_qdot(b, q1, v1)
        a1 = (a1 + schur.correction(b, n, (pq @ a1 + jdq).emit(b))).emit(b)
    else:
        # the projections reuse the last iteration's factored quasi-tangent T = (4/h²)P,
        # P = M + (h²/4)Φ_qᵀβΦ_q with Φ_q of that iterate: P⁻¹x = T⁻¹((4/h²)x)
        v1 = Vector(sparse.solve(b, factored, (inertia @ v1).emit(b)))  # P q̇ = M q̇*
        jdq = ev.phi_q_dot_qdot(b, q1, v1)
        bias = (pq.T @ (B @ jdq).emit(b)).emit(b)
        ma = (inertia @ a1).emit(b)
        a1 = sparse.solve(b, factored, (ma - bias).emit(b))  # P q̈ = M q̈* − (h²/4)Φ_qᵀβΦ̇_q q̇
        if opts.alpha is None:  # the multiplier filter (reference.natural.trapezoidal_step)
            reach = sparse.solve(b, factored, (pq.T @ lam).emit(b))
            lam = (B @ (pq @ reach).emit(b)).emit(b)
    b.output("q_next", n, q1, "natural coordinates at t + h")
    b.output("qd_next", n, v1, "natural velocities at t + h (projected)")
    b.output("qdd_next", n, a1, "natural accelerations at t + h (projected)")
    b.output("lam_next", m, lam, "multipliers to pass to the next step")
    return b.build()


class _Augmented(AugmentedSystem):
    """:class:`symgen.formulations.augmented.AugmentedSystem` of a configuration of the
    natural model: Ā = M, or M + γΦ_qᵀΦ_q for a singular M
    (:meth:`.NaturalModel.metric_shift`), :data:`ITERATIONS` and
    :data:`REFINEMENT_ITERATIONS` updates."""

    def __init__(self, b: ProgramBuilder, nm: NaturalModel, pq: Matrix,
                 alpha: Diagonal) -> None:
        super().__init__(b, Matrix.constant(np.asarray(nm.mass_matrix, float)), pq, alpha.d,
                         ITERATIONS, REFINEMENT_ITERATIONS, nm.metric_shift())
        self.pq, self.gamma = pq, self.shift

    def accelerations(self, forces: Sequence[Expr], jdq: Sequence[Expr],
                      lam: Sequence[Expr]) -> tuple[Vector, Vector]:
        """q̈ and λ of M q̈ + Φ_qᵀλ = Q, Φ_q q̈ + Φ̇_q q̇ = 0 from ``lam``: with Ā the right-hand
        side Q − γΦ_qᵀΦ̇_q q̇ (adding γΦ_qᵀ(Φ_q q̈ + Φ̇_q q̇) = 0 changes neither q̈ nor λ)."""
        r = Vector(forces)
        if self.gamma:
            r = r - self.gamma * (self.pq.T @ jdq)
        return self.solve(r.emit(self.b), jdq, lam)


def rk4_step_program(nm: NaturalModel, opts: NaturalOptions) -> Program:
    """One classical Runge-Kutta step (order 4) of the index-1 equations
    M q̈ + Φ_qᵀλ = Q, Φ_q q̈ + Φ̇_q q̇ = 0, each stage's q̈ by the augmented-Lagrangian
    iteration at acceleration level (García de Jalón & Bayo 1994, eq. 5.48-5.51;
    :class:`_Augmented`) started from the previous stage's multipliers, then the coordinate
    projections (Hairer & Wanner, *Solving ODEs II*, 1996, §VII.2) by the same solves,
    mass-orthogonal (Bayo & Ledesma, Nonlinear Dynamics 9, 1996): :data:`PROJECTION_ITERATIONS`
    Newton steps Ā Δ + Φ_qᵀλ = 0, Φ_q Δ + Φ = 0, then Ā q̇' + Φ_qᵀλ = Ā q̇, Φ_q q̇' = 0 at
    the projected q; and the accelerations and multipliers at the new state (the next
    step's first stage and starting multipliers). Input ``qdd`` is the first stage (the
    previous step's ``qdd_next``, or ``nc_accelerations`` at a consistent state), ``lam``
    the multipliers the second stage starts from (the previous step's ``lam_next``,
    ``nc_accelerations``' λ, or zeros). Penalties (:func:`.penalty.rk4_penalties`):
    ρσ_max = 10⁷ for the accelerations and the velocity projection, ρ = 10⁷/σ_min (capped
    at ρσ_max = 10⁹) for the position projection.

    **Why an iteration instead of the exact saddle-point solve** (docs/natural.md has the
    measurements). Where Φ_q loses rank (a singular position; σ ∝ θ² along the direction
    it loses) the saddle-point system is singular, and a stage near it divided the
    inconsistency of its off-manifold state by a near-zero pivot: the errors scattered
    with h instead of converging. The leading matrix Ā + Φ_qᵀAΦ_q stays positive definite
    there; along the lost direction the iteration contracts by only 1/(1 + ρσ), so it
    barely moves the multiplier it started from and carries the constraint force through
    the passage (over a band ~(ρσ₀)^-½ wide). A redundant constraint (Bricard's linkage)
    is such a direction everywhere: its multiplier is carried, the force Φ_qᵀλ is unique;
    off the manifold, at the stage states, it is nearly but not exactly dependent, and the
    force of the exact solve's multiplier along it grows as 1/h (with the exact solve and
    its semidefinite pivots, Bricard's linkage left its constraints at 0.55 s at 1 ms).
    Reference: :func:`symgen.reference.natural.rk4_step`."""
    ev = Evaluator(nm)
    n, m = nm.n, nm.m
    stage_penalty, position_penalty = (Diagonal(p.alpha) for p in rk4_penalties(nm))
    b = ProgramBuilder("nc_step_rk4", "one index-1 Runge-Kutta 4 step (augmented-Lagrangian "
                       "accelerations) with projections")
    q = Vector(b.input("q", n, "natural coordinates at t (assembled)"))
    qd = Vector(b.input("qd", n, "natural velocities at t (consistent)"))
    qdd = Vector(b.input("qdd", n, "natural accelerations at t, the first stage (the "
                         "previous step's qdd_next, or nc_accelerations)"))
    lam = Vector(b.input("lam", m, "multipliers the second stage starts from (the previous "
                         "step's lam_next, nc_accelerations' lam, or zeros)"))
    h = b.input("dt", 1, "the step h, s")[0]  # before tau, which may be empty (a default)
    tau = b.input("tau", len(nm.actuated), "joint forces/torques over the step") \
        if nm.actuated else []
    half, sixth = b.emit(0.5 * h), b.emit(h / 6.0)

    def scaled(s: Expr, x: Vector) -> Vector:
        return Vector(s * e for e in x)

    def accel(qs: Vector, vs: Vector, lam: Vector) -> tuple[Vector, Vector]:
        pq = ev.phi_q(b, qs)
        solver = _Augmented(b, nm, pq, stage_penalty)
        return solver.accelerations(ev.forces(b, qs, vs, tau), ev.phi_q_dot_qdot(b, qs, vs),
                                    lam)

    k1q, k1v = qd, qdd
    q2, k2q = (q + scaled(half, k1q)).emit(b), (qd + scaled(half, k1v)).emit(b)
    k2v, lam = accel(q2, k2q, lam)
    q3, k3q = (q + scaled(half, k2q)).emit(b), (qd + scaled(half, k2v)).emit(b)
    k3v, lam = accel(q3, k3q, lam)
    q4, k4q = (q + scaled(h, k3q)).emit(b), (qd + scaled(h, k3v)).emit(b)
    k4v, lam = accel(q4, k4q, lam)
    q1 = (q + scaled(sixth, k1q + 2 * k2q + 2 * k3q + k4q)).emit(b)
    v1 = (qd + scaled(sixth, k1v + 2 * k2v + 2 * k3v + k4v)).emit(b)
    for _ in range(PROJECTION_ITERATIONS):  # Ā Δ + Φ_qᵀλ = 0, Φ_q Δ + Φ = 0
        solver = _Augmented(b, nm, ev.phi_q(b, q1), position_penalty)
        step, _ = solver.solve([ZERO] * n, ev.phi(b, q1))
        q1 = (q1 + step).emit(b)
    solver = _Augmented(b, nm, ev.phi_q(b, q1), stage_penalty)
    v1, _ = solver.solve(solver.metric(v1), [ZERO] * m)  # Ā q̇' + Φ_qᵀλ = Ā q̇, Φ_q q̇' = 0
    a1, lam = solver.accelerations(ev.forces(b, q1, v1, tau), ev.phi_q_dot_qdot(b, q1, v1),
                                   lam)
    b.output("q_next", n, q1, "natural coordinates at t + h (projected)")
    b.output("qd_next", n, v1, "natural velocities at t + h (projected)")
    b.output("qdd_next", n, a1, "natural accelerations at t + h (the next step's qdd)")
    b.output("lam_next", m, lam, "multipliers at t + h (the next step's lam)")
    return b.build()


__all__ = ["ITERATIONS", "PROJECTION_ITERATIONS", "REFINEMENT_ITERATIONS", "rk4_step_program",
           "step_program"]
