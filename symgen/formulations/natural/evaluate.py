"""Numeric values and gradients of the natural models' sympy expressions at one point, by
walking the expression tree (forward-mode differentiation: sum, product and chain rules),
without building derivative expressions or generating code.

For one evaluation (the rank of Φ_q at the assembled configuration, the joints' gradients
there) this costs microseconds per node, where ``sympy.diff`` and ``sympy.lambdify`` cost
milliseconds; repeated evaluations (the reference solvers) use lambdified functions instead.
Nodes: symbols, numbers, sums, products, powers with constant exponents and ``atan2``;
any other node raises :class:`Unsupported`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import sympy


class Unsupported(TypeError):
    """An expression node :func:`value_and_gradient` cannot evaluate."""


Gradient = dict[int, float]


def _scaled(g: Gradient, c: float) -> Gradient:
    return {i: c * v for i, v in g.items()}


def _add_into(total: Gradient, g: Gradient, c: float = 1.0) -> None:
    for i, v in g.items():
        total[i] = total.get(i, 0.0) + c * v


def value_and_gradient(expr: sympy.Expr, q: Sequence[float],
                       index: Mapping[sympy.Symbol, int]) -> tuple[float, Gradient]:
    """expr and its gradient (position → ∂expr/∂q_position, non-zero positions only) at
    q[index[s]] for every symbol s of ``index``."""
    if expr.is_Symbol:
        if expr not in index:
            raise Unsupported(f"symbol {expr} has no value")
        i = index[expr]
        return float(q[i]), {i: 1.0}
    if expr.is_Number:
        return float(expr), {}
    if expr.is_Add:
        total, grad = 0.0, {}
        for a in expr.args:
            v, g = value_and_gradient(a, q, index)
            total += v
            _add_into(grad, g)
        return total, grad
    if expr.is_Mul:
        parts = [value_and_gradient(a, q, index) for a in expr.args]
        total = math.prod(v for v, _ in parts)
        grad: Gradient = {}
        for k, (_, g) in enumerate(parts):
            if g:
                _add_into(grad, g, math.prod(v for j, (v, _) in enumerate(parts) if j != k))
        return total, grad
    if expr.is_Pow and expr.exp.is_Number:
        base, g = value_and_gradient(expr.base, q, index)
        e = float(expr.exp)
        return base**e, _scaled(g, e * base ** (e - 1.0)) if g else {}
    if isinstance(expr, sympy.atan2):
        (y, gy), (x, gx) = (value_and_gradient(a, q, index) for a in expr.args)
        r2 = x * x + y * y
        grad = _scaled(gy, x / r2) if gy else {}
        if gx:
            _add_into(grad, gx, -y / r2)
        return math.atan2(y, x), grad
    raise Unsupported(f"cannot evaluate {type(expr).__name__} nodes")


def jacobian_at(exprs: Sequence[sympy.Expr], q: Sequence[float],
                index: Mapping[sympy.Symbol, int], n: int) -> np.ndarray:
    """The dense Jacobian (len(exprs) × n) of ``exprs`` at q."""
    out = np.zeros((len(exprs), n))
    for r, e in enumerate(exprs):
        for i, v in value_and_gradient(sympy.sympify(e), q, index)[1].items():
            out[r, i] = v
    return out


__all__ = ["Unsupported", "jacobian_at", "value_and_gradient"]
