"""Forward dynamics through the mass matrix: 𝓜 θ̈ = T − 𝒞 solved with an unrolled sparse
LᵀDL factorization that follows the tree (Featherstone 2008, §6.5, Tables 6.3-6.4).

With λ(k) the parent of DOF k (the previous DOF of the same joint, or the last DOF of the
parent joint), 𝓜(i, k) is structurally zero unless i is an ancestor of k or k of i, and the
factorization 𝓜 = LᵀDL creates no fill-in: only the entries on each DOF's ancestor path are
computed. Never a general dense solve.
"""

from __future__ import annotations

from collections.abc import Sequence

from symgen.formulations.recursions import inverse_dynamics, mass_matrix
from symgen.formulations.tree.hinges import SymbolicTree
from symgen.ir.expr import Expr, esum
from symgen.ir.program import ProgramBuilder
from symgen.ir.solve import chain_pairs
from symgen.spatial import ONE, ZERO


def dof_parents(tree: SymbolicTree) -> list[int]:
    """λ(k) for every DOF (-1 at the root): the parent array of the tree with every joint
    expanded into a chain of 1-DOF joints (Featherstone 2008, §6.5). With couplings, a DOF
    also carries the hinges of the joints coupled to it, and λ is the elimination tree of
    the reduced 𝓜's pattern (see :func:`elimination_parents`)."""
    if tree.coupled:
        return elimination_parents(tree.nv, _coupled_pattern(tree))
    parents = [-1] * tree.nv
    for hinge in tree.hinges:
        prev = -1
        h = hinge.parent
        while h >= 0 and prev < 0:
            prev = tree.hinges[h].dofs[-1] if tree.hinges[h].dofs else -1
            h = tree.hinges[h].parent
        for d in hinge.dofs:
            parents[d] = prev
            prev = d
    return parents


def _coupled_pattern(tree: SymbolicTree) -> set[tuple[int, int]]:
    """The pairs (i, k), i < k, of DOFs whose entry of 𝓜 = Tᵀ 𝓜_tree T can be nonzero:
    some hinge of i is an ancestor of, or the same as, some hinge of k."""
    pattern: set[tuple[int, int]] = set()
    for h, hinge in enumerate(tree.hinges):
        for a in tree.ancestors(h):
            for i in tree.hinges[a].dofs:
                for k in hinge.dofs:
                    if i != k:
                        pattern.add((min(i, k), max(i, k)))
    return pattern


def elimination_parents(n: int, pattern: set[tuple[int, int]]) -> list[int]:
    """λ for the LᵀDL below, eliminating DOF n−1 first: λ(k) is the largest i < k with
    L(k, i) ≠ 0, the fill of eliminating k going to λ(k) (the elimination tree of Liu,
    *The role of elimination trees in sparse factorization*, SIAM J. Matrix Anal. Appl. 11,
    1990, in reverse order). Every nonzero of row k then lies on k's chain λ(k), λ(λ(k)), ... as
    :func:`ltdl` requires; on a tree's own pattern it is the tree's parent array."""
    below: list[set[int]] = [set() for _ in range(n)]
    for i, k in pattern:
        below[k].add(i)
    parents = [-1] * n
    for k in reversed(range(n)):
        if below[k]:
            parents[k] = p = max(below[k])
            below[p] |= below[k] - {p}
    return parents


def ltdl(b: ProgramBuilder, M: list[list[Expr]], parent: Sequence[int]) -> list[list[Expr]]:
    """In-place LᵀDL of 𝓜 (Featherstone 2008, Table 6.3): afterwards the diagonal holds D
    and the entries (k, i), i an ancestor of k, hold L."""
    H = [list(row) for row in M]
    for k in reversed(range(len(H))):
        i = parent[k]
        inv_d = b.emit(1 / H[k][k]) if i >= 0 else None
        while i >= 0:  # i = λ(k), λ(λ(k)), ...
            a = b.emit(H[k][i] * inv_d)  # a = H_ki / H_kk
            j = i
            while j >= 0:
                H[i][j] = b.emit(H[i][j] - a * H[k][j])  # H_ij ← H_ij − H_kj a
                j = parent[j]
            H[k][i] = a  # L_ki
            i = parent[i]
    return H


def ltdl_solve(
    b: ProgramBuilder, H: list[list[Expr]], parent: Sequence[int], rhs: Sequence[Expr],
    inverse_diagonal: Sequence[Expr] | None = None,
) -> list[Expr]:
    """``x = L⁻¹ D⁻¹ L⁻ᵀ rhs`` for the factors of :func:`ltdl` (Featherstone 2008, Table 6.4);
    ``inverse_diagonal`` (1/Dᵢ, for many right-hand sides) turns the divisions into products."""
    x = ltdl_transposed_solve(b, H, parent, rhs)
    x = [b.emit(xi / H[i][i] if inverse_diagonal is None else xi * inverse_diagonal[i])
         for i, xi in enumerate(x)]  # x ← D⁻¹ x
    return ltdl_lower_solve(b, H, parent, x)


def ltdl_transposed_solve(b: ProgramBuilder, H: list[list[Expr]], parent: Sequence[int],
                          rhs: Sequence[Expr]) -> list[Expr]:
    """``L⁻ᵀ rhs`` for the factors of :func:`ltdl`: the first sweep of Table 6.4, from the
    leaves to the roots."""
    x = list(rhs)
    for i in reversed(range(len(x))):
        j = parent[i]
        while j >= 0:
            x[j] = b.emit(x[j] - H[i][j] * x[i])
            j = parent[j]
    return x


def ltdl_lower_solve(b: ProgramBuilder, H: list[list[Expr]], parent: Sequence[int],
                     rhs: Sequence[Expr]) -> list[Expr]:
    """``L⁻¹ rhs`` for the factors of :func:`ltdl`: the last sweep of Table 6.4, from the
    roots to the leaves."""
    x = list(rhs)
    for i in range(len(x)):
        j = parent[i]
        while j >= 0:
            x[i] = b.emit(x[i] - H[i][j] * x[j])
            j = parent[j]
    return x


def ltdl_inverse(b: ProgramBuilder, H: list[list[Expr]], parent: Sequence[int]
                 ) -> list[list[Expr]]:
    """𝓜⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ from the factors of :func:`ltdl`, one triangle: with U = L⁻¹ (unit
    lower triangular, U_ki ≠ 0 only for i on k's ancestor chain, from L U = 1:
    U_ki = −Σ_m L_km U_mi over the chain from k's parent up to i),
    (𝓜⁻¹)_ab = Σ_k U_ak U_bk / D_k over the common ancestors k of a and b."""
    n = len(H)
    chains = []
    for k in range(n):
        chain, j = [], k
        while j >= 0:
            chain.append(j)
            j = parent[j]
        chains.append(chain)  # k, λ(k), λ(λ(k)), ...
    U: list[dict[int, Expr]] = []
    for k in range(n):
        row: dict[int, Expr] = {k: ONE}
        for i in chains[k][1:]:  # U_ki = −Σ_m L_km U_mi, m on the chain from λ(k) to i
            row[i] = b.emit(-esum([H[k][m] * U[m][i] for m in chains[k][1:] if i in U[m]]))
        U.append(row)
    inverse_d = [b.emit(1 / H[k][k]) for k in range(n)]
    scaled = [{k: b.emit(x * inverse_d[k]) for k, x in row.items()} for row in U]
    out: list[list[Expr]] = [[ZERO] * n for _ in range(n)]
    for a in range(n):
        for c in range(a, n):
            common = [k for k in chains[a] if k in U[c]]
            if common:
                out[a][c] = out[c][a] = b.emit(esum([scaled[a][k] * U[c][k] for k in common]))
    return out


def ltdl_solve_rows(b: ProgramBuilder, H: list[list[Expr]], parent: Sequence[int],
                    rows: Sequence[Sequence[Expr]], inverse_diagonal: Sequence[Expr]
                    ) -> list[list[Expr]]:
    """𝓜⁻¹ X for the factors of :func:`ltdl`, X = ``rows`` (n × m): the solve of Table 6.4
    applied to every column at once, as a :class:`~symgen.ir.solve.Solve` statement (one
    loop over the columns per row and sweep, printed after the outputs are stored) instead
    of unrolled assignments. Returns its placeholders, each to be stored as one output
    element (:meth:`~symgen.ir.program.ProgramBuilder.solved_rows`)."""
    lower = [H[i][j] for i, j in chain_pairs(parent)]
    return b.solved_rows(parent, lower, inverse_diagonal, rows)


def forward_dynamics(
    b: ProgramBuilder,
    tree: SymbolicTree,
    v: Sequence[Expr],
    tau: Sequence[Expr],
    f_ext: Sequence[Expr] | None = None,
) -> list[Expr]:
    """θ̈ = 𝓜⁻¹(T − 𝒞): 𝒞 by Newton-Euler at θ̈ = 0, 𝓜 the composite-body way, then the
    sparse LᵀDL solve."""
    return factored_forward_dynamics(b, tree, v, tau, f_ext)[0]


def factored_forward_dynamics(
    b: ProgramBuilder,
    tree: SymbolicTree,
    v: Sequence[Expr],
    tau: Sequence[Expr],
    f_ext: Sequence[Expr] | None = None,
) -> tuple[list[Expr], list[list[Expr]], list[int], list[Expr]]:
    """(θ̈, the LᵀDL factors of 𝓜, the DOF parents, 1/Dᵢ) of :func:`forward_dynamics`, for
    a caller that solves more right-hand sides with the same 𝓜. The solve multiplies by
    the reciprocals 1/Dᵢ that the factorization forms anyway: no division waits for the
    right-hand side, which arrives last (the bias forces)."""
    rhs, H, parent, inverse_d = factored_bias(b, tree, v, tau, f_ext)
    return ltdl_solve(b, H, parent, rhs, inverse_d), H, parent, inverse_d


def factored_bias(
    b: ProgramBuilder,
    tree: SymbolicTree,
    v: Sequence[Expr],
    tau: Sequence[Expr],
    f_ext: Sequence[Expr] | None = None,
) -> tuple[list[Expr], list[list[Expr]], list[int], list[Expr]]:
    """(T − 𝒞, the LᵀDL factors of 𝓜, the DOF parents, 1/Dᵢ): :func:`factored_forward_dynamics`
    before its solve."""
    bias = inverse_dynamics(b, tree, v, None, f_ext)  # 𝒞 = T at θ̈ = 0 (Jain 2009, eq. 3)
    M = mass_matrix(b, tree)  # 𝓜 = HφMφ*H*
    parent = dof_parents(tree)
    H = ltdl(b, M, parent)
    inverse_d = [b.emit(1 / H[k][k]) for k in range(len(H))]
    return [b.emit(t - c) for t, c in zip(tau, bias, strict=True)], H, parent, inverse_d


def mass_matrix_inverse(b: ProgramBuilder, tree: SymbolicTree) -> list[list[Expr]]:
    """𝓜⁻¹ = L⁻¹D⁻¹L⁻ᵀ from the sparse LᵀDL factor of the composite-body 𝓜
    (:func:`ltdl_inverse`)."""
    parent = dof_parents(tree)
    return ltdl_inverse(b, ltdl(b, mass_matrix(b, tree), parent), parent)


__all__ = [
    "dof_parents",
    "elimination_parents",
    "factored_bias",
    "factored_forward_dynamics",
    "forward_dynamics",
    "ltdl",
    "ltdl_inverse",
    "ltdl_lower_solve",
    "ltdl_solve",
    "ltdl_solve_rows",
    "ltdl_transposed_solve",
    "mass_matrix_inverse",
]
