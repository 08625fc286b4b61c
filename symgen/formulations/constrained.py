"""Dynamics of a tree closed by loop joints, with Lagrange multipliers:

    M q̈ + C = τ + Gᵀλ,    G q̈ + Ġ q̇ = 0

(the index-reduced saddle-point system of Müller 2014, eq. 4, with the loop constraints of
:mod:`.loop_constraints` in the independent rows the loop analysis keeps). The model's
force elements (springs, dampers, actuators; :mod:`.element_forces`) add their generalized
forces Q(q, q̇) to τ, as in the natural-coordinate formulation.

**Forward dynamics** (:func:`forward_dynamics`) uses the tree's own sparse factorization
M = LᵀDL (Featherstone 2008, Tables 6.3-6.4) and the Schur complement of the constraint
rows (the range-space method), in the half-solved variable u = D⁻¹L⁻ᵀ(τ − C + Gᵀλ), for
which q̈ = L⁻¹u and G q̈ = Zᵀu with Z = L⁻ᵀGᵀ (the first sweep of the solve applied to
each row of G):

    u₀ = D⁻¹L⁻ᵀ(τ − C),   S = G M⁻¹Gᵀ = Zᵀ D⁻¹ Z,   S λ = −(Ġ q̇ + Zᵀu₀),
    u = u₀ + D⁻¹Z λ,   q̈ = L⁻¹u,

S (m × m, m the independent rows) by a dense LDLᵀ, or for m ≤ 2 by its adjugate (one
division, forward stable at that size): no factorization of the (nv + m)
saddle-point matrix, and the rows of G need only the first of the solve's two sweeps (the
second runs once, on u). The LᵀDL sweeps multiply by the reciprocals of D, formed once.
One step of iterative refinement follows (Higham, *Accuracy and Stability of Numerical
Algorithms*, 2002, ch. 12): Δλ = S⁻¹(−Ġq̇ − Zᵀu), u += D⁻¹Z Δλ, λ += Δλ. Where M is
stiff, u₀ is large and u₀ + D⁻¹Zλ cancels: on the Delta robot's states q̈₀ = L⁻¹u₀
reaches 3·10⁴ for q̈ ~ 10², and the refinement takes the error of q̈ from up to 8·10⁻⁹
to ~10⁻¹⁴ relative for 2 m·nv + m² more operations. With ``baumgarte`` = (α, β)
the acceleration constraint becomes G q̈ = −Ġ q̇ − 2α G q̇ − β² Φ (Baumgarte 1972,
*Stabilization of constraints and integrals of motion in dynamical systems*, Comput.
Methods Appl. Mech. Eng. 1): the constraint error
then obeys ë + 2α ė + β² e = 0 to first order and a drifting state returns to the
constraint manifold (critically damped for α = β).

**Actuated inverse dynamics** (:func:`inverse_dynamics`): at a consistent state
(G q̈ + Ġ q̇ = 0) the tree's inverse dynamics give τ = M q̈ + C, which the actuators u (one
per actuated coordinate A, the selection B) and the constraint forces must supply:
τ = B u + Gᵀλ. Split into the actuated rows A and the passive rows P (the other
coordinates):

    G_Pᵀ λ = τ_P,    u = τ_A − G_Aᵀ λ,

G_P the m × m columns of G of the passive coordinates (m = nv − |A|: as many actuated
coordinates as the mechanism has DOF). G_P is regular exactly when the actuators determine
the motion (|A| = DOF and no singularity of the actuation), which
:func:`symgen.loops.actuation.actuation` checks
at the analysis' sampled configurations; a pivot-free LU of G_Pᵀ cannot be guaranteed
(its leading minors vanish at regular configurations), so λ solves the normal equations

    (G_P G_Pᵀ) λ = G_P τ_P

by a dense LDLᵀ (symmetric positive definite iff G_P is regular), with one step of
iterative refinement in working precision on the residual τ_P − G_Pᵀλ (Higham, *Accuracy
and Stability of Numerical Algorithms*, 2002, ch. 12): the normal equations alone have an
error of cond(G_P)²·ε, which each step contracts by about that factor (Bricard's linkage
on random states: backward error 4e-10 without, 6e-12 with; docs/loops.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from symgen.errors import SymgenError
from symgen.formulations import dense
from symgen.formulations.loop_constraints import bias, jacobian, stabilised_bias
from symgen.formulations.ltdl import factored_bias, ltdl_lower_solve, ltdl_transposed_solve
from symgen.formulations.recursions import inverse_dynamics as tree_inverse_dynamics
from symgen.formulations.tree.hinges import SymbolicTree
from symgen.ir.expr import Expr, esum
from symgen.ir.program import ProgramBuilder
from symgen.loops.actuation import Split
from symgen.spatial import ZERO


def forward_dynamics(b: ProgramBuilder, tree: SymbolicTree, v: Sequence[Expr],
                     tau: Sequence[Expr], rows: Sequence[np.ndarray], keep: Sequence[int],
                     f_ext: Sequence[Expr] | None = None,
                     baumgarte: tuple[float, float] | None = None,
                     forces: Sequence[Expr] | None = None) -> tuple[list[Expr], list[Expr]]:
    """(q̈, λ): ``rows`` the loops' K_α, ``keep`` the independent rows of the stacked ones
    (:attr:`symgen.loops.LoopAnalysis.rows`), ``baumgarte`` (α, β) in 1/s or None,
    ``forces`` the generalized forces of the model's force elements (added to τ; None:
    none, :mod:`.element_forces`)."""
    if forces is not None:
        tau = [b.emit(t + f) for t, f in zip(tau, forces, strict=True)]
    rhs, factors, parent, inverse_d = factored_bias(b, tree, v, tau, f_ext)
    g_all = jacobian(b, tree, rows)
    gamma_all = bias(b, tree, v, rows)
    g = [g_all[i] for i in keep]
    gamma = stabilised_bias(b, tree, v, rows, g_all, gamma_all, keep, baumgarte)
    u0 = [b.emit(x * d) for x, d in zip(ltdl_transposed_solve(b, factors, parent, rhs),
                                        inverse_d, strict=True)]  # D⁻¹L⁻ᵀ(τ − C)
    m = len(g)
    if not m:
        return ltdl_lower_solve(b, factors, parent, u0), []
    z = [ltdl_transposed_solve(b, factors, parent, row) for row in g]  # columns of L⁻ᵀGᵀ
    w = [[b.emit(x * d) for x, d in zip(column, inverse_d, strict=True)] for column in z]
    s = [[b.emit(esum([x * wj for x, wj in zip(z[i], w[j], strict=True)])) for j in range(i + 1)]
         for i in range(m)]  # lower triangle of S = G M⁻¹Gᵀ = Zᵀ D⁻¹ Z
    if m <= dense.ADJUGATE_MAX:  # S⁻¹ explicitly: one division, each solve a product
        s_inv = dense.adjugate_inverse(b, s)

        def schur_solve(r: list[Expr]) -> list[Expr]:
            return [b.emit(esum([x * rj for x, rj in zip(row, r, strict=True)]))
                    for row in s_inv]
    else:
        schur = dense.ldlt(b, s)

        def schur_solve(r: list[Expr]) -> list[Expr]:
            return dense.solve(b, schur, r)

    def correct(u_in: list[Expr], lam_in: list[Expr]) -> tuple[list[Expr], list[Expr]]:
        """λ += S⁻¹(−Ġq̇ − G q̈), u += D⁻¹Z Δλ, with G q̈ = Zᵀu: the multipliers that close
        the constraint residual of q̈ = L⁻¹u (from q̈₀ first, then once more as iterative
        refinement)."""
        residual = [b.emit(-(gamma[i] + esum([x * uj for x, uj in zip(z[i], u_in,
                                                                        strict=True)])))
                    for i in range(m)]
        dlam = schur_solve(residual)
        u_out = [b.emit(u_in[d] + esum([w[k][d] * dlam[k] for k in range(m)]))
                 for d in range(tree.nv)]
        return u_out, [b.emit(x + dx) for x, dx in zip(lam_in, dlam, strict=True)]

    u, lam = correct(u0, [ZERO] * m)
    u, lam = correct(u, lam)  # refinement: q̈₀ is large where M is stiff, G q̈ cancels
    return ltdl_lower_solve(b, factors, parent, u), lam


def inverse_dynamics(b: ProgramBuilder, tree: SymbolicTree, v: Sequence[Expr],
                     a: Sequence[Expr], rows: Sequence[np.ndarray], keep: Sequence[int],
                     split: Split, f_ext: Sequence[Expr] | None = None,
                     forces: Sequence[Expr] | None = None) -> tuple[list[Expr], list[Expr]]:
    """(u, λ): the actuator forces of the actuated coordinates ``split.active`` (in that
    order) and the multipliers of the independent rows ``keep`` with
    M a + C = B u + Q + Gᵀλ, Q the model's force elements (``forces``, None: none; module
    documentation)."""
    tau = tree_inverse_dynamics(b, tree, v, a, f_ext)  # M a + C (− Σ Jᵀ f_ext)
    if forces is not None:
        tau = [b.emit(t - f) for t, f in zip(tau, forces, strict=True)]
    g_all = jacobian(b, tree, rows)
    g = [g_all[i] for i in keep]
    m = len(g)
    if m != len(split.passive):
        raise SymgenError(f"{m} independent loop rows for {len(split.passive)} passive "
                          "coordinates: the actuated inverse dynamics needs as many")
    gp = [[g[i][d] for d in split.passive] for i in range(m)]  # G_P (m × m)

    def gp_t(x: Sequence[Expr]) -> list[Expr]:  # G_Pᵀ x
        return [b.emit(esum([gp[i][k] * x[i] for i in range(m)])) for k in range(m)]

    def gp_(x: Sequence[Expr]) -> list[Expr]:  # G_P x
        return [b.emit(esum([gp[i][k] * x[k] for k in range(m)])) for i in range(m)]

    normal = dense.ldlt(b, [[b.emit(esum([gp[i][k] * gp[j][k] for k in range(m)]))
                             for j in range(i + 1)] for i in range(m)])
    tau_p = [tau[d] for d in split.passive]
    lam = dense.solve(b, normal, gp_(tau_p))
    residual = [b.emit(t - x) for t, x in zip(tau_p, gp_t(lam), strict=True)]
    correction = dense.solve(b, normal, gp_(residual))  # one step of iterative refinement
    lam = [b.emit(x + dx) for x, dx in zip(lam, correction, strict=True)]
    u = [b.emit(tau[d] - esum([g[i][d] * lam[i] for i in range(m)])) for d in split.active]
    return u, lam


__all__ = ["forward_dynamics", "inverse_dynamics"]
