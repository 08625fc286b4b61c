"""The Solve statement (symgen.ir.program.Solve): M⁻¹X in place on output rows, through a
tree-sparse LᵀDL factor, checked against numpy's dense solve, through the optimiser, the
Python printer and the operation counts; and the op counter of the bench's C text, which
counts a loop's statement once per trip."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from symgen.errors import SymgenError
from symgen.formulations.ltdl import ltdl, ltdl_solve_rows
from symgen.ir.autodiff import replay
from symgen.ir.counts import op_counts
from symgen.ir.expr import ZERO
from symgen.ir.optimize import optimize
from symgen.ir.printer import PythonPrinter, evaluate, python_source
from symgen.ir.program import ProgramBuilder


def random_tree(n: int, rng: np.random.Generator) -> list[int]:
    """DOF parents, each DOF's parent numbered below it (a tree in λ order)."""
    return [-1] + [int(rng.integers(-1, k)) for k in range(1, n)]


def tree_matrix(parent: list[int], rng: np.random.Generator) -> np.ndarray:
    """M = LᵀDL with L unit lower triangular, nonzero only on each row's chain, D > 0: the
    pattern Featherstone 2008, §6.5 factors without fill-in (well conditioned)."""
    n = len(parent)
    lower = np.eye(n)
    for i in range(n):
        j = parent[i]
        while j >= 0:
            lower[i, j] = rng.uniform(-0.5, 0.5)
            j = parent[j]
    return lower.T @ np.diag(rng.uniform(1.0, 2.0, n)) @ lower


def solve_program(parent: list[int], width: int, zero: np.ndarray):
    """A program with inputs M (n × n) and X (n × width) storing M⁻¹X (X's elements where
    ``zero`` is set replaced by structural zeros) split over two outputs: ``left`` (n × 2,
    row-major) and the rest of each row in ``right``, after the untouched output ``trace``."""
    n = len(parent)
    b = ProgramBuilder("solve")
    m = b.input("M", (n, n))
    x = b.input("X", (n, width))
    matrix = [[m[i * n + j] for j in range(n)] for i in range(n)]
    factor = ltdl(b, matrix, parent)
    rows = [[ZERO if zero[i, c] else x[i * width + c] for c in range(width)]
            for i in range(n)]
    solved = ltdl_solve_rows(b, factor, parent, rows, [b.emit(1 / factor[i][i])
                                                       for i in range(n)])
    b.output("trace", 1, [sum(matrix[i][i] for i in range(n))])
    b.output("left", (n, 2), [solved[i][c] for i in range(n) for c in range(2)])
    b.output("right", (n, width - 2), [solved[i][c] for i in range(n)
                                       for c in range(2, width)])
    return b.build()


@pytest.mark.parametrize("seed", range(6))
def test_solve_equals_numpys_and_survives_the_optimiser(seed):
    rng = np.random.default_rng(seed)
    n, width = int(rng.integers(2, 9)), int(rng.integers(3, 8))
    parent = random_tree(n, rng)
    big_m = tree_matrix(parent, rng)
    zero = rng.random((n, width)) < 0.4
    x = np.where(zero, 0.0, rng.normal(size=(n, width)))
    expected = np.linalg.solve(big_m, x)
    for program in (solve_program(parent, width, zero),
                    optimize(solve_program(parent, width, zero), depth_first=True)):
        out = evaluate(program, M=big_m, X=x)
        got = np.hstack([out["left"], out["right"]])
        # both solves are backward stable: forward errors ≤ c n ε cond(M) |x| each
        # (Higham 2002, ch. 9); c n = 50 covers n ≤ 8 with room for the constants
        bound = 50 * np.finfo(float).eps * np.linalg.cond(big_m) * np.abs(expected).max()
        assert np.abs(got - expected).max() <= bound
        assert out["trace"][0] == pytest.approx(np.trace(big_m), rel=1e-15)
    assert "for symgen_k in range(" in python_source(program)
    assert any(line.startswith("for symgen_k") for line in PythonPrinter().body(program))


def test_dense_solve_counts_two_sweeps_per_column():
    """Without structural zeros: per column, a product and a sum per nonzero of L in each
    sweep and one product per 1/D_i."""
    parent, width = [-1, 0, 1, 1, 0, 4], 5
    program = solve_program(parent, width, np.zeros((6, width), bool))
    pairs = len(program.solves[0].pairs())
    without = op_counts(replace(program, solves=()))
    counts = op_counts(program)
    assert counts["mul"] - without["mul"] == (2 * pairs + len(parent)) * width
    assert counts["add"] - without["add"] == 2 * pairs * width


def test_structural_zeros_shrink_the_loops():
    """Rows that are zero outside a few columns keep the loops to those columns."""
    parent, width = [-1, 0, 1, 2], 6
    zero = np.ones((4, width), bool)
    zero[:, 1:3] = False  # every row nonzero only in columns 1 and 2
    program = solve_program(parent, width, zero)
    operations = program.solves[0].row_operations()
    assert all(span in ((1, 2), (0, 1)) for op in operations for span in op.ranges)
    dense = solve_program(parent, width, np.zeros((4, width), bool))
    assert op_counts(program)["total"] < op_counts(dense)["total"]


def test_a_solve_is_not_replayed():
    program = solve_program([-1, 0], 3, np.zeros((2, 3), bool))
    with pytest.raises(SymgenError, match="cannot be replayed"):
        replay(ProgramBuilder("outer"), program, {"M": [ZERO] * 4, "X": [ZERO] * 6})


def test_misplaced_solve_results_are_refused():
    b = ProgramBuilder("bad")
    m = b.input("M", (1, 1))
    solved = b.solved_rows([-1], [], [b.emit(1 / m[0])], [[m[0], m[0]]])
    b.output("y", 1, [solved[0][0]])  # the second placeholder is never stored
    with pytest.raises(ValueError, match="is not stored"):
        b.build()
    b = ProgramBuilder("twice")
    m = b.input("M", (1, 1))
    solved = b.solved_rows([-1], [], [b.emit(1 / m[0])], [[m[0]]])
    b.output("y", 2, [solved[0][0], solved[0][0]])
    with pytest.raises(ValueError, match="stored twice"):
        b.build()
    b = ProgramBuilder("read")
    m = b.input("M", (1, 1))
    solved = b.solved_rows([-1], [], [b.emit(1 / m[0])], [[m[0]]])
    b.output("y", 2, [solved[0][0], b.emit(solved[0][0] * m[0])])
    with pytest.raises(ValueError, match="reads a solve's result"):
        b.build()


def test_bench_counts_a_loop_statement_once_per_trip():
    from bench.peers.pinocchio_codegen import count_ops

    body = ("{ size_t k; for (k = 2; k < 12; ++k) A[3 + k] = 0.5*A[3 + k] - (t1*A[5 + k] "
            "+ t2*A[7 + k]); } x = a*b;")
    counts = count_ops(body)
    assert (counts["add"], counts["mul"]) == (10 * 2, 10 * 3 + 1)
    assert count_ops("{ size_t k; for (k = 0; k < 99; ++k) A[k] = 0.0; }")["total"] == 0


def test_bench_counts_the_generated_trig_as_one_call_each():
    from bench.peers.pinocchio_codegen import count_ops

    counts = count_ops("const double t0 = symgen_cos(q[1]); const double t1 = sin(q[2])*t0; "
                       "const float t2 = symgen_sinf(x[0]);")
    assert (counts["call"], counts["mul"]) == (3, 1)
