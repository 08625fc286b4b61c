"""Physical constants that are either plain numbers or named runtime parameters.

A model value is a ``float`` or a sympy expression over parameter symbols. Parameters stay
symbolic through fixed-joint lumping, so a payload mass declared as a parameter survives
merging; :func:`evaluate` turns any value into a float once parameter values are known.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import sympy

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


def evaluate(x: Scalar, values: Mapping[str, float]) -> float:
    """Numeric value of ``x`` with parameters replaced by ``values`` (name -> number)."""
    if not is_symbolic(x):
        return float(x)
    subs = {s: values[s.name] for s in x.free_symbols if s.name in values}
    result = x.subs(subs)
    if not result.is_number:
        missing = sorted(s.name for s in result.free_symbols)
        raise KeyError(f"no value for parameter(s) {', '.join(missing)}")
    return float(result)


def free_parameter_names(x: Scalar) -> set[str]:
    return {s.name for s in x.free_symbols} if is_symbolic(x) else set()
