"""The Program IR: a kernel as a straight-line program.

A :class:`Program` has named input arrays (``q``, ``v``, ``tau``, ``params``, ...), an ordered
list of assignments ``t_k = expr(inputs, earlier temporaries)`` and named output arrays whose
elements are atoms (numbers, input elements, temporaries or their negation). Element ``i`` of
input array ``q`` is the node :class:`~symgen.ir.expr.Elem` ``(q, i)``, whose memory layout the
printer decides; temporaries are symbols ``t0, t1, ...``. :meth:`Program.statements` gives the
body as :class:`Assign` (a temporary's definition) and :class:`Store` (an output element)
statements, which a printer (:mod:`symgen.backends.c99.printer`) turns into a language.

Formulations build a program with :class:`ProgramBuilder`: :meth:`~ProgramBuilder.emit` passes
atoms through, reuses the temporary of an expression emitted before (hash-consing, up to sign)
and assigns anything else to a fresh temporary. Because every intermediate quantity is a
symbol or a number, structural zeros and ones fold away as the next expression is built
(:mod:`symgen.ir.expr`), and each expression stays small. :mod:`symgen.ir.optimize` then runs CSE
and dead-code elimination and counts operations.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from symgen.ir.expr import Elem, Expr, Sym, as_expr, extract_minus_sign, is_atom


@dataclass(frozen=True)
class ArraySpec:
    """A named input or output array: its shape (row-major) and one line of documentation."""

    name: str
    shape: tuple[int, ...]
    doc: str = ""

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class Assign:
    """Statement: define temporary ``target`` as ``value`` (assigned once, never changed)."""

    target: Sym
    value: Expr


@dataclass(frozen=True)
class Store:
    """Statement: element ``index`` (flattened row-major) of output array ``array`` is
    ``value``."""

    array: ArraySpec
    index: int
    value: Expr


Statement = Assign | Store


#: The program's former methods, now functions of the modules that own them.
_MOVED = {"op_counts": "symgen.ir.counts.op_counts(program)",
          "evaluate": "symgen.ir.printer.evaluate(program, **inputs)",
          "lines": "symgen.ir.printer.program_lines(program)",
          "python_source": "symgen.ir.printer.python_source(program)"}


@dataclass(frozen=True)
class Program:
    """A straight-line kernel: inputs, ordered assignments, outputs (flattened row-major)."""

    name: str
    inputs: tuple[ArraySpec, ...]
    assignments: tuple[tuple[Sym, Expr], ...]
    outputs: tuple[tuple[ArraySpec, tuple[Expr, ...]], ...]
    doc: str = ""

    def __getattr__(self, name: str) -> object:
        if name in _MOVED:  # the methods that became functions of their modules
            raise AttributeError(f"Program.{name} is now {_MOVED[name]} (docs/api.md)")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def output_specs(self) -> tuple[ArraySpec, ...]:
        return tuple(spec for spec, _ in self.outputs)

    def statements(self) -> Iterator[Statement]:
        """The body in order: every temporary's definition, then every output element."""
        for sym, expr in self.assignments:
            yield Assign(sym, expr)
        for spec, exprs in self.outputs:
            for i, e in enumerate(exprs):
                yield Store(spec, i, e)

    def input_arrays_read(self) -> set[str]:
        """Names of the input arrays the body reads (the others are unused arguments)."""
        used: set[str] = set()
        for st in self.statements():
            used |= {s.array for s in st.value.symbols() if isinstance(s, Elem)}
        return used


class ProgramBuilder:
    """Builds a :class:`Program` one emitted expression at a time."""

    def __init__(self, name: str, doc: str = "") -> None:
        self.name = name
        self.doc = doc
        self._inputs: list[ArraySpec] = []
        self._assignments: list[tuple[Sym, Expr]] = []
        self._memo: dict[Expr, Sym] = {}
        self._outputs: list[tuple[ArraySpec, tuple[Expr, ...]]] = []

    # ------------------------------------------------------------------ inputs / outputs
    def input(self, name: str, shape: int | Sequence[int], doc: str = "") -> list[Sym]:
        """Declare an input array; returns its elements (flattened row-major) as symbols."""
        spec = ArraySpec(name, _shape(shape), doc)
        if any(s.name == name for s in self._inputs):
            raise ValueError(f"{self.name}: input {name!r} declared twice")
        self._inputs.append(spec)
        return [Elem(name, i) for i in range(spec.size)]

    def output(
        self, name: str, shape: int | Sequence[int], values: Iterable[Expr], doc: str = ""
    ) -> None:
        """Declare an output array with its element values (flattened row-major)."""
        spec = ArraySpec(name, _shape(shape), doc)
        items = tuple(self.emit(x) for x in values)
        if len(items) != spec.size:
            raise ValueError(f"{self.name}: output {name!r} needs {spec.size} values")
        self._outputs.append((spec, items))

    # ------------------------------------------------------------------ emission
    def emit(self, expr: Expr | float) -> Expr:
        """An atom equal to ``expr``: atoms pass through, a repeated expression (or its
        negation) reuses its temporary, anything else gets a new temporary."""
        expr = as_expr(expr)
        if is_atom(expr):
            return expr
        if extract_minus_sign(expr):
            return -self._temporary(-expr)
        return self._temporary(expr)

    def _temporary(self, expr: Expr) -> Expr:
        if is_atom(expr):
            return expr
        sym = self._memo.get(expr)
        if sym is None:
            sym = Sym(f"t{len(self._assignments)}")
            self._memo[expr] = sym
            self._assignments.append((sym, expr))
        return sym

    def build(self) -> Program:
        """The program as built (no optimisation; see :func:`symgen.ir.optimize.optimize`)."""
        return Program(
            self.name,
            tuple(self._inputs),
            tuple(self._assignments),
            tuple(self._outputs),
            self.doc,
        )


def _shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)


__all__ = ["ArraySpec", "Assign", "Program", "ProgramBuilder", "Statement", "Store", "is_atom"]
