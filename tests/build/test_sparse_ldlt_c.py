"""The semidefinite sparse LDLᵀ (symgen.formulations.sparse) compiled to C: its pivot
selections go through the C printer (scalar calls) and the simd backend (a batch: mask
blends, both branches computed), and both solve a singular consistent system like the
Python evaluator.

Tolerances: the C and Python programs perform the same IEEE operations in the same order,
but a singular system amplifies the last-bit differences of a pivot that is rounding noise
(1/d is 0 in both, but a kept pivot's quotient may differ in its last bits), so the outputs
are compared through the residual ‖A x − b‖ ≤ 1e-10 ‖b‖ (see tests/unit/test_sparse_ldlt.py)
and the exact zeros of the dependent unknowns.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from random_models import parametric_arm

from symgen.build.compiler import compile_kernels
from symgen.formulations import sparse
from symgen.generate import KernelSet, Options
from symgen.ir.counts import op_counts
from symgen.ir.expr import ZERO, Expr
from symgen.ir.optimize import optimize
from symgen.ir.printer import evaluate
from symgen.ir.program import ProgramBuilder

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


def singular_system(rng: np.random.Generator) -> np.ndarray:
    """A = B Bᵀ (12 × 12), B sparse with rows 9-11 combinations of others: rank 9."""
    n = 12
    b = np.where(rng.random((n, n + 3)) < 0.15, rng.standard_normal((n, n + 3)), 0.0)
    b[np.arange(n), np.arange(n)] += 2.0
    b[9] = b[0] - 0.5 * b[3]
    b[10] = 1.5 * b[4] + b[7]
    b[11] = -b[1] + 0.8 * b[8]
    return b @ b.T


def test_compiled_semidefinite_solve_scalar_and_batch(monkeypatch, tmp_path):
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path / "cache"))
    rng = np.random.default_rng(4)
    a = singular_system(rng)
    n = len(a)
    idx = [(i, j) for i in range(n) for j in range(i + 1) if a[i, j] != 0.0]
    bld = ProgramBuilder("psd_solve", "semidefinite sparse LDLT solve")
    e = bld.input("a", len(idx), "lower-triangle non-zeros")
    m: list[list[Expr]] = [[ZERO] * n for _ in range(n)]
    for k, (i, j) in enumerate(idx):
        m[i][j] = m[j][i] = e[k]
    r = bld.input("r", n, "right-hand side")
    f = sparse.factor_auto(bld, m, sparse.SEMIDEFINITE_TOLERANCE)
    bld.output("x", n, sparse.solve(bld, f, r), "a solution")
    prog = optimize(bld.build())
    assert op_counts(prog)["other"] == n
    ks = KernelSet(parametric_arm().resolve(), Options(), prefix="psd", formulation="natural",
                   tree_layout=False)
    ks.programs["psd_solve"] = prog
    ks.kernel_of["psd_solve"] = "nc_mass_matrix"  # registered kernel outside the tree catalogue
    lib = compile_kernels(ks, flags=("-O1", "-std=c99"))
    values = np.array([a[i, j] for i, j in idx])
    rhs = a @ rng.standard_normal((9, n)).T  # 9 consistent right-hand sides
    batch = lib.psd_solve(values, rhs.T)  # the simd batch function (when the CPU has one)
    assert batch.shape == (9, n)
    for k in range(9):
        single = lib.psd_solve(values, rhs[:, k])
        python = evaluate(prog, a=values, r=rhs[:, k])["x"]
        for x in (single, batch[k], python):
            assert np.isfinite(x).all()
            assert np.linalg.norm(a @ x - rhs[:, k]) <= 1e-10 * np.linalg.norm(rhs[:, k])
            assert int((x == 0.0).sum()) == n - np.linalg.matrix_rank(a)
        assert np.allclose(single, python, rtol=1e-9, atol=1e-9 * np.abs(python).max())
