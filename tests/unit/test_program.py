"""The Program IR: expression folding, the builder's hash-consing, CSE, dead-code
elimination, op counting, printing and evaluation (the cross-process determinism of
a robot's generation is in tests/kernels/test_determinism.py)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from symgen.backends.c99.printer import CPrinter
from symgen.ir.counts import count_ops, op_counts
from symgen.ir.expr import ONE, ZERO, Num, Sym, cos, esum, extract_minus_sign, select, sin, sqrt
from symgen.ir.optimize import (
    cse,
    eliminate_dead_code,
    merge_constant_sums,
    optimize,
    schedule,
    schedule_for_registers,
)
from symgen.ir.printer import PythonPrinter, evaluate
from symgen.ir.program import ProgramBuilder

x, y, z, w = (Sym(n) for n in "xyzw")


def ops(e) -> dict:
    c = count_ops(e)
    return {k: v for k, v in c.items() if v}


# ---------------------------------------------------------------- expressions
def test_zeros_and_ones_fold_as_expressions_are_built():
    assert ZERO * x == ZERO
    assert x * 0 + y == y
    assert ONE * x == x
    assert x + 0 == x
    assert x - x == ZERO
    assert x * y / x == y
    assert cos(Num(0.0)) == ONE


def test_like_terms_merge_and_order_is_canonical():
    assert x + y == y + x
    assert x * y == y * x
    assert x + x == 2 * x
    assert (x + y) + z == x + (y + z)


def test_numbers_are_not_distributed_over_sums():
    assert ops(2.5 * (x + y)) == {"add": 1, "mul": 1}


def test_exactly_one_of_e_and_minus_e_extracts_a_sign():
    for e in (x - y, y - x, -2 * x * y, x + y, 3 * x - 4 * z + 1.5):
        assert extract_minus_sign(e) != extract_minus_sign(-e)


def test_op_count_conventions():
    assert ops(x + y + z) == {"add": 2}
    assert ops(x - y) == {"add": 1}
    assert ops(-x * y) == {"mul": 1}
    assert ops(2.0 * x * y) == {"mul": 2}
    assert ops(x * y / (z * w)) == {"mul": 2, "div": 1}
    assert ops(1 / x) == {"div": 1}
    assert ops(x**3) == {"mul": 2}
    assert ops(sin(x) * cos(x)) == {"mul": 1, "trig": 2}
    assert ops(sqrt(x + 1)) == {"add": 1, "sqrt": 1}
    assert ops(select(x < 1e-8, y, z / x)) == {"other": 1, "div": 1}


# ---------------------------------------------------------------- builder
def test_emit_passes_atoms_and_shares_repeated_expressions():
    b = ProgramBuilder("k")
    (q0, q1) = b.input("q", 2)
    assert b.emit(q0) is q0
    assert b.emit(-q0) == -q0
    assert b.emit(Num(2.5)) == Num(2.5)
    t = b.emit(q0 * q1)
    assert b.emit(q1 * q0) is t
    d = b.emit(q0 - q1)
    assert b.emit(q1 - q0) == -d  # shared up to sign
    assert len(b.build().assignments) == 2


def test_output_elements_are_atoms():
    b = ProgramBuilder("k")
    q = b.input("q", 2)
    b.output("out", 2, [q[0] * q[1] + 1, q[0]])
    program = b.build()
    _, values = program.outputs[0]
    assert all(isinstance(v, Sym | Num) for v in values)


def random_program(seed: int, size: int = 60):
    """A program of random sums and products over 3 inputs, with repeated subterms."""
    rng = np.random.default_rng(seed)
    b = ProgramBuilder("random")
    pool = list(b.input("q", 3))
    for _ in range(size):
        a, c, d = (pool[int(i)] for i in rng.integers(0, len(pool), 3))
        kind = rng.integers(0, 4)
        e = [a * c + d, a * c - 2.0 * d, 0.5 * a * c * d, (a - d) * c][kind]
        pool.append(b.emit(e))
    b.output("out", 4, pool[-4:])
    return b.build()


@pytest.mark.parametrize("seed", range(5))
def test_cse_and_dce_preserve_values_and_never_add_operations(seed):
    raw = random_program(seed)
    opt = optimize(raw)
    q = np.random.default_rng(seed).uniform(0.5, 1.5, 3)
    np.testing.assert_allclose(evaluate(opt, q=q)["out"], evaluate(raw, q=q)["out"], rtol=1e-12)
    assert op_counts(opt)["total"] <= op_counts(raw)["total"]


def assert_reordered(raw, out, seed: int) -> set:
    """``out`` holds ``raw``'s assignments in a topological order (every operand defined
    before its use) and computes the same values bit for bit; its temporaries."""
    assert sorted(map(str, out.assignments)) == sorted(map(str, raw.assignments))
    temporaries = {sym for sym, _ in out.assignments}
    defined: set = set()
    for sym, expr in out.assignments:
        assert all(s in defined for s in expr.symbols() & temporaries), sym
        defined.add(sym)
    q = np.random.default_rng(seed).uniform(0.5, 1.5, 3)
    assert list(evaluate(out, q=q)["out"]) == list(evaluate(raw, q=q)["out"])
    return temporaries


@pytest.mark.parametrize("seed", range(5))
def test_schedule_is_a_depth_first_order_of_the_same_assignments(seed):
    """Same assignments, every operand defined before its use, the same values bit for
    bit, and post-order: the first output's temporary comes right after one of its
    operands."""
    raw = eliminate_dead_code(random_program(seed, size=120))
    out = schedule(raw)
    temporaries = assert_reordered(raw, out, seed)
    # post-order: the first output's temporary is preceded directly by its newest operand
    order = [sym for sym, _ in out.assignments]
    first = out.outputs[0][1][0]
    if first in order:
        i = order.index(first)
        operands = dict(out.assignments)[first].symbols() & temporaries
        if operands:
            assert order[i - 1] in operands


def test_schedule_computes_each_output_just_before_it_is_needed():
    """Two independent chains read by two outputs: scheduled chain by chain, in output
    order, though the builder interleaved them."""
    b = ProgramBuilder("k")
    q = b.input("q", 2)
    x, y = q[0], q[1]
    y_chain = set()
    for _ in range(3):  # interleaved: x1, y1, x2, y2, x3, y3
        x = b.emit(x * x + 1.0)
        y = b.emit(y * y + 2.0)
        y_chain.add(y)
    b.output("out", 2, [y, x])
    order = [sym for sym, _ in schedule(b.build()).assignments]
    assert [sym in y_chain for sym in order] == [True] * 3 + [False] * 3


def max_live(program) -> int:
    """The most temporaries live at once in ``program``'s order (defined, a read ahead)."""
    temporaries = {sym for sym, _ in program.assignments}
    last = {}
    for i, (_, expr) in enumerate(program.assignments):
        for s in expr.symbols() & temporaries:
            last[s] = i
    for e in program.final_expressions():
        for s in e.symbols() & temporaries:
            last[s] = len(program.assignments)
    live = worst = 0
    ends = Counter(last.values())
    for i, (sym, _) in enumerate(program.assignments):
        live += (sym in last) - ends[i]
        worst = max(worst, live)
    return worst


@pytest.mark.parametrize("seed", range(4))
def test_register_order_is_exact_and_keeps_fewer_values_live(seed):
    """The same assignments in a topological order, the same values bit for bit, and on a
    program built breadth-first (every chain advanced a step at a time) fewer values live
    than the builder's order."""
    raw = eliminate_dead_code(random_program(seed, size=120))
    assert_reordered(raw, schedule_for_registers(raw), seed)
    b = ProgramBuilder("k")
    q = b.input("q", 6)
    chains = [q[i] for i in range(6)]
    for step in range(4):  # breadth-first: six values live throughout
        chains = [b.emit(c * c + float(step)) for c in chains]
    ends = [b.emit(chains[i] * chains[i + 1] + 1.0) for i in range(0, 6, 2)]
    b.output("out", 1, [ends[0] + ends[1] * ends[2]])
    built = b.build()
    assert max_live(schedule_for_registers(built)) < max_live(built)


def test_cse_shares_a_product_inside_different_sums():
    b = ProgramBuilder("k")
    q = b.input("q", 4)
    b.output("out", 2, [q[0] * q[1] + q[2], 3.0 * q[0] * q[1] - q[3]])
    raw = b.build()
    assert op_counts(raw)["mul"] == 3
    shared = cse(raw)
    assert op_counts(shared)["mul"] == 2


def test_a_sum_read_once_gives_its_constant_to_the_sum_reading_it():
    """t = q0·q1 + 1.5 read once as ±t in a sum with a constant: the constants merge (one
    addition fewer, the same value to rounding); read twice, or inside a product, or by a
    sum without a constant (nothing to save), it stays."""
    b = ProgramBuilder("k")
    q = b.input("q", 3)
    once = [b.emit(q[0] * q[1] + 1.5), b.emit(q[1] * q[2] - 0.25)]
    twice = b.emit(q[0] * q[2] + 2.0)
    inside = b.emit(q[2] * q[2] + 3.0)
    plain = b.emit(q[0] + 4.0)
    b.output("out", 5, [once[0] + 2.0, 0.5 - once[1], twice + 1.0 + twice * q[0],
                        inside * q[1] + 1.0, plain + q[1]])
    raw = eliminate_dead_code(b.build())
    merged = eliminate_dead_code(merge_constant_sums(raw))
    assert op_counts(raw)["add"] - op_counts(merged)["add"] == 2
    assert len(raw.assignments) - len(merged.assignments) == 2
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = rng.normal(size=3)
        expected = evaluate(raw, q=q)["out"]
        # each side rounds each of its ≤ 3 additions once: within 3ε of the sum of the
        # magnitudes of the terms (products of q, constants ≤ 4.5)
        bound = 6 * np.finfo(float).eps * (3 * np.max(np.abs(q)) ** 2 + 4.5)
        assert np.max(np.abs(evaluate(merged, q=q)["out"] - expected)) <= bound


def test_angles_print_in_pairs_unless_the_order_is_depth_first():
    """Two angles' sines and cosines print as one symgen_sincos2 before the first read of
    either (both are inputs: at the top); a program ordered depth-first keeps its scalar
    calls where they are (pairs would move them away from their uses)."""
    b = ProgramBuilder("k")
    q = b.input("q", 3)
    s0, c0, s1, c1 = (b.emit(f(x)) for x in (q[0], q[1]) for f in (sin, cos))
    b.output("out", 2, [s0 * q[2] + c0, c1 * s1 + q[2]])
    program = optimize(b.build())
    lines = CPrinter().body(program)
    assert lines[1].startswith("symgen_sincos2(q[0], q[1], &") and not any(
        "symgen_sin(" in line or "symgen_cos(" in line for line in lines)
    scheduled = CPrinter().body(schedule(program))
    assert not any("symgen_sincos2" in line for line in scheduled)
    assert sum("symgen_sin(" in line or "symgen_cos(" in line for line in scheduled) == 4


def test_dead_code_is_removed():
    b = ProgramBuilder("k")
    q = b.input("q", 2)
    b.emit(q[0] * q[1] * 7.0)  # unused
    b.output("out", 1, [q[0] + q[1]])
    assert len(eliminate_dead_code(b.build()).assignments) == 1


def test_nothing_is_hoisted_out_of_a_selected_branch():
    """1/θ² only in the branch taken for θ² ≥ tiny: evaluating at θ = 0 must not divide."""
    b = ProgramBuilder("k")
    (theta,) = b.input("theta", 1)
    sq = b.emit(theta * theta)
    c1 = b.emit(select(sq < 1e-8, 0.5 - sq / 24, (1 - cos(theta)) / sq))
    c2 = b.emit(select(sq < 1e-8, 1.0 / 6 - sq / 120, (theta - sin(theta)) / (sq * theta)))
    b.output("out", 2, [c1, c2])
    program = optimize(b.build())
    np.testing.assert_allclose(evaluate(program, theta=[0.0])["out"], [0.5, 1 / 6])
    t = 0.3
    expected = [(1 - math.cos(t)) / t**2, (t - math.sin(t)) / t**3]
    np.testing.assert_allclose(evaluate(program, theta=[t])["out"], expected, rtol=1e-14)


def test_printers_write_valid_expressions():
    e = 2.5 * x * y / z - sin(w) + sqrt(x) - 1.0
    py = PythonPrinter()(e)
    value = eval(py, {"math": math, "x": 1.3, "y": 0.7, "z": 2.0, "w": 0.4})
    assert value == pytest.approx(2.5 * 1.3 * 0.7 / 2.0 - math.sin(0.4) + math.sqrt(1.3) - 1)
    printer = CPrinter("float")
    c = printer(e)
    assert "symgen_sinf(w)" in c and "sqrtf(x)" in c and "2.5f" in c
    assert "float symgen_sinf(float x)" in printer.helpers()
    assert CPrinter().helpers() == ""  # nothing printed, nothing to define


def test_evaluate_checks_inputs():
    program = random_program(0)
    with pytest.raises(TypeError, match="missing"):
        evaluate(program)
    with pytest.raises(ValueError, match="3 elements"):
        evaluate(program, q=[1.0, 2.0])


def test_sum_helper():
    assert esum([x, y, 1]) == x + y + 1
    assert esum([]) == ZERO


@pytest.mark.parametrize("name, where", [("op_counts", "symgen.ir.counts.op_counts"),
                                         ("evaluate", "symgen.ir.printer.evaluate")])
def test_a_former_method_names_its_new_place(name, where):
    """Program's methods that became functions of their modules say where they went."""
    b = ProgramBuilder("p")
    b.output("y", 1, [b.input("x", 1)[0]])
    with pytest.raises(AttributeError, match=rf"^Program\.{name} is now {where}"):
        getattr(b.build(), name)
    with pytest.raises(AttributeError, match="has no attribute 'missing'"):
        b.build().missing  # noqa: B018
