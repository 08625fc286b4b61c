"""Printing :mod:`symgen.ir.expr` expressions and :mod:`symgen.ir.program` statements as
source text, and evaluating a program in Python.

A printer decides the layout of array elements (:meth:`Printer.element`: ``q[3]`` here; a
vectorised printer loads a lane instead) and the spelling of each statement
(:meth:`Printer.statement`); the backends subclass it (:mod:`symgen.backends.c99.printer`).
Sums print as ``a - 2.5*b + c``, products as ``a*b/(c*d)``, integer powers as repeated
products, functions as calls (``math.sin`` in Python) and a :class:`~symgen.ir.expr.Select`
as a conditional expression; Python number literals round-trip exactly (``repr``).

:func:`evaluate` runs a program as Python (:func:`python_source`): the evaluator that tests
the symbolic layer before any C exists.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable

import numpy as np

from symgen.ir.expr import Add, Call, Elem, Expr, Less, Mul, Num, Select, Sym, esum
from symgen.ir.program import Assign, Program, Statement, Store
from symgen.ir.solve import Segment, Solve


class Printer:
    """Expression printer; subclasses pick the language details."""

    def number(self, value: float) -> str:
        return repr(value)

    def function(self, name: str) -> str:
        return name

    def select(self, cond: str, then: str, other: str) -> str:
        raise NotImplementedError

    #: Spellings of temporaries other than their names (a part's reads of the work array).
    names: dict[Sym, str] | None = None

    def __call__(self, e: Expr) -> str:
        return self.expr(e)

    def element(self, array: str, index: int) -> str:
        """Element ``index`` (flattened row-major) of array ``array``."""
        return f"{array}[{index}]"

    def define(self, target: str, value: str) -> str:
        """The definition of a temporary."""
        return f"{target} = {value}"

    def store(self, target: str, value: str) -> str:
        """The store of an output element."""
        return f"{target} = {value}"

    def statement(self, st: Statement) -> str:
        """One statement of a program body."""
        if isinstance(st, Assign):
            return self.define(self.expr(st.target), self.expr(st.value))
        if isinstance(st, Store):
            return self.store(self.element(st.array.name, st.index), self.expr(st.value))
        if isinstance(st, Solve):
            return "\n".join(self.solve(st))
        raise TypeError(f"cannot print {type(st).__name__}")

    def body(self, program: Program) -> list[str]:
        """The statements of ``program``'s body, in order (a solve: its loops)."""
        return [line for st in program.statements() for line in self.statement(st).split("\n")]

    #: The column index of a solve's loops (block scope; no kernel names an array so).
    COLUMN = "symgen_k"

    def loop(self, first: int, end: int, statement: str) -> str:
        """``statement`` for :data:`COLUMN` = ``first`` … ``end`` − 1."""
        return f"for {self.COLUMN} in range({first}, {end}): {statement}"

    def solve(self, st: Solve) -> list[str]:
        """The row operations of :class:`~symgen.ir.solve.Solve`, each segment's columns
        one loop."""
        lines = []
        for op in st.row_operations():
            for segment, (first, end) in zip(st.segments, op.ranges, strict=True):
                if first == end:
                    continue

                def at(i: int, segment: Segment = segment) -> Sym:  # (row i, column COLUMN)
                    return Sym(f"{segment.array}[{segment.starts[i]} + {self.COLUMN}]")

                target = at(op.row)
                value = (target if op.scale is None else op.scale * target) - esum(
                    [factor * at(i) for i, factor in op.terms])
                lines.append(self.loop(first, end, self.store(self.expr(target),
                                                              self.expr(value))))
        return lines

    def expr(self, e: Expr) -> str:
        if isinstance(e, Num):
            return self.number(e.value)
        if isinstance(e, Elem):
            return self.element(e.array, e.index)
        if isinstance(e, Sym):
            return self.names.get(e, e.name) if self.names else e.name
        if isinstance(e, Add):
            return self._add(e)
        if isinstance(e, Mul):
            return self._mul(e)
        if isinstance(e, Call):
            return f"{self.function(e.fn)}({', '.join(self.expr(a) for a in e.args)})"
        if isinstance(e, Less):
            return f"{self._factor(e.lhs)} < {self._factor(e.rhs)}"
        if isinstance(e, Select):
            return self.select(self.expr(e.cond), self.expr(e.then), self.expr(e.other))
        raise TypeError(f"cannot print {type(e).__name__}")

    def _factor(self, e: Expr) -> str:
        """An operand of a product or comparison: sums, conditionals and negative values
        get parentheses."""
        text = self.expr(e)
        negative = (isinstance(e, Mul) and e.coeff < 0) or (isinstance(e, Num) and e.value < 0)
        if isinstance(e, Add | Select | Less) or negative:
            return f"({text})"
        return text

    def _add(self, e: Add) -> str:
        parts: list[str] = []
        for base, c in e.terms:
            body = self._factor(base)
            if abs(c) != 1.0:
                body = f"{self.number(abs(c))}*{body}"
            sign = "-" if c < 0 else "+"
            parts.append(f"{sign} {body}")
        if e.const != 0.0:
            parts.append(f"{'-' if e.const < 0 else '+'} {self.number(abs(e.const))}")
        text = " ".join(parts)
        if text.startswith("+ "):
            return text[2:]
        return "-" + text[2:]

    def _mul(self, e: Mul) -> str:
        num: list[str] = []
        den: list[str] = []
        for base, exp in e.factors:
            text = self._factor(base)
            (num if exp > 0 else den).extend([text] * abs(exp))
        coeff = e.coeff
        if abs(coeff) != 1.0 or not num:
            num.insert(0, self.number(abs(coeff)))
        text = "*".join(num)
        if den:
            text += "/" + (den[0] if len(den) == 1 else "(" + "*".join(den) + ")")
        return ("-" if coeff < 0 else "") + text


class PythonPrinter(Printer):
    def function(self, name: str) -> str:
        return f"math.{name}"

    def select(self, cond: str, then: str, other: str) -> str:
        return f"({then} if {cond} else {other})"


def program_lines(program: Program) -> list[str]:
    """The program as text, one assignment or output element per line."""
    printer = PythonPrinter()
    out = [f"# {program.name}({', '.join(s.name for s in program.inputs)})"]
    return out + [printer.statement(st) for st in program.statements()]


def python_source(program: Program) -> str:
    """A Python function ``kernel(<inputs>)`` that evaluates the program with ``math``."""
    printer = PythonPrinter()
    args = ", ".join(spec.name for spec in program.inputs)
    body = [f"def kernel({args}):"]
    body += [f"    {spec.name} = [0.0] * {spec.size}" for spec in program.output_specs]
    body += [f"    {line}" for st in program.statements()
             for line in printer.statement(st).split("\n")]
    names = ", ".join(f"{spec.name!r}: {spec.name}" for spec in program.output_specs)
    body.append(f"    return {{{names}}}")
    return "\n".join(body) + "\n"


#: The compiled Python function of each program evaluated so far (dropped with the program).
_KERNELS: weakref.WeakValueDictionary[int, Program] = weakref.WeakValueDictionary()
_FUNCTIONS: dict[int, Callable[..., dict[str, list[float]]]] = {}


def _python_kernel(program: Program) -> Callable[..., dict[str, list[float]]]:
    key = id(program)
    if _KERNELS.get(key) is not program:
        namespace: dict[str, object] = {"math": math}
        exec(compile(python_source(program), f"<program {program.name}>", "exec"), namespace)
        _KERNELS[key] = program
        _FUNCTIONS[key] = namespace["kernel"]  # type: ignore[assignment]
        weakref.finalize(program, _FUNCTIONS.pop, key, None)
    return _FUNCTIONS[key]


def evaluate(program: Program, **inputs: object) -> dict[str, np.ndarray]:
    """Evaluate ``program`` in Python. Inputs are array-likes of the declared sizes (any
    shape with that many elements); outputs come back as float arrays of their declared
    shapes."""
    missing = [s.name for s in program.inputs if s.name not in inputs]
    unknown = sorted(set(inputs) - {s.name for s in program.inputs})
    if missing or unknown:
        raise TypeError(
            f"{program.name}: expected inputs {[s.name for s in program.inputs]}, "
            f"missing {missing}, unknown {unknown}"
        )
    args = []
    for spec in program.inputs:
        flat = np.asarray(inputs[spec.name], dtype=float).reshape(-1)
        if flat.size != spec.size:
            raise ValueError(
                f"{program.name}: input {spec.name} must have {spec.size} elements "
                f"(shape {spec.shape}), got {flat.size}"
            )
        args.append([float(x) for x in flat])
    raw = _python_kernel(program)(*args)
    return {
        spec.name: np.array(raw[spec.name], dtype=float).reshape(spec.shape)
        for spec in program.output_specs
    }


__all__ = ["Printer", "PythonPrinter", "evaluate", "program_lines", "python_source"]
