"""The Program IR: a kernel as a straight-line program.

A :class:`Program` has named input arrays (``q``, ``v``, ``tau``, ``params``, ...), an ordered
list of assignments ``t_k = expr(inputs, earlier temporaries)`` and named output arrays whose
elements are atoms (numbers, input elements, temporaries or their negation). Element ``i`` of
input array ``q`` is the node :class:`~symgen.ir.expr.Elem` ``(q, i)``, whose memory layout the
printer decides; temporaries are symbols ``t0, t1, ...``. :meth:`Program.statements` gives the
body as :class:`Assign` (a temporary's definition) and :class:`Store` (an output element)
statements, which a printer (:mod:`symgen.backends.c99.printer`) turns into a language. After
the stores, a program may apply :class:`~symgen.ir.solve.Solve` statements to its outputs
(:mod:`symgen.ir.solve`): M⁻¹ applied in place to rows of output elements, which a printer
spells as loops over the columns.

Formulations build a program with :class:`ProgramBuilder`: :meth:`~ProgramBuilder.emit` passes
atoms through, reuses the temporary of an expression emitted before (hash-consing, up to sign)
and assigns anything else to a fresh temporary. Because every intermediate quantity is a
symbol or a number, structural zeros and ones fold away as the next expression is built
(:mod:`symgen.ir.expr`), and each expression stays small. :mod:`symgen.ir.optimize` then runs CSE
and dead-code elimination and counts operations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from symgen.ir.expr import Elem, Expr, Num, Sym, as_expr, extract_minus_sign, is_atom
from symgen.ir.solve import RowOperation, Segment, Solve


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


Statement = Assign | Store | Solve


#: The program's former methods, now functions of the modules that own them.
_MOVED = {"op_counts": "symgen.ir.counts.op_counts(program)",
          "evaluate": "symgen.ir.printer.evaluate(program, **inputs)",
          "lines": "symgen.ir.printer.program_lines(program)",
          "python_source": "symgen.ir.printer.python_source(program)"}


@dataclass(frozen=True)
class Program:
    """A straight-line kernel: inputs, ordered assignments, outputs (flattened row-major),
    and the :class:`Solve` statements applied to the stored outputs, in order."""

    name: str
    inputs: tuple[ArraySpec, ...]
    assignments: tuple[tuple[Sym, Expr], ...]
    outputs: tuple[tuple[ArraySpec, tuple[Expr, ...]], ...]
    doc: str = ""
    solves: tuple[Solve, ...] = ()
    #: Whether the assignments are ordered depth-first from the outputs, each just before
    #: its first use (:func:`symgen.ir.optimize.schedule`): a backend keeps them there.
    depth_first: bool = False

    def __getattr__(self, name: str) -> object:
        if name in _MOVED:  # the methods that became functions of their modules
            raise AttributeError(f"Program.{name} is now {_MOVED[name]} (docs/api.md)")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def output_specs(self) -> tuple[ArraySpec, ...]:
        return tuple(spec for spec, _ in self.outputs)

    def statements(self) -> Iterator[Statement]:
        """The body in order: every temporary's definition, every output element, the
        solves."""
        for sym, expr in self.assignments:
            yield Assign(sym, expr)
        for spec, exprs in self.outputs:
            for i, e in enumerate(exprs):
                yield Store(spec, i, e)
        yield from self.solves

    def final_expressions(self) -> Iterator[Expr]:
        """The expressions read after the assignments: output elements, then the solves'
        coefficients."""
        for _, exprs in self.outputs:
            yield from exprs
        for solve in self.solves:
            yield from solve.expressions()

    def with_final(self, change: Callable[[Expr], Expr]) -> Program:
        """The program with ``change`` applied to every expression of
        :meth:`final_expressions`."""
        outputs = tuple((spec, tuple(change(e) for e in exprs)) for spec, exprs in self.outputs)
        return replace(self, outputs=outputs,
                       solves=tuple(s.replace_expressions(change) for s in self.solves))

    def input_arrays_read(self) -> set[str]:
        """Names of the input arrays the body reads (the others are unused arguments)."""
        used: set[str] = set()
        for _, expr in self.assignments:
            used |= {s.array for s in expr.symbols() if isinstance(s, Elem)}
        for expr in self.final_expressions():
            used |= {s.array for s in expr.symbols() if isinstance(s, Elem)}
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
        self._solves: list[_PendingSolve] = []

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

    def solved_rows(self, parent: Sequence[int], lower: Sequence[Expr],
                    inverse_d: Sequence[Expr], rows: Sequence[Sequence[Expr]]
                    ) -> list[list[Expr]]:
        """Placeholders for 𝓜⁻¹ X, X = ``rows`` (n rows of equal length), computed by a
        :class:`Solve` statement (arguments as its fields) on the output elements where the
        placeholders are stored. Each placeholder must become exactly one output element, as
        it is (the rows of a segment consecutive in one output), and nothing else may read
        it."""
        solve = _PendingSolve(len(self._solves), tuple(parent),
                              tuple(self.emit(x) for x in lower),
                              tuple(self.emit(x) for x in inverse_d),
                              [[self.emit(x) for x in row] for row in rows])
        self._solves.append(solve)
        return [[solve.placeholder(i, c) for c in range(len(row))]
                for i, row in enumerate(solve.rows)]

    def build(self) -> Program:
        """The program as built (no optimisation; see :func:`symgen.ir.optimize.optimize`)."""
        outputs, solves = tuple(self._outputs), ()
        if self._solves:
            outputs, solves = _place_solves(self.name, outputs, self._solves)
            placeholders = {s for p in self._solves for s in p.placeholders()}
            for sym, expr in self._assignments:
                if expr.symbols() & placeholders:
                    raise ValueError(f"{self.name}: {sym.name} reads a solve's result")
        return Program(self.name, tuple(self._inputs), tuple(self._assignments), outputs,
                       self.doc, solves)


@dataclass
class _PendingSolve:
    """A :class:`Solve` whose rows are not yet placed in the outputs."""

    number: int
    parent: tuple[int, ...]
    lower: tuple[Expr, ...]
    inverse_d: tuple[Expr, ...]
    rows: list[list[Expr]]

    def placeholder(self, row: int, column: int) -> Sym:
        return Sym(f"solved{self.number}[{row}][{column}]")

    def placeholders(self) -> Iterator[Sym]:
        for i, row in enumerate(self.rows):
            for c in range(len(row)):
                yield self.placeholder(i, c)


def _place_solves(name: str, outputs: tuple[tuple[ArraySpec, tuple[Expr, ...]], ...],
                  pending: Sequence[_PendingSolve]
                  ) -> tuple[tuple[tuple[ArraySpec, tuple[Expr, ...]], ...], tuple[Solve, ...]]:
    """The outputs with every placeholder replaced by its value before the solve, and the
    solves with the segments where the placeholders were stored."""
    values: dict[Expr, Expr] = {p.placeholder(i, c): x for p in pending
                                for i, row in enumerate(p.rows) for c, x in enumerate(row)}
    where: dict[Expr, tuple[ArraySpec, int]] = {}
    for spec, exprs in outputs:
        for k, e in enumerate(exprs):
            if e in values:
                if e in where:
                    raise ValueError(f"{name}: {e} is stored twice")
                where[e] = (spec, k)
    placed = tuple((spec, tuple(values.get(e, e) for e in exprs)) for spec, exprs in outputs)
    solves = []
    for p in pending:
        try:
            located = [[where[p.placeholder(i, c)] for c in range(len(row))]
                       for i, row in enumerate(p.rows)]
        except KeyError as missing:
            raise ValueError(f"{name}: {missing.args[0]} is not stored") from None
        solves.append(Solve(p.parent, p.lower, p.inverse_d, _segments(name, located, p.rows)))
    return placed, tuple(solves)


def _segments(name: str, located: list[list[tuple[ArraySpec, int]]],
              values: list[list[Expr]]) -> tuple[Segment, ...]:
    """The segments of rows of (output, element) positions: runs of consecutive elements of
    one output, the same runs (output, width) in every row; each row's range of columns
    from its structural nonzeros ``values``."""

    def runs(row: list[tuple[ArraySpec, int]]) -> list[tuple[ArraySpec, int, int]]:
        out: list[tuple[ArraySpec, int, int]] = []
        for spec, k in row:
            if out and out[-1][0] == spec and out[-1][1] + out[-1][2] == k:
                out[-1] = (spec, out[-1][1], out[-1][2] + 1)
            else:
                out.append((spec, k, 1))
        return out

    layout = [runs(row) for row in located]
    shape = [(spec, width) for spec, _, width in layout[0]]
    if any([(spec, width) for spec, _, width in row] != shape for row in layout):
        raise ValueError(f"{name}: a solve's rows are not stored alike")
    segments = []
    first = 0
    for s, (spec, width) in enumerate(shape):
        ranges = []
        for row in values:
            nonzero = [c for c in range(width)
                       if not (isinstance(row[first + c], Num) and row[first + c].value == 0.0)]
            ranges.append((nonzero[0], nonzero[-1] + 1) if nonzero else (0, 0))
        segments.append(Segment(spec.name, tuple(row[s][1] for row in layout), width,
                                tuple(ranges)))
        first += width
    return tuple(segments)


def _shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)


__all__ = ["ArraySpec", "Assign", "Program", "ProgramBuilder", "RowOperation", "Segment",
           "Solve", "Statement", "Store", "is_atom"]
