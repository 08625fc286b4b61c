"""Dense algebra over IR expressions.

**Vectors and matrices** (:class:`Vector`, :class:`Matrix`, :class:`Diagonal`): dense
n-vectors and n×m matrices, so that programs read like their equations
(``M @ a1 + pq.T @ w - forces``) and like their numpy twins. The operations build
expressions without emitting them; ``.emit(b)`` emits every entry in order (row-major for
matrices). An operation is element by element exactly as written, so a program in this
form emits the same expressions in the same order as its loops would. Entries may be
Python numbers (constant matrices such as a mass matrix): number arithmetic folds at
generation, as it would in the loops. :func:`gram` forms AᵀWA on the fixed sparsity
pattern of A.

**Small symmetric positive-definite systems**, unrolled (the n×n joint-space blocks D(k)
of multi-DOF hinges, n ≤ 6): an LDLᵀ factorization, solves and the inverse, each
operation emitted into the program. 1×1 systems cost one division.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from symgen.formulations.sparse import structural_zero
from symgen.ir.expr import ONE, ZERO, Expr, esum
from symgen.ir.program import ProgramBuilder

#: An entry: an expression or a number (a constant folded at generation).
Scalar = Expr | float


class Vector(Sequence[Scalar]):
    """A dense n-vector; + and − entrywise, a number times it scales each entry."""

    __slots__ = ("entries",)

    def __init__(self, entries: Iterable[Scalar]) -> None:
        self.entries: tuple[Scalar, ...] = tuple(entries)

    @overload
    def __getitem__(self, i: int) -> Scalar: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Scalar]: ...

    def __getitem__(self, i: int | slice) -> Scalar | Sequence[Scalar]:
        return self.entries[i]

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[Scalar]:
        return iter(self.entries)

    def __repr__(self) -> str:
        return f"Vector({list(self.entries)!r})"

    @classmethod
    def total(cls, terms: Iterable[Sequence[Scalar]]) -> Vector:
        """Σ of vectors of one length, each entry one sum (as ``esum`` of the terms)."""
        vs = list(terms)
        return cls(esum([v[i] for v in vs]) for i in range(len(vs[0])))

    def __add__(self, other: Sequence[Scalar]) -> Vector:
        return Vector(a + c for a, c in zip(self, other, strict=True))

    def __sub__(self, other: Sequence[Scalar]) -> Vector:
        return Vector(a - c for a, c in zip(self, other, strict=True))

    def __rsub__(self, other: Sequence[Scalar]) -> Vector:
        return Vector(c - a for a, c in zip(self, other, strict=True))

    def __neg__(self) -> Vector:
        return Vector(-a for a in self)

    def __rmul__(self, s: float) -> Vector:
        return Vector(s * a for a in self)

    def emit(self, b: ProgramBuilder) -> Vector:
        return Vector(b.emit(a) for a in self)


class Matrix(Sequence[tuple[Scalar, ...]]):
    """A dense n×m matrix (a sequence of rows)."""

    __slots__ = ("cols", "rows")

    def __init__(self, rows: Iterable[Iterable[Scalar]], cols: int | None = None) -> None:
        self.rows: tuple[tuple[Scalar, ...], ...] = tuple(tuple(r) for r in rows)
        if cols is None:
            cols = len(self.rows[0]) if self.rows else 0
        self.cols = cols

    @classmethod
    def constant(cls, a: np.ndarray) -> Matrix:
        """A matrix of numbers (folded at generation)."""
        return cls([[float(x) for x in row] for row in a], a.shape[1])

    @overload
    def __getitem__(self, i: int) -> tuple[Scalar, ...]: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[Scalar, ...]]: ...

    def __getitem__(self, i: int | slice) -> tuple[Scalar, ...] | Sequence[tuple[Scalar, ...]]:
        return self.rows[i]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[tuple[Scalar, ...]]:
        return iter(self.rows)

    @property
    def T(self) -> Matrix:
        if not self.rows:
            return Matrix([() for _ in range(self.cols)], 0)
        return Matrix(zip(*self.rows, strict=True), len(self.rows))

    @overload
    def __matmul__(self, x: Matrix) -> Matrix: ...

    @overload
    def __matmul__(self, x: Sequence[Scalar]) -> Vector: ...

    def __matmul__(self, x: Matrix | Sequence[Scalar]) -> Matrix | Vector:
        """A x = (Σ_j a_ij x_j)_i; A X column by column within each row."""
        if isinstance(x, Matrix):
            cols = x.T
            return Matrix([[esum(a * c for a, c in zip(row, col, strict=True)) for col in cols]
                           for row in self.rows], x.cols)
        return Vector(esum(a * c for a, c in zip(row, x, strict=True)) for row in self.rows)

    @classmethod
    def total(cls, terms: Iterable[Matrix]) -> Matrix:
        """Σ of matrices of one shape, each entry one sum (as ``esum`` of the terms)."""
        ms = list(terms)
        rows, cols = len(ms[0]), ms[0].cols
        return cls([[esum([m[i][j] for m in ms]) for j in range(cols)] for i in range(rows)],
                   cols)

    def __neg__(self) -> Matrix:
        return Matrix(([-a for a in row] for row in self.rows), self.cols)

    def __add__(self, other: Sequence[Sequence[Scalar]]) -> Matrix:
        return Matrix(([a + c for a, c in zip(r, s, strict=True)]
                       for r, s in zip(self.rows, other, strict=True)), self.cols)

    def __rmul__(self, s: float) -> Matrix:
        return Matrix(([s * a for a in row] for row in self.rows), self.cols)

    def emit(self, b: ProgramBuilder) -> Matrix:
        return Matrix(([b.emit(a) for a in row] for row in self.rows), self.cols)


class Diagonal:
    """diag(d) of numbers (the penalty matrices α, β): ``D @ x`` = (d_i x_i)_i."""

    __slots__ = ("d",)

    def __init__(self, d: Iterable[float]) -> None:
        self.d = tuple(float(x) for x in d)

    def __matmul__(self, x: Sequence[Scalar]) -> Vector:
        return Vector(di * xi for di, xi in zip(self.d, x, strict=True))


def gram(b: ProgramBuilder, a: Sequence[Sequence[Scalar]], weight: float | Sequence[float]
         ) -> Matrix:
    """aᵀ W a with W = weight·I (a number) or diag(weight) (one per row of a); symmetric,
    upper triangle emitted. Only the pairs of columns that share a row of a's fixed
    sparsity pattern are formed (generation speed on long chains)."""
    n = len(a[0])
    rows = len(a)
    w = [float(x) for x in weight] if np.ndim(weight) else [float(weight)] * rows
    uniform = np.ndim(weight) == 0
    shared: dict[tuple[int, int], list[int]] = {}
    for k in range(rows):
        support = [c for c in range(n) if not structural_zero(a[k][c])]
        for x, i in enumerate(support):
            for j in support[x:]:
                shared.setdefault((i, j), []).append(k)
    upper: dict[tuple[int, int], Expr] = {}
    for (i, j), ks in sorted(shared.items()):
        if uniform:
            upper[i, j] = b.emit(w[0] * esum(a[k][i] * a[k][j] for k in ks))
        else:
            upper[i, j] = b.emit(esum(w[k] * a[k][i] * a[k][j] for k in ks))
    return Matrix([[upper.get((min(i, j), max(i, j)), ZERO) for j in range(n)]
                   for i in range(n)], n)




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


#: Largest n whose inverse :func:`adjugate_inverse` forms: Cramer's rule is forward stable
#: for n = 2 only (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed. 2002,
#: §1.10.1); for n = 3 its error grows as κ^1.5 ε (measured: 280 κε at κ = 1e8).
ADJUGATE_MAX = 2


def _determinant(a: Sequence[Sequence[Expr]]) -> Expr:
    """det(a) of a full n×n matrix by Laplace expansion along the first row."""
    if len(a) == 1:
        return a[0][0]
    return esum([(-1) ** j * a[0][j] * _determinant([row[:j] + row[j + 1:] for row in a[1:]])
                  for j in range(len(a))])


def adjugate_inverse(b: ProgramBuilder, a: Sequence[Sequence[Expr]]) -> list[list[Expr]]:
    """``A⁻¹ = adj(A) / det(A)`` of a symmetric n×n matrix, n ≤ :data:`ADJUGATE_MAX` (lower
    triangle read; Cramer's rule): one division, and every entry a few products deep,
    where :func:`ldlt` divides n times in sequence; as accurate as a backward-stable solve
    (forward stable) at that size."""
    n = len(a)
    if n > ADJUGATE_MAX:
        raise ValueError(f"adjugate_inverse: n = {n} > {ADJUGATE_MAX}")
    full = [[a[max(i, j)][min(i, j)] for j in range(n)] for i in range(n)]
    cofactor = [[b.emit((-1) ** (i + j) * _determinant(
        [row[:j] + row[j + 1:] for k, row in enumerate(full) if k != i]))
        for j in range(i + 1)] for i in range(n)] if n > 1 else [[ONE]]
    det = b.emit(esum([full[0][j] * cofactor[max(0, j)][min(0, j)] for j in range(n)]))
    inv_det = b.emit(1 / det)
    lower = [[b.emit(c * inv_det) for c in row] for row in cofactor]
    return [[lower[max(i, j)][min(i, j)] for j in range(n)] for i in range(n)]


__all__ = ["ADJUGATE_MAX", "LDLT", "Diagonal", "Matrix", "Scalar", "Vector",
           "adjugate_inverse", "gram", "inverse", "ldlt", "solve"]
