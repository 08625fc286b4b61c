"""Physical constants that are either plain numbers or named runtime parameters.

A model value is a ``float`` or a sympy expression over parameter symbols. Parameters stay
symbolic through fixed-joint lumping, so a payload mass declared as a parameter survives
merging; :func:`evaluate` turns any value into a float once parameter values are known.
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Mapping
from dataclasses import dataclass

import sympy

from symgen.errors import ModelError

Scalar = float | sympy.Expr
Vec3 = tuple[Scalar, Scalar, Scalar]
Mat3 = tuple[Vec3, Vec3, Vec3]


@dataclass(frozen=True)
class Parameter:
    """A named runtime parameter with the default value used when none is given."""

    name: str
    default: float
    description: str = ""

    @property
    def symbol(self) -> sympy.Symbol:
        return parameter_symbol(self.name)


def parameter_symbol(name: str) -> sympy.Symbol:
    """The sympy symbol that stands for parameter ``name`` inside model values."""
    return sympy.Symbol(name, real=True)


def is_symbolic(x: object) -> bool:
    return isinstance(x, sympy.Basic) and not x.is_number


def scalar_text(x: object) -> str:
    """A value for people: 6 significant digits, or the expression of a parameter."""
    if is_symbolic(x):
        return str(x)
    return f"{float(x):.6g}"  # type: ignore[arg-type]


def simplify_scalar(x: Scalar) -> Scalar:
    """Plain float for anything numeric, sympy expression otherwise."""
    if isinstance(x, sympy.Basic):
        return float(x) if x.is_number else x
    return float(x)


def sin(x: Scalar) -> Scalar:
    return sympy.sin(x) if is_symbolic(x) else math.sin(float(x))


def cos(x: Scalar) -> Scalar:
    return sympy.cos(x) if is_symbolic(x) else math.cos(float(x))


def sqrt(x: Scalar) -> Scalar:
    return sympy.sqrt(x) if is_symbolic(x) else math.sqrt(float(x))


class NonRealValueError(ModelError):
    """A parameter-dependent value is not a real number at the given parameter values
    (``sqrt($m - 2)`` with m = 1). Callers that know the element re-raise it naming it."""

    def __init__(self, expr: sympy.Expr, value: complex, values: Mapping[str, float]) -> None:
        used = sorted(s.name for s in expr.free_symbols)
        at = ", ".join(f"{name} = {values[name]:g}" for name in used if name in values)
        text = str(expr)
        text = text if len(text) <= 60 else text[:57] + "..."
        self.detail = f"{text} = {value.real:.6g}{value.imag:+.6g}i is not a real number"
        if at:
            self.detail += f" at {at}"
        super().__init__(self.detail)


def evaluate(x: Scalar, values: Mapping[str, float]) -> float:
    """Numeric value of ``x`` with parameters replaced by ``values`` (name -> number).

    The result may be infinite or NaN (callers check); a complex result raises
    :class:`NonRealValueError`. Rounding-level imaginary parts (``|im| <= 1e-12 |z|``, left by
    sympy's floating-point evaluation of a real expression) are dropped.
    """
    if not is_symbolic(x):
        return float(x)
    subs = {s: values[s.name] for s in x.free_symbols if s.name in values}
    result = x.subs(subs)
    if not result.is_number:
        missing = sorted(s.name for s in result.free_symbols)
        raise KeyError(f"no value for parameter(s) {', '.join(missing)}")
    try:
        z = complex(result)
    except (TypeError, ValueError, OverflowError, ZeroDivisionError):
        return math.nan
    if not cmath.isfinite(z):
        return z.real if z.imag == 0.0 else math.nan
    if z.imag != 0.0 and abs(z.imag) > 1e-12 * abs(z):
        raise NonRealValueError(x, z, values)
    return z.real


def free_parameter_names(x: Scalar) -> set[str]:
    return {s.name for s in x.free_symbols} if is_symbolic(x) else set()
