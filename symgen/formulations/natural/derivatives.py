"""Partial derivatives of the natural models' expressions (polynomials of q, atan2 of two
of them): the same sympy expressions as ``sympy.diff``, built faster.

``sympy.diff`` asks, at every level of the tree, whether the derivative it built is zero
(an assumption query over the whole expression, by far its largest cost on these
expressions). :func:`derivative` applies the same differentiation rules as sympy's
``_eval_derivative`` methods (sum rule, Leibniz rule of ``Mul._eval_derivative_n_times``,
``Pow._eval_derivative``, the chain rule of ``Function._eval_derivative`` with ``fdiff``), in
the same order and with the same constructors, without those queries, so the results are
identical (tests/unit/test_natural_derivatives.py checks that against ``sympy.diff``).
Any other node is differentiated by ``sympy.diff`` itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from sympy.core.basic import Basic
from sympy.core.function import ArgumentIndexError
from sympy.ntheory.multinomial import multinomial_coefficients_iterator

_ZERO = sympy.S.Zero


def _rule(cls: type, name: str, base: type) -> bool:
    """True when ``cls`` differentiates by ``base``'s method ``name`` (not an override)."""
    return getattr(cls, name) is getattr(base, name)


def derivative(expr: sympy.Expr, s: sympy.Symbol, _fdiff: dict | None = None) -> sympy.Expr:
    """∂expr/∂s, equal (as a sympy tree) to ``sympy.diff(expr, s)``. ``_fdiff`` keeps the
    functions' partial derivatives ``fdiff`` between calls on one expression (they do not
    depend on s, and their assumptions, once asked, stay cached on them)."""
    if _fdiff is None:
        _fdiff = {}
    if s not in expr.free_symbols:
        return _ZERO
    cls = type(expr)
    if expr.is_Symbol:
        return sympy.S.One  # expr is s: it has s as a free symbol
    if cls is sympy.Add:
        return sympy.Add(*[derivative(a, s, _fdiff) for a in expr.args])
    if cls is sympy.Mul:
        args = expr.args
        terms = []
        for kvals, c in multinomial_coefficients_iterator(len(args), 1):
            p = sympy.Mul(*[derivative(a, s, _fdiff) if k else a for k, a in zip(kvals, args,
                                                                         strict=True)])
            terms.append(c * p)
        return sympy.Add(*terms)
    if cls is sympy.Pow and not expr.exp.free_symbols:
        dbase = derivative(expr.base, s, _fdiff)
        dexp = derivative(expr.exp, s, _fdiff)
        return expr * (dexp * sympy.log(expr.base) + dbase * expr.exp / expr.base)
    if (isinstance(expr, sympy.Function)
            and _rule(cls, "_eval_derivative", sympy.Function)
            and _rule(cls, "_eval_derivative_n_times", Basic)):
        terms = []
        for i, a in enumerate(expr.args, start=1):
            da = derivative(a, s, _fdiff)
            if da.is_zero:
                continue
            if (expr, i) not in _fdiff:
                try:
                    _fdiff[expr, i] = expr.fdiff(i)
                except ArgumentIndexError:
                    _fdiff[expr, i] = sympy.Function.fdiff(expr, i)
            terms.append(_fdiff[expr, i] * da)
        return sympy.Add(*terms)
    return sympy.diff(expr, s)


def sparse_gradient(expr: sympy.Expr, index: dict[sympy.Symbol, int]
                    ) -> list[tuple[int, sympy.Expr]]:
    """The non-zero entries (position, ∂expr/∂s) of the gradient of ``expr`` with respect to
    the symbols of ``index`` (symbol → position), in position order; derivatives with respect
    to symbols absent from ``expr`` are zero and skipped."""
    present = sorted((index[s], s) for s in expr.free_symbols if s in index)
    out = []
    functions: dict = {}
    for i, s in present:
        d = derivative(expr, s, functions)
        if d != 0:
            out.append((i, d))
    return out


def gradient(expr: sympy.Expr, symbols: Sequence[sympy.Symbol]) -> list[sympy.Expr]:
    """[∂expr/∂s for s in symbols], equal to ``[sympy.diff(expr, s) for s in symbols]``."""
    out: list[sympy.Expr] = [_ZERO] * len(symbols)
    for i, d in sparse_gradient(expr, {s: i for i, s in enumerate(symbols)}):
        out[i] = d
    return out


__all__ = ["derivative", "gradient", "sparse_gradient"]
