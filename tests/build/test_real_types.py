"""The real types of generated C (symgen.backends.real): one table row per type, looked up by
name, and the printer's spellings of a split kernel's parts."""

from __future__ import annotations

import numpy as np
import pytest

from symgen.backends.c99.printer import CPrinter
from symgen.backends.real import REAL_TYPES, REALS, real_type
from symgen.errors import SymgenError
from symgen.ir.program import ArraySpec


def test_table_rows_name_their_types():
    assert REALS == ("double", "float")
    for name, row in REAL_TYPES.items():
        assert real_type(name) is row and real_type(row) is row
        assert np.dtype(row.dtype).itemsize == row.size
        assert row.wider is None or real_type(row.wider).size > row.size


def test_unknown_real_type_is_one_line():
    with pytest.raises(SymgenError, match=r"^real must be one of double, float, got 'half'$"):
        real_type("half")


def test_printer_spells_the_real_type():
    single, double = CPrinter("float"), CPrinter("double", "m_real")
    assert (single.number(0.1), single.function("sqrt")) == ("0.1f", "sqrtf")
    assert single.function("sin") == "symgen_sinf"  # the source's own (c99/trig.py)
    assert (double.number(0.1), double.function("sqrt")) == ("0.1", "sqrt")
    assert double.typedef() == "typedef double m_real;"


def test_printer_spells_the_parts_of_a_split_kernel():
    p = CPrinter("double", "m_real")
    q, out = ArraySpec("q", (2,)), ArraySpec("out", (3,))
    assert p.part_prototype("m_f_part0", (q,), (out,)) == (
        "void m_f_part0(const m_real q[2], m_real out[3], m_real *symgen_w)")
    assert p.work_array(5) == "m_real symgen_w[5];"
    assert p.call("m_f_part0", ["q", "out", "symgen_w"]) == "m_f_part0(q, out, symgen_w);"
    assert p.discard("q") == "(void)q;"
