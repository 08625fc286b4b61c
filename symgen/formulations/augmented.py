"""The augmented-Lagrangian solve shared by the integration steps of both coordinate
families (:mod:`.loop_step` in joint coordinates, :mod:`.natural.step` in natural ones).

García de Jalón & Bayo (*Kinematic and Dynamic Simulation of Multibody Systems*, 1994,
eq. 5.48–5.51): the system M x + Gᵀλ = r, G x + c = 0 is solved by

    (M̄ + GᵀAG) x = r − Gᵀ(λ + A c),    λ ← λ + A(G x + c),

from given multipliers, M̄ = M + γGᵀG (γ > 0 only for a singular M whose null space the
constraints cover). The leading matrix is positive definite at singular positions and with
dependent rows, where the saddle-point system is singular. The solve is refined once on
the residuals of the unpenalised equations (iterative refinement, Higham, *Accuracy and
Stability of Numerical Algorithms*, 2002, ch. 12): the penalty costs cond·ε, which the
refinement recovers.
"""

from __future__ import annotations

from collections.abc import Sequence

from symgen.formulations import sparse
from symgen.formulations.dense import Diagonal, Matrix, Vector, gram
from symgen.ir.expr import ZERO, Expr
from symgen.ir.program import ProgramBuilder


class AugmentedSystem:
    """M̄ + GᵀAG factored at one configuration (sparse LDLᵀ) and the augmented-Lagrangian
    solve (module docstring): ``iterations`` multiplier updates, then ``refinement`` more
    on the residuals. ``mass`` M, ``jac`` G, ``alpha`` the penalties A (one per row),
    ``shift`` γ."""

    def __init__(self, b: ProgramBuilder, mass: Matrix, jac: Matrix, alpha: Sequence[float],
                 iterations: int, refinement: int, shift: float = 0.0) -> None:
        self.b, self.mass, self.jac, self.shift = b, mass, jac, shift
        self.alpha = Diagonal(alpha)
        self.iterations, self.refinement = iterations, refinement
        lead = mass + gram(b, jac, [a + shift for a in self.alpha.d])
        self.factored = sparse.factor_auto(b, lead.emit(b))

    def metric(self, x: Sequence[Expr]) -> Vector:
        """M̄ x."""
        out = self.mass @ x
        if self.shift:
            out = out + self.shift * (self.jac.T @ (self.jac @ x).emit(self.b))
        return out.emit(self.b)

    def _iterate(self, r: Vector, c: Vector, lam: Vector, iterations: int
                 ) -> tuple[Vector, Vector]:
        b, g, a = self.b, self.jac, self.alpha
        penalised = (a @ c).emit(b)

        def primal(lam_: Vector) -> Vector:
            rhs = (r - g.T @ (lam_ + penalised).emit(b)).emit(b)
            return Vector(sparse.solve(b, self.factored, rhs))

        x = primal(lam)
        for _ in range(iterations):
            lam = (lam + a @ (g @ x + c)).emit(b)
            x = primal(lam)
        return x, lam

    def solve(self, r: Sequence[Expr], c: Sequence[Expr], lam: Sequence[Expr] | None = None
              ) -> tuple[Vector, Vector]:
        """(x, λ) of M̄ x + Gᵀλ = r, G x + c = 0 from the multipliers ``lam`` (zeros:
        None), refined once."""
        b, g, m = self.b, self.jac, len(self.alpha.d)
        r, c = Vector(r).emit(b), Vector(c).emit(b)
        start = Vector(lam) if lam is not None else Vector([ZERO] * m)
        x, lam_ = self._iterate(r, c, start, self.iterations)
        residual = (r - self.metric(x) - g.T @ lam_).emit(b)
        error = (g @ x + c).emit(b)
        dx, dlam = self._iterate(residual, error, Vector([ZERO] * m), self.refinement)
        return (x + dx).emit(b), (lam_ + dlam).emit(b)


__all__ = ["AugmentedSystem"]
