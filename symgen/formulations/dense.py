"""Small dense symmetric positive-definite systems, unrolled (the n×n joint-space blocks
D(k) of multi-DOF hinges, n ≤ 6): an LDLᵀ factorization, solves and the inverse, each
operation emitted into the program. 1×1 systems cost one division."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from symgen.ir.expr import ONE, ZERO, Expr, esum
from symgen.ir.program import ProgramBuilder


@dataclass(frozen=True)
class LDLT:
    """``A = L diag(d) Lᵀ`` with L unit lower-triangular; ``inv_d`` holds 1/d."""

    L: tuple[tuple[Expr, ...], ...]
    inv_d: tuple[Expr, ...]

    @property
    def n(self) -> int:
        return len(self.inv_d)


def ldlt(b: ProgramBuilder, a: Sequence[Sequence[Expr]]) -> LDLT:
    """Unrolled LDLᵀ of a symmetric positive-definite matrix (lower triangle read)."""
    n = len(a)
    L = [[ONE if i == j else ZERO for j in range(n)] for i in range(n)]
    d: list[Expr] = []
    inv_d: list[Expr] = []
    for j in range(n):
        dj = b.emit(a[j][j] - esum([L[j][k] ** 2 * d[k] for k in range(j)]))
        d.append(dj)
        inv_d.append(b.emit(1 / dj))
        for i in range(j + 1, n):
            s = a[i][j] - esum([L[i][k] * L[j][k] * d[k] for k in range(j)])
            L[i][j] = b.emit(s * inv_d[j])
    return LDLT(tuple(tuple(row) for row in L), tuple(inv_d))


def solve(b: ProgramBuilder, f: LDLT, rhs: Sequence[Expr]) -> list[Expr]:
    """``A⁻¹ rhs`` by forward substitution, scaling and back substitution."""
    n = f.n
    y: list[Expr] = []
    for i in range(n):
        y.append(b.emit(rhs[i] - esum([f.L[i][k] * y[k] for k in range(i)])))
    z = [b.emit(y[i] * f.inv_d[i]) for i in range(n)]
    x: list[Expr] = [ZERO] * n
    for i in reversed(range(n)):
        x[i] = b.emit(z[i] - esum([f.L[k][i] * x[k] for k in range(i + 1, n)]))
    return x


def inverse(b: ProgramBuilder, f: LDLT) -> list[list[Expr]]:
    """``A⁻¹`` (symmetric; the upper triangle is computed and mirrored)."""
    n = f.n
    if n == 1:
        return [[f.inv_d[0]]]
    cols = [solve(b, f, [ONE if i == j else ZERO for i in range(n)])
            for j in range(n)]
    return [[cols[max(i, j)][min(i, j)] for j in range(n)] for i in range(n)]


__all__ = ["LDLT", "inverse", "ldlt", "solve"]
