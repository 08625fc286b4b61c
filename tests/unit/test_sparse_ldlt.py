"""Sparse unrolled LDLᵀ (symgen.formulations.sparse): orderings, symbolic factorization,
operation counts and the emitted factor/solve against numpy.

Tolerances: an LDLᵀ solve without pivoting of an SPD matrix has backward error
O(n ε) ‖A‖ (Higham 2002, Thm 10.4 for Cholesky), so the relative error of x is at most about
n ε κ(A); the matrices here are diagonally dominant (κ ≤ a few tens) and n ≤ 120, which gives
≤ 1e-12 with a wide margin. The semidefinite solves are checked through the residual
‖A x − b‖ ≤ 1e-10 ‖A‖ ‖x‖: the dropped pivots are O(n ε a_jj), far below τ = 1e-10.
"""

from __future__ import annotations

import numpy as np
import pytest

from symgen.errors import SymgenError
from symgen.formulations import dense, sparse
from symgen.ir.counts import op_counts
from symgen.ir.expr import ZERO, Elem, Expr, Num, Sym, esum
from symgen.ir.printer import evaluate
from symgen.ir.program import Program, ProgramBuilder

EPS = np.finfo(float).eps


# ------------------------------------------------------------------------------ helpers
def random_mask(n: int, density: float, rng: np.random.Generator) -> np.ndarray:
    m = rng.random((n, n)) < density
    return m | m.T | np.eye(n, dtype=bool)


def band_mask(n: int, half: int) -> np.ndarray:
    return np.abs(np.subtract.outer(np.arange(n), np.arange(n))) <= half


def arrow_mask(n: int, hub: int = 0) -> np.ndarray:
    m = np.eye(n, dtype=bool)
    m[hub, :] = m[:, hub] = True
    return m


def spd_on(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random symmetric, strictly diagonally dominant (so SPD, κ small) matrix whose
    off-diagonal non-zeros are exactly ``mask``."""
    n = len(mask)
    a = np.where(mask, rng.uniform(0.1, 1.0, (n, n)) * rng.choice([-1, 1], (n, n)), 0.0)
    a = np.tril(a, -1)
    a = a + a.T
    return a + np.diag(np.abs(a).sum(axis=1) + rng.uniform(0.5, 1.5, n))


def symbolic_matrix(b: ProgramBuilder, mask: np.ndarray) -> tuple[list[list[Expr]], list]:
    """An input ``a`` holding the lower-triangle non-zeros of ``mask``; the matrix of
    symbols (ZERO elsewhere) and the (i, j) of each input element."""
    n = len(mask)
    idx = [(i, j) for i in range(n) for j in range(i + 1) if mask[i, j]]
    e = b.input("a", len(idx))
    a: list[list[Expr]] = [[ZERO] * n for _ in range(n)]
    for k, (i, j) in enumerate(idx):
        a[i][j] = a[j][i] = e[k]
    return a, idx


def solver_program(mask: np.ndarray, how: str = "auto", perm=None, tol: float | None = None
                   ) -> tuple[Program, list, sparse.SparseLDLT | None]:
    b = ProgramBuilder("solve")
    a, idx = symbolic_matrix(b, mask)
    rhs = b.input("r", len(mask))
    f = None
    if how == "dense":
        x = dense.solve(b, dense.ldlt(b, a), rhs)
    else:
        f = sparse.factor_auto(b, a, tol) if how == "auto" else sparse.factor(b, a, perm, tol)
        x = sparse.solve(b, f, rhs)
    b.output("x", len(mask), x)
    return b.build(), idx, f


def factor_program(mask: np.ndarray, how: str, perm=None) -> Program:
    """The factorization alone (L and 1/d as outputs), for operation counts."""
    b = ProgramBuilder("factor")
    a, _ = symbolic_matrix(b, mask)
    if how == "dense":
        f = dense.ldlt(b, a)
        values = [x for row in f.L for x in row] + list(f.inv_d)
    else:
        g = sparse.factor(b, a, perm)
        values = list(g.L.values()) + list(g.inv_d)
    b.output("f", len(values), values)
    return b.build()


def numeric_fill(a: np.ndarray, perm) -> int:
    """Non-zeros of the Cholesky factor of A(p, p) below the diagonal (numpy): with random
    values no cancellation occurs, so this is the structural count."""
    p = list(perm)
    c = np.linalg.cholesky(a[np.ix_(p, p)])
    return int((np.abs(np.tril(c, -1)) > 1e-300).sum())


def cases():
    """(name, mask) of sizes 5-120: random patterns (1 to 8 off-diagonal entries per row on
    average), bands, arrows (hub first and last)."""
    rng = np.random.default_rng(20240601)
    out = []
    for k, n in enumerate((5, 9, 17, 30, 47, 64, 82, 120)):
        out.append((f"random{n}", random_mask(n, min(rng.uniform(1.0, 4.0) / n, 0.3), rng)))
        out.append((f"band{n}", band_mask(n, 1 + k % 5)))
        out.append((f"arrow{n}", arrow_mask(n, 0 if k % 2 == 0 else n - 1)))
    return out


CASES = cases()


# ------------------------------------------------------------------------------ structure
def test_pattern_of_reads_structural_zeros_after_folding():
    x, y = Sym("x"), Sym("y")
    a = [[x, ZERO, y], [ZERO, Num(2.0), x - x], [y, (x - x) * y, x * y]]
    p = sparse.pattern_of(a)
    assert p.n == 3 and p.lower == ((2,), (), ()) and p.diagonal == (True, True, True)
    assert sparse.pattern_of([[0.0, 1.0], [1.0, 3.0]]).diagonal == (False, True)


@pytest.mark.parametrize("name,mask", CASES, ids=[c[0] for c in CASES])
def test_orderings_are_permutations_and_the_symbolic_fill_is_the_numeric_one(name, mask):
    rng = np.random.default_rng(len(mask))
    a = spd_on(mask, rng)
    pattern = sparse.pattern_of([[Sym("s") if v else ZERO for v in row] for row in mask])
    md = sparse.minimum_degree(pattern)
    assert sorted(md) == list(range(len(mask)))
    assert sparse.minimum_degree(pattern) == md  # reproducible
    for perm in (None, md):
        sym = sparse.symbolic(pattern, perm)
        assert sym.nnz == numeric_fill(a, sym.perm)
        for j, col in enumerate(sym.cols):  # the elimination tree: parent = first row
            assert sym.parent[j] == (col[0] if col else -1)
    chosen, natural, cost = sparse.choose_ordering(pattern)
    assert cost.total <= natural.total
    assert chosen in (tuple(range(len(mask))), md)


def test_minimum_degree_fill_is_linear_on_arrows_and_no_worse_on_bands():
    for n in (20, 82, 160):
        for hub in (0, n // 2):
            pattern = sparse.pattern_of(arrow_mask(n, hub).tolist())
            natural = sparse.symbolic(pattern).nnz
            md = sparse.symbolic(pattern, sparse.minimum_degree(pattern)).nnz
            assert md == n - 1  # no fill: the leaves go first, the hub last
            if hub == 0:
                assert natural == n * (n - 1) // 2  # the hub first fills everything
        for half in (1, 2, 4, 7):
            pattern = sparse.pattern_of(band_mask(n, half).tolist())
            natural = sparse.symbolic(pattern).nnz
            assert natural == sum(min(half, n - 1 - j) for j in range(n))  # a band: no fill
            assert sparse.symbolic(pattern, sparse.minimum_degree(pattern)).nnz <= natural


def test_pattern_accepts_floats_and_rejects_bad_shapes():
    with pytest.raises(SymgenError, match="square"):
        sparse.pattern_of([[1.0, 0.0], [0.0]])
    with pytest.raises(SymgenError, match="permutation"):
        sparse.symbolic(sparse.pattern_of([[1.0, 0.0], [0.0, 1.0]]), (0, 0))


# ------------------------------------------------------------------------------ numerics
def test_the_direct_products_are_the_canonical_ones():
    """The updates' fast construction gives the expression ``first − Σ x·y`` of expr.py."""
    x, y, z = Sym("x"), Sym("y"), Elem("a", 3)
    atoms = [x, y, z, -x, 2.5 * y, -3.0 * z, Num(2.0), x + y, x * y, ZERO]
    pairs = [(p, q) for p in atoms for q in atoms]
    for first in (Sym("w"), ZERO, Num(1.5), x):
        for k in range(0, len(pairs), 7):
            chunk = pairs[k:k + 7]
            expected = first - esum(p * q for p, q in chunk)
            assert sparse._minus_products(first, chunk) == expected


# ------------------------------------------------------------------------------ numerics
@pytest.mark.parametrize("name,mask", CASES, ids=[c[0] for c in CASES])
def test_emitted_solve_matches_numpy_and_the_counted_operations(name, mask):
    rng = np.random.default_rng(7 + len(mask))
    a = spd_on(mask, rng)
    prog, idx, f = solver_program(mask)
    rhs = rng.standard_normal(len(mask))
    x = evaluate(prog, a=[a[i, j] for i, j in idx], r=rhs)["x"]
    ref = np.linalg.solve(a, rhs)
    assert np.linalg.norm(x - ref) <= 1e-12 * np.linalg.norm(ref)
    pattern = sparse.pattern_of([[Sym("s") if v else ZERO for v in row] for row in mask])
    counted = sparse.operation_count(pattern, f.perm)
    ops = op_counts(prog)
    assert (ops["mul"], ops["add"], ops["div"]) == (counted.mul, counted.add, counted.div)


SMALL = [c for c in CASES if len(c[1]) <= 30] + [("band82", band_mask(82, 4))]


@pytest.mark.parametrize("name,mask", SMALL, ids=[c[0] for c in SMALL])
def test_natural_order_emits_no_more_than_the_dense_factorization(name, mask):
    sp, dn = factor_program(mask, "sparse"), factor_program(mask, "dense")
    assert op_counts(sp)["total"] <= op_counts(dn)["total"]
    for kind in ("mul", "add", "div"):
        assert op_counts(sp)[kind] <= op_counts(dn)[kind]


def test_constant_entries_fold_below_the_count():
    """Numbers in A (a constant mass matrix's entries) fold: the count is then a bound."""
    rng = np.random.default_rng(3)
    mask = band_mask(12, 2)
    a = spd_on(mask, rng)
    b = ProgramBuilder("mixed")
    e = b.input("s", 12)
    m = [[Num(a[i, j]) if mask[i, j] else ZERO for j in range(12)] for i in range(12)]
    for i in range(12):
        m[i][i] = b.emit(e[i] + a[i, i])  # 12 additions before the factorization
    rhs = b.input("r", 12)
    b.output("x", 12, sparse.solve(b, sparse.factor(b, m), rhs))
    prog = b.build()
    counted = sparse.operation_count(sparse.pattern_of(m))
    assert op_counts(prog)["total"] - 12 <= counted.total
    shift = rng.uniform(0, 1, 12)
    r = rng.standard_normal(12)
    x = evaluate(prog, s=shift, r=r)["x"]
    ref = np.linalg.solve(a + np.diag(shift), r)
    assert np.linalg.norm(x - ref) <= 1e-12 * np.linalg.norm(ref)


def test_an_exactly_zero_pivot_is_a_clear_error_unless_semidefinite():
    x = Sym("x")
    a = [[x, ZERO], [ZERO, ZERO]]
    with pytest.raises(SymgenError, match="unknown 1"):
        sparse.factor(ProgramBuilder("z"), a)
    f = sparse.factor(ProgramBuilder("z"), a, semidefinite_tolerance=1e-10)
    assert f.inv_d[1] == ZERO


# ------------------------------------------------------------------------------ semidefinite
def semidefinite_program(mask: np.ndarray, tol: float = sparse.SEMIDEFINITE_TOLERANCE,
                         how: str = "auto"):
    return solver_program(mask, how=how, tol=tol)


def check_semidefinite(a: np.ndarray, rng: np.random.Generator, how: str = "auto") -> None:
    n = len(a)
    mask = a != 0.0
    prog, idx, f = semidefinite_program(mask | np.eye(n, dtype=bool), how=how)
    rank = np.linalg.matrix_rank(a)
    assert rank < n
    for _ in range(3):
        b = a @ rng.standard_normal(n)  # consistent
        x = evaluate(prog, a=[a[i, j] for i, j in idx], r=b)["x"]
        assert np.isfinite(x).all()
        assert np.linalg.norm(a @ x - b) <= 1e-10 * np.linalg.norm(a, 2) * np.linalg.norm(x)
        assert np.linalg.norm(a @ x - b) <= 1e-10 * np.linalg.norm(b)
        assert int((x == 0.0).sum()) == n - rank  # exactly the dependent unknowns are 0
    ops = op_counts(prog)
    assert ops["other"] == n  # one selection per pivot


def gram_with_dependent_rows(n: int, rng: np.random.Generator) -> np.ndarray:
    """A = B Bᵀ, B (n × (n + 5)) sparse with a strong diagonal, and n/6 of its rows
    replaced by combinations of two others with coefficients of magnitude 0.5-2 (as
    redundant constraints are): rank(A) = rank(B) < n."""
    b = np.where(rng.random((n, n + 5)) < 2 / n, rng.standard_normal((n, n + 5)), 0.0)
    b[np.arange(n), np.arange(n)] += 2.0
    dependent = rng.choice(n, max(1, n // 6), replace=False)
    independent = np.setdiff1d(np.arange(n), dependent)
    for r in dependent:
        k = rng.choice(independent, 2, replace=False)
        c = rng.uniform(0.5, 2.0, 2) * rng.choice([-1, 1], 2)
        b[r] = c[0] * b[k[0]] + c[1] * b[k[1]]
    return b @ b.T


def test_semidefinite_gram_matrix_with_dependent_rows():
    rng = np.random.default_rng(11)
    for n in (8, 30, 50):
        a = gram_with_dependent_rows(n, rng)
        check_semidefinite(a, rng)
        check_semidefinite(a, rng, how="natural")


def test_semidefinite_schur_complement_of_redundant_constraints():
    """S = Φ M⁻¹ Φᵀ of a chain of planar bars (two points each, block-diagonal M) with
    every third constraint duplicated as a combination of two: S is singular, sparse."""
    rng = np.random.default_rng(5)
    bars = 10
    n = 4 * bars
    minv = np.zeros((n, n))
    for k in range(bars):
        blk = rng.standard_normal((4, 4))
        minv[4 * k:4 * k + 4, 4 * k:4 * k + 4] = np.linalg.inv(blk @ blk.T + 4 * np.eye(4))
    rows = []
    for k in range(bars):  # rigid length of bar k, and the joint to bar k + 1
        r = np.zeros(n)
        r[4 * k:4 * k + 4] = rng.standard_normal(4)
        rows.append(r)
        if k + 1 < bars:
            r = np.zeros(n)
            r[4 * k + 2] = 1.0
            r[4 * k + 4] = -1.0
            rows.append(r)
    phi = np.array(rows)
    redundant = [phi[i] + 0.7 * phi[i + 1] for i in range(0, len(rows) - 1, 3)]
    phi = np.vstack([phi, *redundant])
    s = phi @ minv @ phi.T
    s[np.abs(s) < 1e-300] = 0.0
    check_semidefinite(s, rng)


def test_semidefinite_factor_of_an_spd_matrix_is_the_plain_one():
    rng = np.random.default_rng(9)
    mask = random_mask(25, 0.1, rng)
    a = spd_on(mask, rng)
    prog, idx, f = semidefinite_program(mask)
    rhs = rng.standard_normal(25)
    x = evaluate(prog, a=[a[i, j] for i, j in idx], r=rhs)["x"]
    assert np.linalg.norm(x - np.linalg.solve(a, rhs)) <= 1e-12 * np.linalg.norm(x)
    pattern = sparse.pattern_of(mask.tolist())
    counted = sparse.operation_count(pattern, f.perm, semidefinite=True)
    ops = op_counts(prog)
    assert (ops["mul"], ops["add"], ops["div"], ops["other"]) == \
        (counted.mul, counted.add, counted.div, counted.other)
