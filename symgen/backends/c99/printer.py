"""The C99 printer: :mod:`symgen.ir.expr` expressions and :mod:`symgen.ir.program` statements
as C source (the expression printing itself is :class:`symgen.ir.printer.Printer`).

A printer decides the layout of array elements (:meth:`Printer.element`: ``q[3]`` here; a
vectorised printer loads a lane instead) and the spelling of each statement
(:meth:`Printer.statement`) and, for C, of declarations and prototypes.

Sums print as ``a - 2.5*b + c``, products as ``a*b/(c*d)``, integer powers as repeated
products, ``sin``/``cos`` as calls of the source's own ``symgen_sin``/``symgen_cos``
(:mod:`symgen.backends.c99.trig`; ``math.sin`` in Python), ``sqrt`` as ``sqrt`` (``sqrtf`` with
``float``), and a :class:`~symgen.ir.expr.Select` as a conditional expression. Number literals
round-trip exactly (``repr`` of the double; a C float literal is the shortest decimal of the
value rounded to float, with an ``f`` suffix). The C printer never prints a non-finite number
or a float literal outside float's range: it raises :class:`~symgen.model.SymgenError`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from symgen.backends.c99 import trig
from symgen.backends.real import RealType, real_type
from symgen.errors import SymgenError
from symgen.ir.expr import Expr, Num, Sym
from symgen.ir.printer import Printer
from symgen.ir.program import ArraySpec, Assign, Program, Store
from symgen.ir.splitting import Part

#: An output with at least this many elements equal to the constant +0 is cleared by one loop
#: before its other elements are stored (C printer). Thousands of constant stores (the dense
#: natural mass matrix and constraint Jacobian of a long chain) cost gcc -O2 about 2 ms each
#: to compile (12 s for an 82 x 82 matrix), the loop nothing; below this count the element
#: stores stay (no element is written twice in a small, hot kernel).
ZERO_FILL_MIN = 256


def _positive_zero(e: Expr) -> bool:
    return isinstance(e, Num) and e.value == 0.0 and math.copysign(1.0, e.value) > 0



class CPrinter(Printer):
    """C99 for the real type ``real`` (a name or row of :mod:`symgen.backends.real`; with
    ``float``: float literals, ``sqrtf`` and ``symgen_sinf``). ``type_name`` spells
    the real type in declarations (a typedef such as ``panda_real``)."""

    def __init__(self, real: str | RealType = "double", type_name: str | None = None) -> None:
        self.real_type = real_type(real)
        self.real = self.real_type.name
        self.type_name = type_name or self.real
        #: Whether a statement printed so far calls the generated sine or cosine.
        self.uses_trig = False

    def typedef(self) -> str:
        """``typedef double panda_real;``: the declaration of :attr:`type_name`."""
        return f"typedef {self.real} {self.type_name};"

    def define(self, target: str, value: str) -> str:
        return f"const {self.type_name} {target} = {value};"

    def store(self, target: str, value: str) -> str:
        return f"{target} = {value};"

    def zero_fill(self, spec: ArraySpec) -> str:
        """One statement setting every element of output ``spec`` to 0."""
        return self.loop(0, spec.size, f"{spec.name}[{self.COLUMN}] = {self.number(0.0)};")

    def body(self, program: Program) -> list[str]:
        """The body; an output with :data:`ZERO_FILL_MIN` or more elements equal to +0 is
        cleared by :meth:`zero_fill` and only its other elements are stored."""
        lines = [line for group in self.assignments(program.assignments,
                                                    not program.depth_first)
                 for line in group]
        return lines + self._stores(program) + self._solves(program)

    #: Whether sines and cosines print two angles at a time (:func:`trig.angle_pairs`); a
    #: vector printer's lanes hold several states' angles instead.
    pairs_angles = True

    def assignments(self, assignments: Sequence[tuple[Sym, Expr]], pairs: bool = True
                    ) -> list[list[str]]:
        """The lines of each assignment: its definition, or, with :attr:`pairs_angles` and
        ``pairs``, at the first of two paired angles their ``symgen_sincos2`` and none at
        their sines' and cosines' own assignments. A program ordered depth-first
        (:attr:`~symgen.ir.program.Program.depth_first`) is printed without pairs: they
        would compute an angle's sine and cosine long before its first use, which that
        order avoids (Talos' inverse dynamics 9 % and the Panda's ∂ID 4 % slower with pairs,
        every other kernel of the speed benchmark 8-25 % faster)."""
        found = trig.angle_pairs(assignments) if self.pairs_angles and pairs else []
        paired = {sym for pair in found for angle in pair.angles
                  for sym in (angle.sin, angle.cos)}
        groups = []
        for i, (sym, e) in enumerate(assignments):
            lines = [line for pair in found if pair.position == i
                     for line in self.sincos2(*pair.angles)]
            if sym not in paired:
                lines.append(self.statement(Assign(sym, e)))
            groups.append(lines)
        return groups

    def sincos2(self, first: trig.Angle, second: trig.Angle) -> list[str]:
        """The declaration of two angles' sines and cosines and the ``symgen_sincos2`` call
        assigning them (a sine or cosine the program does not read goes to a variable of its
        own)."""
        self.uses_trig = True
        names = [(angle.sin or angle.cos).name + suffix if sym is None else sym.name
                 for angle in (first, second)
                 for sym, suffix in ((angle.sin, "_sin"), (angle.cos, "_cos"))]
        call = trig.pair_function_name(self.real_type)
        arguments = [self.expr(first.argument), self.expr(second.argument)]
        return [f"{self.type_name} {', '.join(names)};",
                self.call(call, [*arguments, *(f"&{name}" for name in names)])]

    #: The work array of a program printed in parts (block scope; no kernel names an array
    #: so).
    WORK_ARRAY = "symgen_w"

    def part_bodies(self, program: Program, parts: Sequence[Part]) -> list[list[str]]:
        """The statements of each part of ``program`` (:mod:`symgen.ir.splitting`): its
        assignments, each exported temporary also written to the work array, a read of an
        earlier part's temporary taken from it; the last part stores the outputs."""
        bodies = []
        for k, part in enumerate(parts):
            self.names = {s: self.element(self.WORK_ARRAY, i) for s, i in part.reads.items()}
            try:
                lines = []
                assignments = program.assignments[part.start:part.stop]
                groups = self.assignments(assignments, not program.depth_first)
                for (sym, _), group in zip(assignments, groups, strict=True):
                    lines += group
                    if sym in part.exports:
                        lines.append(self.store(self.element(self.WORK_ARRAY,
                                                             part.exports[sym]), sym.name))
                if k == len(parts) - 1:
                    lines += self._stores(program) + self._solves(program)
            finally:
                self.names = None
            bodies.append(lines)
        return bodies

    def _stores(self, program: Program) -> list[str]:
        """The output stores (zero-filled where :data:`ZERO_FILL_MIN` applies)."""
        lines: list[str] = []
        for spec, exprs in program.outputs:
            zero = [_positive_zero(e) for e in exprs]
            fill = sum(zero) >= ZERO_FILL_MIN
            if fill:
                lines.append(self.zero_fill(spec))
            lines += [self.statement(Store(spec, i, e)) for i, e in enumerate(exprs)
                      if not (fill and zero[i])]
        return lines

    def _solves(self, program: Program) -> list[str]:
        """The solves' loops (:meth:`symgen.ir.printer.Printer.solve`)."""
        return [line for solve in program.solves for line in self.solve(solve)]

    def loop(self, first: int, end: int, statement: str) -> str:
        k = self.COLUMN
        return f"{{ size_t {k}; for ({k} = {first}; {k} < {end}; ++{k}) {statement} }}"

    def parameters(self, inputs: Sequence[ArraySpec], outputs: Sequence[ArraySpec],
                   pointers: bool = False) -> list[str]:
        """The parameter list: ``const`` inputs, then outputs; sized arrays
        (``const T q[7]``) or, with ``pointers``, pointers (``const T *q``)."""

        def one(spec: ArraySpec, const: str) -> str:
            if pointers:
                return f"{const}{self.type_name} *{spec.name}"
            return f"{const}{self.type_name} {spec.name}[{spec.size}]"

        return [one(s, "const ") for s in inputs] + [one(s, "") for s in outputs]

    def prototype(self, name: str, inputs: Sequence[ArraySpec],
                  outputs: Sequence[ArraySpec]) -> str:
        """``void name(const T q[nq], ..., T out[n])``."""
        return f"void {name}({', '.join(self.parameters(inputs, outputs))})"

    def batch_prototype(self, name: str, inputs: Sequence[ArraySpec],
                        outputs: Sequence[ArraySpec]) -> str:
        """``void name(size_t count, const T *q, ..., T *out)``: ``count`` argument sets,
        each argument advancing by its own size."""
        params = self.parameters(inputs, outputs, pointers=True)
        return f"void {name}(size_t count, {', '.join(params)})"

    def part_prototype(self, name: str, inputs: Sequence[ArraySpec],
                       outputs: Sequence[ArraySpec]) -> str:
        """``void name(const T q[nq], ..., T out[n], T *symgen_w)``: one part of a kernel
        printed in parts (:meth:`part_bodies`), its arguments and the work array."""
        params = [*self.parameters(inputs, outputs), f"{self.type_name} *{self.WORK_ARRAY}"]
        return f"void {name}({', '.join(params)})"

    def work_array(self, size: int) -> str:
        """The declaration of the work array of :data:`WORK_ARRAY` with ``size`` elements."""
        return f"{self.type_name} {self.WORK_ARRAY}[{size}];"

    def call(self, name: str, arguments: Sequence[str]) -> str:
        """The statement calling function ``name`` with ``arguments``."""
        return f"{name}({', '.join(arguments)});"

    def discard(self, name: str) -> str:
        """The statement marking parameter ``name`` as used (a part that does not read it)."""
        return f"(void){name};"

    def number(self, value: float) -> str:
        """A C literal of ``value``: ``repr`` of the double (``2.0``, ``1e-300``), or for
        ``float`` the shortest decimal of the value rounded to float (IEEE binary32) with an
        ``f`` suffix. A value that underflows float prints as ``0.0f`` (what the float
        arithmetic would hold; gcc warns on a literal truncated to zero). A non-finite value,
        or one beyond float's range in a float kernel, raises :class:`SymgenError`."""
        if not math.isfinite(value):
            raise SymgenError(f"the number {value!r} is not finite and has no C literal")
        real = self.real_type
        if real.wider is not None:  # narrower than the IR's double: round to the type
            with np.errstate(over="ignore"):
                rounded = np.dtype(real.dtype).type(value)
            if not np.isfinite(rounded):
                raise SymgenError(f"the number {value!r} exceeds the range of {real.name} "
                                  f"(generate with real='{real.wider}')")
            text = str(rounded)  # numpy: the shortest decimal that rounds to ``rounded``
        else:
            text = repr(value)
        if "e" not in text and "." not in text:
            text += ".0"
        return text + real.literal_suffix

    def function(self, name: str) -> str:
        """``sin``/``cos`` as the generated source's own (:mod:`symgen.backends.c99.trig`,
        noted in :attr:`uses_trig`), any other function as ``<math.h>``'s of the real
        type."""
        if name in trig.FUNCTIONS:
            self.uses_trig = True
            return trig.function_name(name, self.real_type)
        return name + self.real_type.math_suffix

    def helpers(self) -> str:
        """The C definitions the statements printed so far call beyond ``<math.h>``."""
        return trig.source(self.real_type) if self.uses_trig else ""

    def select(self, cond: str, then: str, other: str) -> str:
        return f"(({cond}) ? {then} : {other})"


__all__ = ["ZERO_FILL_MIN", "CPrinter"]
