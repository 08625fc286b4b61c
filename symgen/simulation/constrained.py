"""Augmented-Lagrangian solves and mass-orthogonal projections in joint coordinates.

García de Jalón & Bayo (1994), §5.1: the dynamic equations of a constrained system,
M q̈ + Φ_qᵀ λ = Q, Φ_q q̈ + Φ̇_q q̇ = 0, are solved by the augmented-Lagrangian iteration

    (M + α Φ_qᵀ Φ_q) q̈ᵢ₊₁ = Q − Φ_qᵀ (λᵢ + α Φ̇_q q̇),    λᵢ₊₁ = λᵢ + α (Φ_q q̈ᵢ₊₁ + Φ̇_q q̇)

(eq. 5.48–5.51, the Baumgarte terms left out: the projections below restore the constraints
after every step instead). The leading matrix is positive definite whatever the rank of Φ_q,
so the iteration passes singular positions and redundant constraints where the saddle-point
system is singular (the book's remark after eq. 5.37). The same iteration applied to
min ½ xᵀ M x − bᵀx subject to Φ_q x + c = 0 gives the mass-orthogonal projections of
positions (b = 0, c = Φ: a Newton step towards Φ = 0, least-norm in the metric of M) and of
velocities (b = M q̇*, c = 0) of Bayo & Ledesma, "Augmented Lagrangian and mass-orthogonal
projection methods for constrained multibody dynamics", Nonlinear Dynamics 9 (1996).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Array = np.ndarray

#: Penalty α relative to the mean diagonal of M over the mean diagonal of Φ_qᵀΦ_q. Each
#: iteration contracts the constraint error by 1/(1 + α σ²) on a direction of singular value
#: σ (relative), so a large α converges in fewer iterations; but the solve loses
#: cond(M + αΦ_qᵀΦ_q)·ε of accuracy, which the iteration does not recover (the book's 1e7
#: is for the penalty method alone). 1e4: 4–6 iterations on regular configurations,
#: accelerations to ~1e-12 relative (Andrews' squeezer, cond ≈ 5e5).
PENALTY = 1e4
#: Largest number of multiplier updates per solve.
MAX_ITERATIONS = 300
#: A solve stops when the constraint error falls below this, relative to
#: max(1, |c|, |Φ_q|·|x|), or when it stops halving (the rounding floor).
TOLERANCE = 1e-14
STAGNATION = 1.0


@dataclass
class ConstrainedSolver:
    """The augmented-Lagrangian solve of one configuration: ``M`` and the constraint
    Jacobian ``G`` (rows × nv, any rank). ``solve(b, c, lam)`` returns (x, λ) minimising
    ½ xᵀMx − bᵀx subject to G x + c = 0 (see the module docstring)."""

    mass: Array
    jacobian: Array
    penalty_scale: float | None = None

    def __post_init__(self) -> None:
        m, g = self.mass, self.jacobian
        scale_m = float(np.trace(m)) / max(1, m.shape[0])
        scale_g = float(np.sum(g * g)) / max(1, m.shape[0])
        penalty = PENALTY if self.penalty_scale is None else self.penalty_scale
        self.alpha = penalty * scale_m / scale_g if scale_g > 0 else 0.0
        lower = np.linalg.cholesky(m + self.alpha * (g.T @ g))
        inverse_lower = np.linalg.solve(lower, np.eye(m.shape[0]))
        self.inverse = inverse_lower.T @ inverse_lower

    def solve(self, b: Array, c: Array, lam: Array | None = None) -> tuple[Array, Array]:
        """(x, λ) with M x + Gᵀλ = b and G x + c = 0, by the iteration and one step of
        iterative refinement on both equations (the solve with M + αGᵀG loses
        cond·ε, which the refinement recovers)."""
        x, lam = self._iterate(b, c, lam)
        residual = b - self.mass @ x - self.jacobian.T @ lam
        dx, dlam = self._iterate(residual, self.jacobian @ x + c, None)
        return x + dx, lam + dlam

    def _iterate(self, b: Array, c: Array, lam: Array | None) -> tuple[Array, Array]:
        g, alpha = self.jacobian, self.alpha
        lam = np.zeros(g.shape[0]) if lam is None else lam.copy()
        x = self.inverse @ (b - g.T @ (lam + alpha * c))
        previous = np.inf
        size_g = float(np.max(np.abs(g), initial=0.0))
        for _ in range(MAX_ITERATIONS):
            error = g @ x + c
            lam += alpha * error
            size = float(np.max(np.abs(error), initial=0.0))
            scale = max(1.0, float(np.max(np.abs(c), initial=0.0)),
                        size_g * float(np.max(np.abs(x), initial=0.0)))
            if size <= TOLERANCE * scale or size >= STAGNATION * previous:
                break
            previous = size
            x = self.inverse @ (b - g.T @ (lam + alpha * c))
        return x, lam


__all__ = ["ConstrainedSolver", "MAX_ITERATIONS", "PENALTY", "TOLERANCE"]
