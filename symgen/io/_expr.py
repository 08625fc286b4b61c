"""Safe arithmetic on numbers and ``$parameter`` references, for values in model files.

``"$m"``, ``"-$L / 2"``, ``"2 * $m + 0.1"``, ``"pi / 2"``, ``"sqrt(2) * $r"``: numbers,
``$name`` references to declared parameters, ``+ - * / **``, parentheses, the constant ``pi``
and the functions ``sqrt sin cos tan asin acos atan atan2``. The text is parsed with
:mod:`ast` and walked node by node; nothing is ever evaluated by Python.

An expression is at most :data:`MAX_LENGTH` characters and :data:`MAX_DEPTH` levels of
nested operations (a sum of n terms is n levels deep), so that neither Python's parser nor the
walk can exhaust the stack. Every constant sub-expression must be a finite real number (the
result of ``sqrt(-1)``, ``1/0`` or ``1e300**2`` is an error where it appears); sub-expressions
that depend on parameters are checked at the parameters' defaults by
:meth:`symgen.ModelBuilder.build`.
"""

from __future__ import annotations

import ast
import cmath
import math
import re
from collections.abc import Collection

import sympy

from symgen.model.scalars import Scalar, parameter_symbol

#: Longest accepted expression, in characters.
MAX_LENGTH = 1000
#: Deepest accepted nesting of operations, function calls and signs.
MAX_DEPTH = 50

_REF = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_PREFIX = "__param_"
_FUNCTIONS = {
    "sqrt": (1, sympy.sqrt),
    "sin": (1, sympy.sin),
    "cos": (1, sympy.cos),
    "tan": (1, sympy.tan),
    "asin": (1, sympy.asin),
    "acos": (1, sympy.acos),
    "atan": (1, sympy.atan),
    "atan2": (2, sympy.atan2),
}
_FUNCTION_LIST = ", ".join(_FUNCTIONS)
_CONSTANTS = {"pi": sympy.pi}
_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}


class ExpressionError(ValueError):
    """The text is not a valid value expression; the message says why."""


def parse_value(text: str, parameters: Collection[str]) -> Scalar:
    """A float, or a sympy expression over the parameter symbols, for ``text``."""
    if len(text) > MAX_LENGTH:
        raise ExpressionError(
            f"expression {_short(text)} is too long ({len(text)} characters, at most "
            f"{MAX_LENGTH})"
        )
    for name in _REF.findall(text):
        if name not in parameters:
            known = ", ".join(sorted(parameters)) or "none declared"
            raise ExpressionError(f"unknown parameter {name!r} (parameters: {known})")
    if text.strip().isidentifier() and text.strip() not in _CONSTANTS:
        raise ExpressionError(
            f"{_short(text)} is neither a number nor a parameter reference (write ${text.strip()} "
            f"for the parameter of that name)"
        )
    source = _REF.sub(lambda m: _PREFIX + m.group(1), text).strip()
    if "$" in source:
        raise ExpressionError(f"{_short(text)}: '$' must be followed by a parameter name")
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # ValueError: e.g. null bytes; RecursionError / MemoryError: the parser's own limits
        raise ExpressionError(
            f"{_short(text)} is neither a number nor an expression of numbers and $parameters"
        ) from None
    _check_depth(tree.body, text)
    value = _walk(tree.body, text)
    if value.is_number:
        return _real(value, text)
    if value.has(sympy.zoo, sympy.oo, -sympy.oo, sympy.nan):
        raise ExpressionError(f"{_short(text)} divides by zero")
    return value


def _check_depth(root: ast.AST, text: str) -> None:
    """Reject expressions nested more than MAX_DEPTH levels (iteratively: no recursion)."""
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ExpressionError(
                f"expression {_short(text)} is nested too deeply (more than {MAX_DEPTH} levels "
                f"of operations; a sum of n terms counts n levels)"
            )
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _short(text: str, limit: int = 60) -> str:
    """``repr`` of ``text``, shortened for a one-line message."""
    return repr(text) if len(text) <= limit else repr(text[: limit - 3]) + "..."


def _real(value: sympy.Expr, text: str, node: ast.AST | None = None) -> float:
    """The finite real float of the constant ``value`` (the sub-expression ``node`` of
    ``text``, or all of it)."""
    try:
        z = complex(value)
    except (TypeError, ValueError, OverflowError, ZeroDivisionError):
        z = complex(math.nan, 0.0)
    if cmath.isfinite(z) and (z.imag == 0.0 or abs(z.imag) <= 1e-12 * abs(z)):
        return z.real
    where = _short(text)
    if node is not None:
        part = ast.unparse(node).replace(_PREFIX, "$")
        if part.replace(" ", "") != text.replace(" ", ""):
            where = f"{_short(text)}: {_short(part)}"
    if not cmath.isfinite(z):
        if value.has(sympy.zoo):
            raise ExpressionError(f"{where} divides by zero")
        raise ExpressionError(f"{where} is not a finite number")
    raise ExpressionError(f"{where} is not a real number ({z.real:.6g}{z.imag:+.6g}i)")


def _walk(node: ast.AST, text: str) -> sympy.Expr:
    """The value of ``node``; a constant one must be a finite real number."""
    value = _walk_node(node, text)
    if value.is_number:
        number = _real(value, text, node)
        if value.is_extended_real is False:  # a rounding-level imaginary part: keep the real one
            return sympy.Float(number)
    return value


def _walk_node(node: ast.AST, text: str) -> sympy.Expr:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ExpressionError(f"{_short(text)}: {node.value!r} is not a number")
        return sympy.Integer(node.value) if isinstance(node.value, int) else sympy.Float(node.value)
    if isinstance(node, ast.Name):
        if node.id.startswith(_PREFIX):
            return parameter_symbol(node.id[len(_PREFIX) :])
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise ExpressionError(
            f"{_short(text)}: unknown name {node.id!r} (write parameters as ${node.id}; a value "
            f"is a number or an expression of numbers and $parameters)"
        )
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _walk(node.operand, text)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _walk(node.left, text), _walk(node.right, text)
        if isinstance(node.op, ast.Pow) and right.is_number and abs(_real(right, text)) > 64:
            raise ExpressionError(f"{_short(text)}: exponent {right} is too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitXor):
        raise ExpressionError(f"{_short(text)}: write powers with '**', not '^'")
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
    ):
        arity, function = _FUNCTIONS[node.func.id]
        if len(node.args) != arity or node.keywords:
            raise ExpressionError(f"{_short(text)}: {node.func.id} takes {arity} argument(s)")
        return function(*(_walk(arg, text) for arg in node.args))
    raise ExpressionError(
        f"{_short(text)}: only numbers, $parameters, + - * / **, parentheses, pi and the "
        f"functions {_FUNCTION_LIST} are allowed"
    )
