"""Sparse symmetric positive (semi)definite systems, unrolled: an LDLᵀ factorization whose
sparsity pattern and elimination order are decided at generation, each operation emitted
into the program.

The pattern of A is fixed at generation (an entry is structurally zero iff it is the ZERO
constant after folding). Generation then

1. orders the unknowns by minimum degree (George & Liu 1981, "Computer Solution of Large
   Sparse Positive Definite Systems", §5.1: eliminate a node of least degree of the
   elimination graph; George & Liu 1989, SIAM Review 31(1) 1-19), ties broken by the
   smallest index so the order is reproducible;
2. finds the structure of L for an ordering through the elimination tree (George & Liu 1981
   §5.1.2; Davis 2006, "Direct Methods for Sparse Linear Systems", §4.1-4.2: the structure of
   column j of L is that of column j of A joined with those of its children in the tree);
3. counts the operations of factor + one solve for natural order and for minimum degree and
   keeps the cheaper (:func:`choose_ordering`);
4. emits the left-looking factorization A(p, p) = L D Lᵀ with the unscaled columns
   u_ij = L_ij d_j kept (so every update L_ik u_jk is one multiplication; Davis 2006 §4.8,
   the ``ldl`` package), computing only the structurally non-zero entries of L.

Semidefinite systems (``semidefinite_tolerance=τ``): a pivot d_j ≤ τ·a_jj (a_jj the original
diagonal entry of that unknown, so the test is scale-free) marks the unknown as dependent and
1/d_j is replaced by 0 (a run-time :class:`~symgen.ir.expr.Select`), so column j of L and the
solution component j are 0. Why this solves A x = b for a consistent b: the Schur complement
S of the unknowns eliminated before j is positive semidefinite, and S_jj = 0 forces
S_ij = 0 for every i (S_ij² ≤ S_ii S_jj, the 2×2 minors of a PSD matrix), i.e. row j is a
combination of the rows eliminated before it and nothing is left to eliminate with it: with
L_*j = 0 and d_j = 0, A = L D Lᵀ still holds exactly. For b in the range of A,
y = L⁻¹b lies in the range of D (y_j = 0 for every dependent j), so x = L⁻ᵀ D⁺ y gives
A x = L D D⁺ y = L y = b, the solution whose dependent components are zero.

The choice τ = 1e-10 (:data:`SEMIDEFINITE_TOLERANCE`). Rounding leaves a zero pivot at
about n·ε·(1 + ‖W‖)²·a_jj, W the coefficients expressing the dependent row through the
earlier ones (the Schur complement's error in semidefinite Cholesky: Higham 2002, "Accuracy
and Stability of Numerical Algorithms", §10.3): for redundant constraints, whose
coefficients are of order one, 1e-14 to 1e-13 a_jj for n ≤ 100, so τ keeps a margin of 1e3
(still above the noise for ‖W‖ up to a few hundred). A pivot of an independent unknown
satisfies d_j/a_jj ≥ 1/κ₂ of the leading block of kept unknowns (d_j is at least its least
eigenvalue, a_jj at most its largest), so every pivot of a block with κ₂ below 1e10 is kept;
an unknown closer to dependence than that is dropped, its component of x then being 0
instead of a quotient of rounding errors.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from symgen.errors import SymgenError
from symgen.ir.expr import ZERO, Expr, Less, Mul, Num, Sym, add_terms, as_expr, select
from symgen.ir.program import ProgramBuilder

#: The proposed relative pivot tolerance of semidefinite systems (see the module docs).
SEMIDEFINITE_TOLERANCE = 1e-10


# ---------------------------------------------------------------------- patterns
@dataclass(frozen=True)
class Pattern:
    """Structural non-zeros of a symmetric matrix: ``lower[j]`` the sorted rows i > j with
    a_ij ≠ 0, ``diagonal[j]`` whether a_jj ≠ 0."""

    n: int
    lower: tuple[tuple[int, ...], ...]
    diagonal: tuple[bool, ...]

    @property
    def nnz_lower(self) -> int:
        """Structural non-zeros strictly below the diagonal."""
        return sum(len(c) for c in self.lower)

    def adjacency(self) -> list[list[int]]:
        """The graph of the matrix: sorted neighbours of each unknown."""
        adj: list[list[int]] = [[] for _ in range(self.n)]
        for j, rows in enumerate(self.lower):
            for i in rows:
                adj[i].append(j)
                adj[j].append(i)
        return [sorted(a) for a in adj]

    def permuted(self, perm: Sequence[int]) -> Pattern:
        """The pattern of A(p, p): unknown ``perm[k]`` becomes unknown k."""
        inv = _inverse(perm, self.n)
        lower: list[list[int]] = [[] for _ in range(self.n)]
        for j, rows in enumerate(self.lower):
            for i in rows:
                a, c = inv[i], inv[j]
                lower[min(a, c)].append(max(a, c))
        return Pattern(self.n, tuple(tuple(sorted(r)) for r in lower),
                       tuple(self.diagonal[p] for p in perm))


def structural_zero(e: Expr | float) -> bool:
    """True when ``e`` is the constant 0 (after folding): a structural zero of a pattern."""
    e = as_expr(e)
    return isinstance(e, Num) and e.value == 0.0


def _check_square(a: Sequence[Sequence[Expr]]) -> int:
    n = len(a)
    if any(len(row) != n for row in a):
        raise SymgenError(f"sparse LDLT needs a square matrix, got {n} rows of lengths "
                          f"{sorted({len(row) for row in a})}")
    return n


def pattern_of(a: Sequence[Sequence[Expr]]) -> Pattern:
    """The structural pattern of the symmetric matrix ``a`` (its lower triangle is read, as
    :func:`symgen.formulations.dense.ldlt` does)."""
    n = _check_square(a)
    lower = tuple(tuple(i for i in range(j + 1, n) if not structural_zero(a[i][j]))
                  for j in range(n))
    return Pattern(n, lower, tuple(not structural_zero(a[j][j]) for j in range(n)))


def _inverse(perm: Sequence[int], n: int) -> list[int]:
    if sorted(perm) != list(range(n)):
        raise SymgenError(f"the ordering must be a permutation of 0..{n - 1}")
    inv = [0] * n
    for k, p in enumerate(perm):
        inv[p] = k
    return inv


# ---------------------------------------------------------------------- ordering
def minimum_degree(pattern: Pattern) -> tuple[int, ...]:
    """A minimum-degree ordering (``perm[k]`` is eliminated k-th): repeatedly eliminate an
    unknown of least degree in the elimination graph, making its neighbours a clique (George &
    Liu 1981 §5.1.1; exact degrees, no supervariables). Ties go to the smallest index, so
    the order depends only on the pattern."""
    return _eliminate(pattern, [set() for _ in range(pattern.n)])


def _eliminate(pattern: Pattern, prerequisites: list[set[int]]) -> tuple[int, ...]:
    """Minimum degree in which an unknown becomes eligible only once all of its
    ``prerequisites`` are eliminated (:func:`minimum_degree`, :func:`saddle_ordering`)."""
    adj = [set(a) for a in pattern.adjacency()]
    waiting = [len(p) for p in prerequisites]
    heap = [(len(adj[v]), v) for v in range(pattern.n) if waiting[v] == 0]
    heapq.heapify(heap)
    done = [False] * pattern.n
    order: list[int] = []
    while heap:
        deg, v = heapq.heappop(heap)
        if done[v] or deg != len(adj[v]):
            continue  # eliminated, or a stale entry (the current degree was pushed too)
        done[v] = True
        order.append(v)
        nbrs = sorted(adj[v])
        for u in nbrs:
            au = adj[u]
            au.discard(v)
            au.update(w for w in nbrs if w != u)
            if v in prerequisites[u]:
                waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(heap, (len(au), u))
        adj[v] = set()
    if len(order) != pattern.n:
        raise SymgenError("minimum-degree ordering: an unknown's prerequisites never all "
                          "became eliminated")
    return tuple(order)


# ---------------------------------------------------------------------- symbolic factorization
@dataclass(frozen=True)
class Symbolic:
    """The structure of L for A(p, p): ``cols[j]`` the sorted rows i > j with L_ij ≠ 0,
    ``rows[i]`` the sorted columns k < i with L_ik ≠ 0, ``parent`` the elimination tree
    (−1 at roots), all in the permuted indices."""

    perm: tuple[int, ...]
    parent: tuple[int, ...]
    cols: tuple[tuple[int, ...], ...]
    rows: tuple[tuple[int, ...], ...]

    @property
    def nnz(self) -> int:
        """Structural non-zeros of L below the diagonal."""
        return sum(len(c) for c in self.cols)


def symbolic(pattern: Pattern, perm: Sequence[int] | None = None) -> Symbolic:
    """The structure of L for the ordering ``perm`` (identity by default): column j of L is
    column j of A(p, p) joined with the columns of its children in the elimination tree,
    less j; its parent is its first sub-diagonal row (George & Liu 1981 §5.1.2, Davis 2006
    Thm 4.2)."""
    n = pattern.n
    perm = tuple(range(n)) if perm is None else tuple(perm)
    ap = pattern.permuted(perm)
    pending: list[list[int]] = [[] for _ in range(n)]  # children's columns, by parent
    cols: list[tuple[int, ...]] = []
    parent = [-1] * n
    for j in range(n):
        s = set(ap.lower[j])
        for c in pending[j]:
            s.update(i for i in cols[c] if i > j)
        col = tuple(sorted(s))
        cols.append(col)
        if col:
            parent[j] = col[0]
            pending[col[0]].append(j)
    rows: list[list[int]] = [[] for _ in range(n)]
    for j, col in enumerate(cols):
        for i in col:
            rows[i].append(j)
    return Symbolic(perm, tuple(parent), tuple(cols), tuple(tuple(r) for r in rows))


@dataclass(frozen=True)
class Cost:
    """Floating-point operations by kind (``other``: the pivot selections)."""

    mul: int
    add: int
    div: int
    other: int = 0

    @property
    def total(self) -> int:
        return self.mul + self.add + self.div + self.other

    def __add__(self, o: Cost) -> Cost:
        return Cost(self.mul + o.mul, self.add + o.add, self.div + o.div, self.other + o.other)


def factor_cost(pattern: Pattern, sym: Symbolic, semidefinite: bool = False) -> Cost:
    """Operations :func:`factor` emits for generic (symbolic, non-constant) entries:
    d_j = a_jj − Σ_k L_jk u_jk, u_ij = a_ij − Σ_k L_ik u_jk (k < j), L_ij = u_ij·(1/d_j); a
    semidefinite pivot adds τ·a_jj and the selection. Every pair i > j of rows of column k
    is one update of u_ij (George & Liu 1981 §2.2, the Σ c_k(c_k + 3)/2 count); a fill entry
    (a_ij = 0) has at least one update and starts from its first one (one add fewer)."""
    ap = pattern.permuted(sym.perm)
    updates = sum(len(c) * (len(c) - 1) // 2 for c in sym.cols)
    fill = sym.nnz - ap.nnz_lower
    mul = 2 * sym.nnz + updates  # d_j's terms, the updates, the scaling by 1/d_j
    add = updates - fill + sum(len(r) - 1 + ap.diagonal[j]
                               for j, r in enumerate(sym.rows) if r)
    n = pattern.n
    extra = Cost(n, 0, 0, n) if semidefinite else Cost(0, 0, 0)
    return Cost(mul, add, n) + extra


def solve_cost(sym: Symbolic) -> Cost:
    """Operations of one :func:`solve` with a right-hand side of generic entries: forward
    and back substitution (one multiply-add per entry of L each) and the scaling by 1/d."""
    nnz = sym.nnz
    return Cost(2 * nnz + len(sym.perm), 2 * nnz, 0)


def operation_count(pattern: Pattern, perm: Sequence[int] | None = None,
                    semidefinite: bool = False) -> Cost:
    """Operations of factor + one solve for the ordering ``perm`` (identity by default)."""
    sym = symbolic(pattern, perm)
    return factor_cost(pattern, sym, semidefinite) + solve_cost(sym)


def choose_ordering(pattern: Pattern) -> tuple[tuple[int, ...], Cost, Cost]:
    """(ordering, cost in natural order, cost of the ordering): minimum degree when it
    costs fewer operations (factor + one solve) than natural order, else natural order."""
    natural = tuple(range(pattern.n))
    cost_natural = operation_count(pattern, natural)
    md = minimum_degree(pattern)
    cost_md = operation_count(pattern, md)
    if cost_md.total < cost_natural.total:
        return md, cost_natural, cost_md
    return natural, cost_natural, cost_natural


# ---------------------------------------------------------------------- numeric (emitted)
@dataclass(frozen=True)
class SparseLDLT:
    """A(p, p) = L diag(d) Lᵀ with L unit lower-triangular, in the permuted indices:
    ``L[(i, j)]`` the structurally non-zero entries (i > j), ``inv_d`` holds 1/d (0 for a
    dependent unknown of a semidefinite factorization)."""

    symbolic: Symbolic
    L: dict[tuple[int, int], Expr]
    d: tuple[Expr, ...]
    inv_d: tuple[Expr, ...]

    @property
    def n(self) -> int:
        return len(self.d)

    @property
    def perm(self) -> tuple[int, ...]:
        return self.symbolic.perm


def factor(b: ProgramBuilder, a: Sequence[Sequence[Expr]], perm: Sequence[int] | None = None,
           semidefinite_tolerance: float | None = None,
           reciprocal: Callable[[int, Expr, Expr], Expr] | None = None) -> SparseLDLT:
    """Unrolled sparse LDLᵀ of the symmetric positive-definite ``a`` (lower triangle read)
    in the order ``perm`` (identity by default), left-looking with unscaled columns
    u_ij = L_ij d_j (Davis 2006 §4.8). With ``semidefinite_tolerance`` τ, ``a`` may be
    positive semidefinite: 1/d_j is 0 unless d_j > τ·a_jj (see the module docs).
    ``reciprocal(unknown, d_j, a_jj)``, when given, computes 1/d_j instead (indefinite
    systems: :func:`factor_saddle`)."""
    pattern = pattern_of(a)
    sym = symbolic(pattern, perm)
    p = sym.perm
    L: dict[tuple[int, int], Expr] = {}
    U: dict[tuple[int, int], Expr] = {}
    d: list[Expr] = []
    inv_d: list[Expr] = []
    for j in range(pattern.n):
        pj = p[j]
        djj = as_expr(a[pj][pj])
        dj = b.emit(_minus_products(djj, [(L[(j, k)], U[(j, k)]) for k in sym.rows[j]]))
        d.append(dj)
        inv_d.append(reciprocal(pj, dj, djj) if reciprocal is not None
                     else _reciprocal(b, pj, dj, djj, semidefinite_tolerance))
        terms: dict[int, list[tuple[Expr, Expr]]] = {i: [] for i in sym.cols[j]}
        for k in sym.rows[j]:
            col, ujk = sym.cols[k], U[(j, k)]
            for i in col[bisect_right(col, j):]:
                terms[i].append((L[(i, k)], ujk))
        for i in sym.cols[j]:
            pi = p[i]
            aij = as_expr(a[pi][pj] if pi > pj else a[pj][pi])
            u = b.emit(_minus_products(aij, terms[i]))
            U[(i, j)] = u
            L[(i, j)] = b.emit(u * inv_d[j])
    return SparseLDLT(sym, L, tuple(d), tuple(inv_d))


def _reciprocal(b: ProgramBuilder, unknown: int, dj: Expr, ajj: Expr, tol: float | None
                ) -> Expr:
    """1/d_j; semidefinite: 1/d_j if τ·a_jj < d_j else 0, decided at generation when both
    are numbers. Only the selected branch runs in C and Python; the simd backend computes
    both and blends (a masked lane's 1/0 = inf is discarded). A NaN pivot selects 0."""
    if tol is None:
        if structural_zero(dj):
            raise SymgenError(f"the pivot of unknown {unknown} in the sparse LDLT is exactly "
                              "zero: the matrix is not positive definite (a semidefinite "
                              "tolerance allows this)")
        return b.emit(1 / dj)
    if structural_zero(dj):
        return ZERO
    threshold = b.emit(tol * ajj)
    if isinstance(dj, Num) and isinstance(threshold, Num):
        return Num(1 / dj.value) if dj.value > threshold.value else ZERO
    return b.emit(select(Less(threshold, dj), 1 / dj, ZERO))


def _signed_symbol(e: Expr) -> tuple[Sym, float] | None:
    """(s, c) when ``e`` is c·s for a symbol s, else None."""
    if isinstance(e, Sym):
        return e, 1.0
    if isinstance(e, Mul) and len(e.factors) == 1 and e.factors[0][1] == 1 \
            and isinstance(e.factors[0][0], Sym):
        return e.factors[0][0], e.coeff
    return None


def _minus_products(first: Expr, products: Sequence[tuple[Expr, Expr]]) -> Expr:
    """``first − Σ x·y`` in canonical form. A product of two different (scaled) symbols, the
    bulk of the updates, is built as the canonical ``Mul`` directly (the one
    :func:`symgen.ir.expr.mul` builds, without its general bookkeeping: generation speed)."""
    terms: list[tuple[Expr, float]] = [(first, 1.0)]
    for x, y in products:
        sx, sy = _signed_symbol(x), _signed_symbol(y)
        if sx is None or sy is None or sx[0].key == sy[0].key:
            terms.append((x * y, -1.0))
            continue
        pair = ((sx[0], 1), (sy[0], 1)) if sx[0].key < sy[0].key else ((sy[0], 1), (sx[0], 1))
        terms.append((Mul(1.0, pair), -sx[1] * sy[1]))
    return add_terms(0.0, terms)


def factor_auto(b: ProgramBuilder, a: Sequence[Sequence[Expr]],
                semidefinite_tolerance: float | None = None) -> SparseLDLT:
    """:func:`factor` in the cheaper of natural and minimum-degree order
    (:func:`choose_ordering`)."""
    perm, _, _ = choose_ordering(pattern_of(a))
    return factor(b, a, perm, semidefinite_tolerance)


def saddle_ordering(pattern: Pattern, n: int) -> tuple[int, ...]:
    """A minimum-degree ordering of the saddle-point matrix [[A, Jᵀ], [J, 0]] (unknowns
    0..n-1 the primal ones, n.. the multipliers) in which a multiplier is eliminated only
    once every primal unknown of its own row of J is. Then the leading block eliminated up
    to and including a multiplier is a KKT matrix [[A_EE, J_PEᵀ], [J_PE, 0]] whose
    constraints P lie entirely in the eliminated primal set E: it is regular whenever A is
    positive definite and those constraints are independent, so every multiplier pivot is
    negative unless its constraint depends on earlier ones, at every configuration (the
    quasi-definite argument of Vanderbei 1995; minimum degree: George & Liu 1981
    §5.1.1). Ties go to the smallest index."""
    adj = pattern.adjacency()
    own = [{u for u in adj[v] if u < n} if v >= n else set() for v in range(pattern.n)]
    return _eliminate(pattern, own)


def factor_saddle(b: ProgramBuilder, a: Sequence[Sequence[Expr]],
                  jac: Sequence[Sequence[Expr]], scales: Sequence[float],
                  tolerance: float = SEMIDEFINITE_TOLERANCE) -> SparseLDLT:
    """LDLᵀ of K = [[A, Jᵀ], [J, 0]] (A symmetric positive definite n × n, J m × n) in the
    order of :func:`saddle_ordering`: primal pivots are positive, multiplier pivots
    negative. A multiplier whose pivot satisfies −d_j ≤ τ·scales[j] (a constraint
    dependent on the ones eliminated before it: redundant) gets 1/d_j = 0, so for a
    consistent right-hand side the solution has that multiplier 0 and the primal part is
    the unique solution (the semidefinite argument of the module docstring applied to the
    negative semidefinite Schur complement −J A⁻¹ Jᵀ). ``scales``: the size of each
    constraint's pivot at a regular configuration (e.g. J_j A⁻¹ J_jᵀ at assembly)."""
    n, m = len(a), len(jac)
    k = [[ZERO] * (n + m) for _ in range(n + m)]
    for i in range(n):
        for j in range(n):
            k[i][j] = as_expr(a[i][j])
    for r in range(m):
        for c in range(n):
            k[n + r][c] = k[c][n + r] = as_expr(jac[r][c])
    perm = saddle_ordering(pattern_of(k), n)

    def reciprocal(unknown: int, dj: Expr, ajj: Expr) -> Expr:
        if unknown < n:
            return _reciprocal(b, unknown, dj, ajj, None)
        if structural_zero(dj):
            return ZERO
        threshold = -tolerance * float(scales[unknown - n])
        return b.emit(select(Less(dj, Num(threshold)), 1 / dj, ZERO))

    return factor(b, k, perm, reciprocal=reciprocal)


def solve_saddle(b: ProgramBuilder, f: SparseLDLT, top: Sequence[Expr],
                 bottom: Sequence[Expr]) -> tuple[list[Expr], list[Expr]]:
    """(x, y) with A x + Jᵀ y = top, J x = bottom, from :func:`factor_saddle`."""
    n = len(top)
    out = solve(b, f, [*top, *bottom])
    return out[:n], out[n:]


def solve(b: ProgramBuilder, f: SparseLDLT, rhs: Sequence[Expr]) -> list[Expr]:
    """``A⁻¹ rhs`` (semidefinite: the solution with the dependent unknowns zero), in the
    original order: forward substitution, scaling by 1/d, back substitution, each over the
    structurally non-zero entries of L only."""
    n, p, sym = f.n, f.perm, f.symbolic
    if len(rhs) != n:
        raise SymgenError(f"the right-hand side has {len(rhs)} entries, the system {n}")
    y: list[Expr] = []
    for i in range(n):
        y.append(b.emit(_minus_products(as_expr(rhs[p[i]]),
                                        [(f.L[(i, k)], y[k]) for k in sym.rows[i]])))
    z = [b.emit(y[i] * f.inv_d[i]) for i in range(n)]
    x: list[Expr] = [ZERO] * n
    for i in reversed(range(n)):
        x[i] = b.emit(_minus_products(z[i], [(f.L[(k, i)], x[k]) for k in sym.cols[i]]))
    out: list[Expr] = [ZERO] * n
    for k in range(n):
        out[p[k]] = x[k]
    return out


__all__ = [
    "SEMIDEFINITE_TOLERANCE",
    "Cost",
    "Pattern",
    "SparseLDLT",
    "Symbolic",
    "choose_ordering",
    "factor",
    "factor_auto",
    "factor_saddle",
    "factor_cost",
    "minimum_degree",
    "operation_count",
    "pattern_of",
    "saddle_ordering",
    "solve",
    "solve_saddle",
    "structural_zero",
    "symbolic",
]
