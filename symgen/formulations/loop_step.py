"""Integration steps of a tree closed by loop joints, in joint coordinates, as straight-line
programs: the kernels ``loop_step`` (implicit), ``loop_step_rk4`` (explicit) and
``loop_project`` (the projections alone).

The equations of motion, in the rows Φ(q) = 0 the loop analysis keeps independent
(:mod:`.loop_constraints`) and with the augmented-Lagrangian multipliers λ,

    M(q) q̈ + C(q, q̇) + Gᵀλ = τ + Q(q, q̇),    Φ(q) = 0,    G = ∂Φ/∂q,

(M, C by the tree's recursions, Q the force elements, G on the tangent space of q), are
integrated by García de Jalón & Bayo's methods (*Kinematic and Dynamic Simulation of
Multibody Systems*, 1994), written in relative coordinates:

- ``loop_step``: the index-3 augmented Lagrangian with the trapezoidal rule (§8.5,
  eq. 8.124–8.135): the unknown is the step Δ on the tangent space at q (q₁ = q ⊕ Δ, so
  quaternion joints stay unit), q̇₁ = (2/h)Δ − q̇, q̈₁ = (4/h²)Δ − (4/h)q̇ − q̈; Newton on
  f(Δ) = M q̈₁ + C + Gᵀ(α(Φ + μΦ̇) + λ*) − τ − Q with the quasi-tangent (4/h²)M + GᵀβG,
  β = α(1 + 2μ/h); λ* ← λ* + α(Φ + μΦ̇) after each iteration (eq. 8.126); then
  mass-orthogonal projections of q̇ and q̈ (Bayo & Ledesma, "Augmented Lagrangian and
  mass-orthogonal projection methods for constrained multibody dynamics", Nonlinear
  Dynamics 9, 1996). The multipliers carried to the next step are re-fitted to the force
  they exert and the projections are exact at h ≤ 1 ms, as in the natural-coordinate
  step (:func:`symgen.formulations.natural.step.step_program` explains why: near a
  singular position λ grows as 1/θ while Gᵀλ stays smooth); above, the penalised
  projections and the multiplier filter.
- ``loop_step_rk4``: the classical Runge-Kutta method on the index-1 equations, each
  stage's q̈ by the augmented-Lagrangian iteration at acceleration level (eq. 5.48–5.51),
  (M + GᵀAG) q̈ᵢ₊₁ = τ + Q − C − Gᵀ(λᵢ + A Ġq̇), λᵢ₊₁ = λᵢ + A(G q̈ᵢ₊₁ + Ġq̇), started from
  the multipliers of the previous stage; then the coordinate projections onto Φ = 0 and
  G q̇ = 0, mass-orthogonal, by the same iteration (Hairer & Wanner, *Solving ODEs II*,
  §VII.2). The leading matrix M + GᵀAG is positive definite at singular positions, where
  the saddle-point system is singular: along a direction G loses, the iteration barely
  moves the multiplier it started from, so the constraint force is carried through the
  passage instead of being solved from a near-singular system.
- ``loop_project``: those projections of (q, q̇, q̈) alone, for initial states.

The iteration counts are fixed (straight-line programs) and the penalties chosen from the
model (:func:`step_penalty`) so that each multiplier update contracts the error of every
regular direction by 10⁴ or more at the assembled configuration
(:mod:`symgen.formulations.natural.penalty`). Each solve with M + GᵀAG is refined once on
the unpenalised equations (Higham, *Accuracy and Stability of Numerical Algorithms*, 2002,
ch. 12): the penalty costs cond·ε, which the refinement recovers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from symgen.formulations import sparse
from symgen.formulations.augmented import AugmentedSystem
from symgen.formulations.dense import Diagonal, Matrix, Vector, gram
from symgen.formulations.element_forces import element_forces
from symgen.formulations.integrate import integrate
from symgen.formulations.loop_constraints import bias, constraints, jacobian
from symgen.formulations.natural.penalty import (
    KAPPA_MAX,
    REFERENCE_STEP,
    PenaltyChoice,
    choose_penalty,
)
from symgen.formulations.recursions import inverse_dynamics, mass_matrix
from symgen.formulations.tree.hinges import SymbolicTree, build_tree
from symgen.ir.expr import ONE, ZERO, Expr
from symgen.ir.printer import evaluate
from symgen.ir.program import ProgramBuilder
from symgen.model import Model

#: Multiplier updates of each acceleration-level solve, and of its refinement.
ITERATIONS = 4
REFINEMENT_ITERATIONS = 2
#: Newton iterations of the position projection (the residual after an RK4 step is O(h⁵);
#: the constraints are smooth, so two Newton steps leave O(h²⁰)).
PROJECTION_ITERATIONS = 2
#: Multiplier contraction sought per update at acceleration level (:func:`loop_system`).
ACCELERATION_TARGET = 1e7
#: Newton iterations of the implicit step (the natural step's default).
STEP_ITERATIONS = 2


@dataclass(frozen=True)
class LoopSystem:
    """What the steps read of the model: the loop rows (K_α of every loop joint) and the
    independent ones among them, the snap tolerance, and the penalties."""

    model: Model
    rows: tuple[np.ndarray, ...]
    keep: tuple[int, ...]
    snap: float
    #: M and G (kept rows) at the assembled configuration, numbers
    mass: np.ndarray
    jac: np.ndarray
    #: acceleration-level penalty A (one per kept row) and the saddle pivot scales
    #: G_j M⁻¹ G_jᵀ at the assembled configuration
    alpha: np.ndarray
    scales: np.ndarray


class _Reference:
    """M and G at the assembled configuration, as the penalty rule reads a model
    (:class:`symgen.formulations.natural.penalty.NaturalModel`)."""

    def __init__(self, name: str, mass: np.ndarray, jac: np.ndarray) -> None:
        self.name, self.mass_matrix, self._jac = name, mass, jac
        self.q0 = np.zeros(mass.shape[0])

    @property
    def m(self) -> int:
        return self._jac.shape[0]

    def phi_q(self, q: Sequence[float]) -> np.ndarray:
        return self._jac

    def metric_shift(self, q: Sequence[float] | None = None) -> float:
        return 0.0


def reference_matrices(model: Model, rows: Sequence[np.ndarray], keep: Sequence[int],
                       q: np.ndarray, snap: float) -> tuple[np.ndarray, np.ndarray]:
    """M(q) and the kept rows of G(q), numbers, by evaluating the tree's own programs."""
    b = ProgramBuilder("reference_matrices", "M and G at a configuration")
    qs = b.input("q", model.nq)
    params = b.input("params", len(model.parameters)) if model.parameters else []
    tree = build_tree(model, b, qs, params, snap=snap)
    g_all = jacobian(b, tree, rows)
    b.output("M", (model.nv, model.nv), [x for row in mass_matrix(b, tree) for x in row])
    b.output("G", (len(keep), model.nv), [x for i in keep for x in g_all[i]])
    inputs: dict[str, object] = {"q": q}
    if model.parameters:
        inputs["params"] = [float(p.default) for p in model.parameters]
    out = evaluate(b.build(), **inputs)
    return out["M"], out["G"]


def loop_system(model: Model, rows: Sequence[np.ndarray], keep: Sequence[int],
                q_reference: np.ndarray, snap: float) -> LoopSystem:
    """The :class:`LoopSystem` of ``model``, penalties from M and G at ``q_reference``
    (the loop analysis' assembled configuration).

    The acceleration-level penalty is A = ρ D⁻¹, D = diag(G M⁻¹ Gᵀ) (Jacobi scaling: the
    constraints' units drop out), ρ = :data:`ACCELERATION_TARGET`/σ_min of the scaled
    matrix D^-½ G M⁻¹ Gᵀ D^-½, capped so that ρσ_max ≤ 10⁹ (the condition of M + GᵀAG
    relative to M; the refinement recovers the digits it costs). Each multiplier update
    then contracts the error of every regular direction by ≥ 10⁷, and the band around a
    singular position in which the iteration does not converge (ρσ ≲ 1 along the
    direction G loses, σ ∝ θ²) is ~ρ^-½ wide."""
    mass, jac = reference_matrices(model, rows, keep, q_reference, snap)
    scales = np.einsum("ij,ji->i", jac, np.linalg.solve(mass, jac.T))  # diag(G M⁻¹ Gᵀ)
    scales = np.where(scales > 1e-12 * float(scales.max(initial=0.0)), scales,
                      float(scales.max(initial=1.0)) or 1.0)
    scaled = jac @ np.linalg.solve(mass, jac.T) / np.sqrt(np.outer(scales, scales))
    eig = np.linalg.eigvalsh(scaled) if len(keep) else np.ones(1)
    sigma_min = float(eig[eig > 1e-10 * eig[-1]][0])
    rho = min(ACCELERATION_TARGET / sigma_min, KAPPA_MAX / float(eig[-1]))
    return LoopSystem(model, tuple(rows), tuple(keep), snap, mass, jac, rho / scales, scales)


def step_penalty(system: LoopSystem, h: float, mu: float) -> PenaltyChoice:
    """The implicit step's penalty for step ``h`` and damping ``mu``
    (:func:`symgen.formulations.natural.penalty.choose_penalty` on M and G at the assembled
    configuration)."""
    return choose_penalty(_Reference(system.model.name, system.mass, system.jac), h, mu)


@dataclass
class _Configuration:
    """The tree, M, G and Φ at one configuration of a program."""

    tree: SymbolicTree
    q: list[Expr]
    mass: Matrix
    jac: Matrix
    phi: Vector


def _configuration(b: ProgramBuilder, system: LoopSystem, q: Sequence[Expr],
                   params: Sequence[Expr]) -> _Configuration:
    model = system.model
    tree = build_tree(model, b, q, params, snap=system.snap)
    phi_all = constraints(b, tree, system.rows)
    g_all = jacobian(b, tree, system.rows)
    return _Configuration(tree, list(q), Matrix(mass_matrix(b, tree), model.nv),
                          Matrix([g_all[i] for i in system.keep], model.nv),
                          Vector([phi_all[i] for i in system.keep]))


def _loop_bias(b: ProgramBuilder, system: LoopSystem, at: _Configuration,
               v: Sequence[Expr]) -> Vector:
    """Ġ q̇ in the kept rows."""
    gamma = bias(b, at.tree, v, system.rows)
    return Vector([gamma[i] for i in system.keep])


def _applied(b: ProgramBuilder, system: LoopSystem, at: _Configuration, v: Sequence[Expr],
             tau: Sequence[Expr], params: Sequence[Expr]) -> Vector:
    """τ + Q(q, q̇): the joint forces and the model's force elements."""
    q_elements = element_forces(b, at.tree, at.q, v, params, system.snap)
    if q_elements is None:
        return Vector(tau)
    return (Vector(tau) + Vector(q_elements)).emit(b)


def _augmented(b: ProgramBuilder, system: LoopSystem, at: _Configuration) -> AugmentedSystem:
    """M + GᵀAG at ``at`` with the system's penalties, factored
    (:class:`symgen.formulations.augmented.AugmentedSystem`)."""
    return AugmentedSystem(b, at.mass, at.jac, system.alpha, ITERATIONS,
                           REFINEMENT_ITERATIONS)


def _accelerations(b: ProgramBuilder, system: LoopSystem, q: Sequence[Expr],
                   v: Sequence[Expr], tau: Sequence[Expr], params: Sequence[Expr],
                   lam: Sequence[Expr]) -> tuple[Vector, Vector]:
    """q̈ and λ at (q, q̇) by the augmented-Lagrangian iteration from ``lam``."""
    at = _configuration(b, system, q, params)
    rhs = (_applied(b, system, at, v, tau, params)
           - Vector(inverse_dynamics(b, at.tree, v, None))).emit(b)
    return _augmented(b, system, at).solve(rhs, _loop_bias(b, system, at, v), lam)


def project(b: ProgramBuilder, system: LoopSystem, q: Sequence[Expr], v: Sequence[Expr],
            params: Sequence[Expr]) -> tuple[list[Expr], Vector, _Configuration]:
    """q onto Φ = 0 by :data:`PROJECTION_ITERATIONS` Newton steps with the mass-orthogonal
    correction Δ (M Δ + Gᵀλ = 0, G Δ + Φ = 0), then q̇ onto G q̇ = 0 (M q̇₁ + Gᵀλ = M q̇,
    G q̇₁ = 0) at the projected q (Bayo & Ledesma 1996); returns q, q̇ and the configuration
    there."""
    model = system.model
    q = list(q)
    for _ in range(PROJECTION_ITERATIONS):
        at = _configuration(b, system, q, params)
        step, _ = _augmented(b, system, at).solve([ZERO] * model.nv, at.phi)
        q = integrate(b, model, q, list(step), ONE)
    at = _configuration(b, system, q, params)
    v, _ = _augmented(b, system, at).solve((at.mass @ v).emit(b),
                                                 [ZERO] * len(system.keep))
    return q, v, at


def project_accelerations(b: ProgramBuilder, system: LoopSystem, at: _Configuration,
                          v: Sequence[Expr], a: Sequence[Expr]) -> Vector:
    """q̈ onto G q̈ + Ġ q̇ = 0, mass-orthogonally (M q̈₁ + Gᵀλ = M q̈, G q̈₁ + Ġq̇ = 0), at the
    configuration ``at`` with the consistent rates ``v``."""
    return _augmented(b, system, at).solve((at.mass @ a).emit(b),
                                                 _loop_bias(b, system, at, v))[0]


def rk4_step(b: ProgramBuilder, system: LoopSystem, h: Expr, q: Sequence[Expr],
             v: Sequence[Expr], lam: Sequence[Expr], tau: Sequence[Expr],
             params: Sequence[Expr]) -> dict[str, list[Expr]]:
    """One classical Runge-Kutta step of size ``h`` (a program input) with projections
    (module docstring): stage configurations q ⊕ c·h·k (on the joint manifolds), τ held over
    the step."""
    model = system.model
    v = Vector(v)
    half, sixth = b.emit(0.5 * h), b.emit(h / 6.0)

    def scaled(s: Expr, x: Vector) -> Vector:
        return Vector(s * e for e in x)

    def at(step: Expr, rate: Vector) -> list[Expr]:
        return integrate(b, model, list(q), list(rate), step)

    k1v, lam = _accelerations(b, system, q, v, tau, params, lam)
    v2 = (v + scaled(half, k1v)).emit(b)
    k2v, lam = _accelerations(b, system, at(half, v), v2, tau, params, lam)
    v3 = (v + scaled(half, k2v)).emit(b)
    k3v, lam = _accelerations(b, system, at(half, v2), v3, tau, params, lam)
    v4 = (v + scaled(h, k3v)).emit(b)
    k4v, lam = _accelerations(b, system, at(h, v3), v4, tau, params, lam)
    rate = (v + 2 * v2 + 2 * v3 + v4).emit(b)
    v1 = (v + scaled(sixth, k1v + 2 * k2v + 2 * k3v + k4v)).emit(b)
    q1, v1, _ = project(b, system, at(sixth, rate), v1, params)
    return {"q_next": q1, "v_next": list(v1), "lam_next": list(lam)}


def _saddle(b: ProgramBuilder, system: LoopSystem, at: _Configuration) -> sparse.SparseLDLT:
    """[[M, Gᵀ], [G, 0]] factored; a multiplier pivot below 10⁻¹⁰ of its assembled size
    is dropped (a constraint dependent at a singular position: :func:`.sparse.factor_saddle`)."""
    return sparse.factor_saddle(b, at.mass, at.jac, [float(x) for x in system.scales])


def trapezoidal_step(b: ProgramBuilder, system: LoopSystem, h: float, q: Sequence[Expr],
                     v: Sequence[Expr], a: Sequence[Expr], lam: Sequence[Expr],
                     tau: Sequence[Expr], params: Sequence[Expr]) -> dict[str, list[Expr]]:
    """One index-3 augmented-Lagrangian trapezoidal step (module docstring; the natural
    step's algorithm, :func:`symgen.formulations.natural.step.step_program`, on the tangent
    space of q)."""
    model = system.model
    mu = h / 50.0
    penalty = step_penalty(system, h, mu)
    alpha = Diagonal(penalty.alpha)
    beta = Diagonal(x * (1 + 2 * mu / h) for x in penalty.alpha)  # eq. 8.133
    v, a, lam = Vector(v), Vector(a), Vector(lam)
    delta = (h * v + (0.5 * h * h) * a).emit(b)  # predictor, eq. 8.135

    def rates(step: Vector) -> tuple[Vector, Vector]:  # eq. 8.128-8.129
        return (((2 / h) * step - v).emit(b),
                ((4 / h**2) * step - (4 / h) * v - a).emit(b))

    def configuration(step: Vector) -> _Configuration:
        return _configuration(b, system, integrate(b, model, list(q), list(step), ONE), params)

    refit = h <= REFERENCE_STEP * (1 + 1e-9)
    if refit:  # λ* ← S⁻¹ G(q̃) M⁻¹ G(q)ᵀλ*: the carried force, re-fitted at the predictor
        start = _configuration(b, system, q, params)
        carried = (start.jac.T @ lam).emit(b)
        lam = Vector(sparse.solve_saddle(b, _saddle(b, system, configuration(delta)),
                                         list(carried), [ZERO] * len(lam))[1])
    factored = None
    for k in range(STEP_ITERATIONS):
        at = configuration(delta)
        v1, a1 = rates(delta)
        violation = (at.phi + mu * (at.jac @ v1)).emit(b)  # Φ + μΦ̇
        if k:
            lam = (lam + alpha @ violation).emit(b)  # eq. 8.126, after the previous iteration
        applied = _applied(b, system, at, v1, tau, params)
        residual = (Vector(inverse_dynamics(b, at.tree, v1, a1))
                    + at.jac.T @ (alpha @ violation + lam) - applied).emit(b)  # eq. 8.132
        tangent = ((4 / h**2) * at.mass + gram(b, at.jac, beta.d)).emit(b)  # eq. 8.134
        factored = sparse.factor_auto(b, tangent)
        delta = (delta - Vector(sparse.solve(b, factored, residual))).emit(b)  # eq. 8.131
        last = at
    at = configuration(delta)
    v1, a1 = rates(delta)
    lam = (lam + alpha @ (at.phi + mu * (at.jac @ v1))).emit(b)
    q1 = at.q
    if refit:  # mass-orthogonal projections of q, q̇ and q̈ at t + h
        q1, v1, at = project(b, system, q1, v1, params)
        a1 = project_accelerations(b, system, at, v1, a1)
    else:  # P = M + (h²/4)GᵀβG, the last factored tangent T = (4/h²)P: P⁻¹x = T⁻¹(4/h² x)
        assert factored is not None
        inertia = (4 / h**2) * last.mass
        v1 = Vector(sparse.solve(b, factored, (inertia @ v1).emit(b)))  # P q̇ = M q̇*
        jdq = _loop_bias(b, system, at, v1)
        force = (last.jac.T @ (beta @ jdq)).emit(b)
        a1 = Vector(sparse.solve(b, factored, ((inertia @ a1) - force).emit(b)))
        reach = sparse.solve(b, factored, (last.jac.T @ lam).emit(b))  # the filter
        lam = (beta @ (last.jac @ reach)).emit(b)
    return {"q_next": q1, "v_next": list(v1), "a_next": list(a1), "lam_next": list(lam)}


__all__ = ["ITERATIONS", "LoopSystem", "PROJECTION_ITERATIONS", "REFINEMENT_ITERATIONS",
           "STEP_ITERATIONS", "loop_system", "project", "project_accelerations",
           "reference_matrices", "rk4_step",
           "step_penalty", "trapezoidal_step"]
