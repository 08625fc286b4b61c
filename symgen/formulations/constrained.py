"""Forward dynamics of a tree closed by loop joints, with Lagrange multipliers:

    M q̈ + C = τ + Gᵀλ,    G q̈ + Ġ q̇ = 0

(the index-reduced saddle-point system of Müller 2014, eq. 4, with the loop constraints of
:mod:`.loop_constraints` in the independent rows the loop analysis keeps). It is solved
with the tree's own sparse factorization M = LᵀDL (Featherstone 2008, Tables 6.3-6.4) and
the Schur complement of the constraint rows (the range-space method):

    q̈₀ = M⁻¹(τ − C),   Y = M⁻¹Gᵀ,   S = G Y,   S λ = −(Ġ q̇ + G q̈₀),   q̈ = q̈₀ + Y λ,

S (m × m, m the independent rows) by a dense LDLᵀ: no factorization of the (nv + m)
saddle-point matrix.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..expr import Expr, esum
from ..program import ProgramBuilder
from . import dense
from .loop_constraints import bias, jacobian
from .ltdl import factored_forward_dynamics, ltdl_solve
from .tree import SymbolicTree


def forward_dynamics(b: ProgramBuilder, tree: SymbolicTree, v: Sequence[Expr],
                     tau: Sequence[Expr], rows: Sequence[np.ndarray], keep: Sequence[int],
                     f_ext: Sequence[Expr] | None = None
                     ) -> tuple[list[Expr], list[Expr]]:
    """(q̈, λ): ``rows`` the loops' K_α, ``keep`` the independent rows of the stacked ones
    (:attr:`symgen.loops.LoopAnalysis.rows`)."""
    a0, factors, parent = factored_forward_dynamics(b, tree, v, tau, f_ext)  # M⁻¹(τ − C)
    g_all = jacobian(b, tree, rows)
    gamma_all = bias(b, tree, v, rows)
    g = [g_all[i] for i in keep]
    gamma = [gamma_all[i] for i in keep]
    y = [ltdl_solve(b, factors, parent, row) for row in g]  # columns of M⁻¹Gᵀ
    m = len(g)
    s = [[b.emit(esum([x * yj for x, yj in zip(g[i], y[j], strict=True)])) for j in range(i + 1)]
         for i in range(m)]  # lower triangle of S = G M⁻¹Gᵀ, which dense.ldlt reads
    rhs = [b.emit(-(gamma[i] + esum([x * aj for x, aj in zip(g[i], a0, strict=True)])))
           for i in range(m)]
    lam = dense.solve(b, dense.ldlt(b, s), rhs) if m else []
    a = [b.emit(a0[d] + esum([y[k][d] * lam[k] for k in range(m)])) for d in range(tree.nv)]
    return a, lam


__all__ = ["forward_dynamics"]
