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
#: The augmented-Lagrangian solves of ``nc_step_rk4`` (:func:`rk4_penalties`): the largest
#: eigenvalue ρσ_max of the scaled penalised compliance in the accelerations' and the
#: velocity projection's solves, and the contraction sought per multiplier update in the
#: position projection's (capped by :data:`KAPPA_MAX`).
STAGE_SCALE = 1e7
POSITION_TARGET = 1e7


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


def _scaled_compliance(nm: NaturalModel, q: np.ndarray | None) -> tuple[np.ndarray, float, float]:
    """D = diag(S), S = Φ_q Ā⁻¹ Φ_qᵀ (Ā = M, or M + γΦ_qᵀΦ_q for a singular M) at the
    assembled configuration (``q`` when the model has none), and the smallest non-zero and
    the largest eigenvalue of the unit-diagonal D^-½ S D^-½."""
    s = constraint_compliance(nm, 2.0, nm.q0 if nm.q0 is not None else q)  # h²/4 = 1
    d = np.diag(s).copy()
    floor = 1e-12 * float(d.max(initial=0.0))
    d[d <= floor] = float(d.max(initial=0.0)) or 1.0  # a row that vanishes at assembly
    eig = np.linalg.eigvalsh(s / np.sqrt(np.outer(d, d)))
    sigma_max = float(eig[-1])
    nonzero = eig[eig > 1e-10 * sigma_max]
    return d, float(nonzero[0]) if nonzero.size else sigma_max, sigma_max


def rk4_penalties(nm: NaturalModel, q: np.ndarray | None = None
                  ) -> tuple[PenaltyChoice, PenaltyChoice]:
    """The penalties A = ρ D⁻¹ of the augmented-Lagrangian solves (García de Jalón & Bayo
    1994, eq. 5.48-5.51) of ``nc_step_rk4``: (accelerations and velocity projection,
    position projection). D = diag(S), S = Φ_q Ā⁻¹ Φ_qᵀ at the assembled configuration
    (Jacobi scaling: the constraints' units drop out), σ the eigenvalues of D^-½ S D^-½.
    Each multiplier update contracts the error along a direction of eigenvalue σ by
    1/(1 + ρσ); Ā + Φ_qᵀAΦ_q has a condition 1 + ρσ_max relative to Ā.

    - **accelerations** (the stages and the state at t + h) **and the velocity projection**:
      ρ = :data:`STAGE_SCALE`/σ_max, every regular direction contracted by
      1/(1 + 10⁷σ/σ_max) per update (the 40-loop chain, σ_min/σ_max = 7.6·10⁻⁴: 1.3·10⁻⁴).
      Not more, for two reasons measured on the benchmarks (docs/natural.md). A stage
      state lies off the constraint manifold, by O(h²), where a redundant constraint is no
      longer exactly dependent (Bricard's linkage: the smallest singular value of Φ_q grows
      as h³) and Φ̇_q q̇ has a component along it (∝ h²) that no acceleration meets: the
      force of the exact multiplier along it grows as 1/h, a least-squares solve ignores
      the component, and the iteration, barely converging along it, lets through a force ∝ ρ;
      Bricard's energy error grows in proportion (∝ ρh⁵: 4·10⁻⁵ J over 10 s at 1 ms with
      ρσ_max = 10⁹, 4·10⁻⁷ J with 10⁷). And near a singular position (σ ∝ θ² along the
      direction Φ_q loses) a velocity projection that converges there turns the step's
      position error along that direction into a velocity error ~(position error)·|q̇|/θ
      (the 40-loop chain over 20 s at 1 ms: 9.8·10⁻⁵ m with the position projection's
      penalty in the velocity projection and the accelerations at t + h, 1.1·10⁻⁵ m with
      this one);
    - **position projection**: ρ = :data:`POSITION_TARGET`/σ_min, capped so that
      ρσ_max ≤ :data:`KAPPA_MAX`: its equations Φ = 0 are consistent, and the Newton steps
      converge closer to a singular position (the band where they cannot, ρσ ≲ 1, is
      ~(ρσ₀)^-½ wide; the 40-loop chain's largest |Φ| over 20 s at 1 ms: 1.1·10⁻¹² with
      the accelerations' penalty, 3.6·10⁻¹⁵ with this one)."""
    if nm.m == 0:
        empty = PenaltyChoice(np.zeros(0), 0.0, 1.0, 1.0)
        return empty, empty
    d, sigma_min, sigma_max = _scaled_compliance(nm, q)
    stage = STAGE_SCALE / sigma_max
    position = min(POSITION_TARGET / sigma_min, KAPPA_MAX / sigma_max)
    return (PenaltyChoice(stage / d, stage, sigma_min, sigma_max),
            PenaltyChoice(position / d, position, sigma_min, sigma_max))


__all__ = ["KAPPA_MAX", "POSITION_TARGET", "REFERENCE_STEP", "RHO_MIN", "STAGE_SCALE",
           "TARGET", "PenaltyChoice", "choose_penalty", "constraint_compliance",
           "rk4_penalties"]
