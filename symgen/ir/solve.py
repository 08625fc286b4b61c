"""The one structured statement of a :class:`~symgen.ir.program.Program`: :class:`Solve`,
M⁻¹ applied in place to rows of stored output elements through a tree-sparse LᵀDL factor
(Featherstone 2008, Tables 6.3-6.4), which a printer spells as loops over the columns
instead of unrolling them (:meth:`symgen.ir.printer.Printer.solve`): dense linear algebra
that straight-line code would unroll into megabytes. :class:`Segment` says where a row's
elements are stored, :meth:`Solve.row_operations` what each loop computes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from symgen.ir.expr import Expr, Num


def chain_pairs(parent: Sequence[int]) -> list[tuple[int, int]]:
    """(i, j) for every DOF i (in order) and every j on its chain λ(i), λ(λ(i)), ... (λ =
    ``parent``, −1 at a root): the entries of L in the order of :attr:`Solve.lower`."""
    out = []
    for i in range(len(parent)):
        j = parent[i]
        while j >= 0:
            out.append((i, j))
            j = parent[j]
    return out


@dataclass(frozen=True)
class Segment:
    """``width`` consecutive elements of output ``array`` (its name) in each row of a
    :class:`Solve`: row i's start at element ``starts[i]``; before the solve, the elements
    of row i outside its columns ``ranges[i]`` = (first, end) are structurally zero
    (first = end: all)."""

    array: str
    starts: tuple[int, ...]
    width: int
    ranges: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class RowOperation:
    """One step of a :class:`Solve`: row ``row`` ← ``scale`` · row − Σ factor · row i over
    ``terms`` (i, factor) (no scale: 1), on the columns ``ranges[s]`` of each segment s
    (outside them every operand is zero)."""

    row: int
    scale: Expr | None
    terms: tuple[tuple[int, Expr], ...]
    ranges: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Solve:
    """Statement: X ← 𝓜⁻¹ X in place, X the matrix whose row i is the elements of every
    segment at row i (after the outputs are stored), 𝓜 = LᵀDL the tree-sparse factor of
    Featherstone 2008, Table 6.3, with DOF parents ``parent`` (λ). ``lower`` holds L_ij for
    the pairs of :meth:`pairs` (j on i's chain λ(i), λ(λ(i)), ...), ``inverse_d`` 1/D_i; all are
    atoms of the program. Table 6.4's two sweeps, each row gathering its terms (so that
    every element is written once per sweep, :meth:`row_operations`): for j = n−1 … 0,
    x_j ← x_j − Σ_{i: j on i's chain} L_ij x_i (x ← L⁻ᵀx); then for i = 0 … n−1,
    x_i ← x_i / D_i − Σ_{j on i's chain} L_ij x_j (x ← L⁻¹D⁻¹x)."""

    parent: tuple[int, ...]
    lower: tuple[Expr, ...]
    inverse_d: tuple[Expr, ...]
    segments: tuple[Segment, ...]

    def pairs(self) -> list[tuple[int, int]]:
        """(i, j) for every DOF i and every j on its chain, in the order of ``lower``."""
        return chain_pairs(self.parent)

    @property
    def width(self) -> int:
        """Columns of X."""
        return sum(s.width for s in self.segments)

    def row_operations(self) -> list[RowOperation]:
        """The two sweeps as row operations, in order; each on the columns where its row
        or an operand can be nonzero (the segments' ranges carried through the sweeps), a
        term dropped where L_ij is zero or its row is zero on every column."""
        n = len(self.parent)
        ranges = [[seg.ranges[i] for seg in self.segments] for i in range(n)]
        below: list[list[tuple[int, Expr]]] = [[] for _ in range(n)]
        above: list[list[tuple[int, Expr]]] = [[] for _ in range(n)]
        for (i, j), factor in zip(self.pairs(), self.lower, strict=True):
            if not (isinstance(factor, Num) and factor.value == 0.0):
                below[j].append((i, factor))
                above[i].append((j, factor))

        def step(row: int, scale: Expr | None, terms: list[tuple[int, Expr]]
                 ) -> RowOperation | None:
            live = tuple((i, f) for i, f in terms if any(a < z for a, z in ranges[i]))
            spans = []
            for s in range(len(self.segments)):
                own = [ranges[row][s]] + [ranges[i][s] for i, _ in live]
                own = [(a, z) for a, z in own if a < z]
                spans.append((min(a for a, _ in own), max(z for _, z in own)) if own
                             else (0, 0))
            ranges[row] = spans
            if not live and scale is None:
                return None
            return RowOperation(row, scale, live, tuple(spans))

        operations = [step(j, None, below[j]) for j in reversed(range(n))]
        operations += [step(i, self.inverse_d[i], above[i]) for i in range(n)]
        return [op for op in operations if op is not None]

    def expressions(self) -> tuple[Expr, ...]:
        """The coefficients the statement reads: L's entries, then 1/D's."""
        return (*self.lower, *self.inverse_d)

    def replace_expressions(self, change: Callable[[Expr], Expr]) -> Solve:
        """The statement with ``change`` applied to every coefficient."""
        return replace(self, lower=tuple(change(e) for e in self.lower),
                       inverse_d=tuple(change(e) for e in self.inverse_d))


__all__ = ["RowOperation", "Segment", "Solve", "chain_pairs"]
