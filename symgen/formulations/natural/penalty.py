"""The penalty matrix of the index-3 augmented-Lagrangian step, chosen from the model.

The step (García de Jalón & Bayo 1994, §8.5; Bayo & Ledesma 1996) solves, for the positions
q at t + h, f(q) = M q̈ + Φ_qᵀ(A(Φ + μΦ̇) + λ*) − Q = 0 with q̈ = (4/h²)q − q̂̈, and updates
the multipliers λ* ← λ* + A(Φ + μΦ̇) after each Newton iteration. A = diag(α_i) is the
penalty matrix.

**Contraction.** Linearised at a configuration (B = Φ_q, K = (4/h²)M the inertia part of
the tangent), the multiplier error after one update is multiplied by

    (I + A S')⁻¹,   S' = B K⁻¹ Bᵀ = (h²/4) Φ_q M⁻¹ Φ_qᵀ,

the augmented-Lagrangian (method of multipliers) contraction of Hestenes and Powell for a
quadratic objective with linear constraints: A S' is similar to A^½ S' A^½, whose
eigenvalues a_k give the factors 1/(1 + a_k). With A = ρ D⁻¹, D = diag(S'), the scaled
matrix is ρ Ŝ with Ŝ = D^-½ S' D^-½ of unit diagonal (Jacobi scaling): the units of each
constraint (a distance squared, a dot product of unit vectors, metres vs millimetres, grams
vs tonnes) drop out, and the contraction per update is 1/(1 + ρ σ_min), σ_min the smallest
non-zero eigenvalue of Ŝ (redundant constraints give zero eigenvalues whose directions
never reach q: Bᵀ annihilates them).

**Roundoff.** The Newton matrix is K + Bᵀ A (1 + 2μ/h) B, whose condition relative to K is
κ = 1 + ρ (1 + 2μ/h) σ_max; a backward-stable LDLᵀ solve loses a factor κ of the unit
roundoff on the Newton correction, and the position-level residual Φ, computed to
O(ε |q|²), reaches the forces multiplied by A.

**Rounding per unit of time.** The multipliers carry λ* += A Φ, and Φ is computed to
O(ε |q|²) only (the coordinates are rounded): with A ∝ ρ/h² that noise moves the positions
by ~ρε|q| per step whatever h, i.e. by ~ρε|q|/h per unit of simulated time. A ρ fixed
while h shrinks thus makes the error grow again as 1/h below some step.

**Rule.** ρ = target / σ_min (each update shrinks the multiplier error by at least
``1/(1 + target)``) at steps h ≥ h_ref, the default step, and in proportion to h below
it: ρ/h, the rounding per unit of time, then stays that of h_ref and the error levels off
at a floor instead of rising, while the multiplier error left per step, the contraction
1/(1 + ρσ) applied to the predictor's error (itself O(h): the change of λ over a step),
stays below the step's truncation error (measured: docs/natural.md). Then
ρ ≤ κ_max / ((1 + 2μ/h) σ_max) so that ε κ stays below ~2e-7, and ρ ≥ ρ_min. When the
target cannot be met under the cap (σ_max/σ_min > κ_max/target: the mechanism is near a
singular position at the assembled configuration, or its constraints are very unevenly
conditioned), the cap wins and the choice carries a warning.
Singular positions reached during the motion are handled by the step, not by the penalty
(σ_min → 0 there for any A).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np


class NaturalModel(Protocol):
    """What the rule reads of :class:`.model.NaturalModel` (no import: the model's
    :meth:`~.model.NaturalModel.step_penalty` calls this module)."""

    name: str
    mass_matrix: np.ndarray
    q0: np.ndarray | None

    @property
    def m(self) -> int: ...

    def phi_q(self, q: Sequence[float]) -> np.ndarray: ...

    def metric_shift(self, q: Sequence[float] | None = None) -> float: ...


#: Multiplier contraction sought per update: 1/(1 + TARGET).
TARGET = 1e4
#: Largest accepted condition number of the Newton matrix relative to (4/h²)M.
KAPPA_MAX = 1e9
#: Smallest scale ρ (well-conditioned mechanisms: σ_min ≈ 1).
RHO_MIN = 1e4
#: The step at and above which the contraction target applies in full, and the default step
#: of :class:`~symgen.formulations.natural.kernels.NaturalOptions`; below it, ρ ∝ h.
REFERENCE_STEP: float = 1e-3


@dataclass(frozen=True)
class PenaltyChoice:
    """A penalty matrix diag(``alpha``) and the figures it was chosen from."""

    alpha: np.ndarray
    rho: float
    sigma_min: float
    sigma_max: float
    warning: str | None = None

    @property
    def contraction(self) -> float:
        """Worst multiplier contraction factor per update at the assembled configuration."""
        return 1.0 / (1.0 + self.rho * self.sigma_min)


def constraint_compliance(nm: NaturalModel, h: float, q: np.ndarray | None = None) -> np.ndarray:
    """S' = (h²/4) Φ_q M⁻¹ Φ_qᵀ at q (default: the assembled configuration)."""
    q = nm.q0 if q is None else q
    q = np.asarray(q, float)
    pq = nm.phi_q(q)
    leading = np.asarray(nm.mass_matrix, float) + nm.metric_shift(q) * pq.T @ pq
    return (h * h / 4) * pq @ np.linalg.solve(leading, pq.T)


def choose_penalty(nm: NaturalModel, h: float, mu: float, alpha: float | None = None,
                   q: np.ndarray | None = None) -> PenaltyChoice:
    """The penalty matrix for step ``h`` and damping ``mu`` (module docstring), from M and
    Φ_q at the assembled configuration (``q`` when the model has none); a given scalar
    ``alpha`` is used uniformly instead (the figures are still reported)."""
    if nm.m == 0:
        return PenaltyChoice(np.zeros(0), 0.0, 1.0, 1.0)
    s = constraint_compliance(nm, h, nm.q0 if nm.q0 is not None else q)
    d = np.diag(s).copy()
    floor = 1e-12 * float(d.max(initial=0.0))
    d[d <= floor] = float(d.max(initial=0.0)) or 1.0  # a row that vanishes at assembly
    scaled = s / np.sqrt(np.outer(d, d))
    eig = np.linalg.eigvalsh(scaled)
    sigma_max = float(eig[-1])
    nonzero = eig[eig > 1e-10 * sigma_max]
    sigma_min = float(nonzero[0]) if nonzero.size else sigma_max
    damping = 1 + 2 * mu / h
    if alpha is not None:
        uniform = np.full(nm.m, float(alpha))
        rho = float(alpha * np.median(d))
        return PenaltyChoice(uniform, rho, sigma_min, sigma_max)
    cap = KAPPA_MAX / (damping * sigma_max)
    wanted = max(TARGET / sigma_min, RHO_MIN)
    rho = max(min(wanted * min(1.0, h / REFERENCE_STEP), cap), min(RHO_MIN, cap))
    warning = None
    if wanted > cap:
        warning = (
            f"{nm.name}: the step's penalty cannot make the multiplier iteration contract "
            f"fast at the assembled configuration (scaled constraint spectrum "
            f"{sigma_min:.1e}..{sigma_max:.1e}, ratio {sigma_max / sigma_min:.1e} > "
            f"{KAPPA_MAX / TARGET:.0e}): contraction {1 / (1 + rho * sigma_min):.1e} per "
            "update with the roundoff cap; the mechanism is near a singular position there "
            "or its constraints are very unevenly conditioned — assemble it elsewhere or "
            "raise `iterations`")
    return PenaltyChoice(rho / d, rho, sigma_min, sigma_max, warning)


__all__ = ["KAPPA_MAX", "REFERENCE_STEP", "RHO_MIN", "TARGET", "PenaltyChoice",
           "choose_penalty", "constraint_compliance"]
