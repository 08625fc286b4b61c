"""Reading the values given to :class:`~symgen.io.builder.ModelBuilder`: numbers, declared
parameters (:class:`~symgen.model.scalars.Parameter` or ``"$name"``), sympy expressions of
them, vectors and inertia matrices, each checked with a one-line error naming the element."""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Sequence

import sympy

from symgen.errors import ModelError, SourceRef
from symgen.model.scalars import (
    Mat3,
    Parameter,
    Scalar,
    Vec3,
    free_parameter_names,
    parameter_symbol,
)
from symgen.model.transform import vec3

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 60


def clip(x: object) -> str:
    """``repr(x)`` shortened for a one-line message (deep or huge values stay short)."""
    return _REPR.repr(x)




class ValueReader:
    """The value conversions of the builder, against its declared ``_parameters``."""

    _parameters: dict[str, Parameter]

    def _values(self, x: object, where: str, source: SourceRef | None) -> tuple[Scalar, ...]:
        """One value or a non-empty list (or array) of values."""
        if isinstance(x, str | sympy.Basic | Parameter) or not hasattr(x, "__iter__"):
            return (self._scalar(x, where, source),)
        items = list(x)  # type: ignore[call-overload]
        if not items:
            raise ModelError(f"{where}: expected a number or a list of numbers", source)
        return tuple(self._scalar(v, where, source) for v in items)

    def _scalar(self, x: object, where: str, source: SourceRef | None) -> Scalar:
        """A finite float, or a sympy expression of declared parameters (checked at their
        defaults by :meth:`build`)."""
        if isinstance(x, Parameter):
            x = x.symbol
        given = x
        if isinstance(x, str):
            ref = x.strip()
            sign = -1.0 if ref.startswith("-$") else 1.0
            ref = ref[1:] if sign < 0 else ref
            name = ref[1:] if ref.startswith("$") else None
            if name is None:
                try:
                    x = float(ref)
                except ValueError:
                    raise ModelError(
                        f"{where}: {clip(x)} is neither a number nor a parameter reference "
                        f"($name)",
                        source,
                    ) from None
            elif name not in self._parameters:
                raise ModelError(f"{where}: unknown parameter {clip(name)}", source)
            else:
                return sign * parameter_symbol(name)
        if isinstance(x, sympy.Basic):
            if not isinstance(x, sympy.Expr):
                raise ModelError(f"{where}: {clip(x)} is not a number", source)
            unknown = sorted(free_parameter_names(x) - set(self._parameters))
            if unknown:
                raise ModelError(f"{where}: unknown parameter {unknown[0]!r}", source)
            if not x.is_number:
                # parameters as the symbols parameter_symbol(name); constants such as pi as
                # floats (the kernels see numbers and parameters only)
                subs = {s: parameter_symbol(s.name) for s in x.free_symbols}
                subs |= {c: sympy.Float(float(c)) for c in x.atoms(sympy.NumberSymbol)}
                return x.xreplace(subs)
            try:
                z = complex(x)
            except (TypeError, ValueError, OverflowError, ZeroDivisionError):
                z = complex(math.nan)
            if z.imag != 0.0 and abs(z.imag) > 1e-12 * abs(z):
                raise ModelError(f"{where}: {clip(x)} is not a real number", source)
            x = z.real
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise ModelError(f"{where}: {clip(x)} is not a number", source)
        try:
            value = float(x)
        except (OverflowError, ValueError, TypeError):
            value = math.nan if not isinstance(x, int) else (math.inf if x > 0 else -math.inf)
        if not math.isfinite(value):
            raise ModelError(f"{where}: {clip(given)} is not a finite number", source)
        return value

    def _vec(self, v: Sequence, where: str, source: SourceRef | None, n: int = 3) -> Vec3:
        if isinstance(v, str) or not isinstance(v, Sequence) or len(v) != n:
            raise ModelError(f"{where}: expected a list of {n} numbers, got {clip(v)}", source)
        return vec3([self._scalar(x, where, source) for x in v])

    def _inertia(self, inertia: Sequence, where: str, source: SourceRef | None) -> Mat3:
        if (
            isinstance(inertia, Sequence)
            and len(inertia) == 3
            and all(isinstance(r, Sequence) and not isinstance(r, str) for r in inertia)
        ):
            rows = [self._vec(r, where, source) for r in inertia]
            return (rows[0], rows[1], rows[2])
        if (
            isinstance(inertia, Sequence)
            and not isinstance(inertia, str)
            and len(inertia) in (3, 6)
        ):
            vals = [self._scalar(x, where, source) for x in inertia]
            ixx, iyy, izz = vals[:3]
            ixy, ixz, iyz = vals[3:] if len(vals) == 6 else (0.0, 0.0, 0.0)
            return ((ixx, ixy, ixz), (ixy, iyy, iyz), (ixz, iyz, izz))
        raise ModelError(
            f"{where}: inertia must be a 3x3 matrix, [ixx, iyy, izz] or "
            f"[ixx, iyy, izz, ixy, ixz, iyz], got {clip(inertia)}",
            source,
        )


__all__ = ["ValueReader", "clip"]
