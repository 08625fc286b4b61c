"""Safe arithmetic on numbers and ``$parameter`` references, for values in model files.

``"$m"``, ``"-$L / 2"``, ``"2 * $m + 0.1"``, ``"pi / 2"``, ``"sqrt(2) * $r"``: numbers,
``$name`` references to declared parameters, ``+ - * / **``, parentheses, the constant ``pi``
and the functions ``sqrt sin cos tan asin acos atan atan2``. The text is parsed with
:mod:`ast` and walked node by node; nothing is ever evaluated by Python.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Collection

import sympy

from ..model.scalars import Scalar, parameter_symbol

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
    for name in _REF.findall(text):
        if name not in parameters:
            known = ", ".join(sorted(parameters)) or "none declared"
            raise ExpressionError(f"unknown parameter {name!r} (parameters: {known})")
    if text.strip().isidentifier() and text.strip() not in _CONSTANTS:
        raise ExpressionError(
            f"{text!r} is neither a number nor a parameter reference (write ${text.strip()} "
            f"for the parameter of that name)"
        )
    source = _REF.sub(lambda m: _PREFIX + m.group(1), text).strip()
    if "$" in source:
        raise ExpressionError(f"{text!r}: '$' must be followed by a parameter name")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        raise ExpressionError(
            f"{text!r} is neither a number nor an expression of numbers and $parameters"
        ) from None
    value = _walk(tree.body, text)
    if value.is_number:
        try:
            number = float(value)
        except TypeError:
            raise ExpressionError(f"{text!r} is not a finite real number") from None
        if not math.isfinite(number):
            raise ExpressionError(f"{text!r} is not a finite number")
        return number
    if value.has(sympy.zoo, sympy.oo, -sympy.oo, sympy.nan):
        raise ExpressionError(f"{text!r} divides by zero")
    return value


def _walk(node: ast.AST, text: str) -> sympy.Expr:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ExpressionError(f"{text!r}: {node.value!r} is not a number")
        return sympy.Integer(node.value) if isinstance(node.value, int) else sympy.Float(node.value)
    if isinstance(node, ast.Name):
        if node.id.startswith(_PREFIX):
            return parameter_symbol(node.id[len(_PREFIX) :])
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise ExpressionError(
            f"{text!r}: unknown name {node.id!r} (write parameters as ${node.id}; a value is a "
            f"number or an expression of numbers and $parameters)"
        )
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _walk(node.operand, text)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _walk(node.left, text), _walk(node.right, text)
        if isinstance(node.op, ast.Pow) and right.is_number and abs(float(right)) > 64:
            raise ExpressionError(f"{text!r}: exponent {right} is too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitXor):
        raise ExpressionError(f"{text!r}: write powers with '**', not '^'")
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
    ):
        arity, function = _FUNCTIONS[node.func.id]
        if len(node.args) != arity or node.keywords:
            raise ExpressionError(f"{text!r}: {node.func.id} takes {arity} argument(s)")
        return function(*(_walk(arg, text) for arg in node.args))
    raise ExpressionError(
        f"{text!r}: only numbers, $parameters, + - * / **, parentheses, pi and the functions "
        f"{_FUNCTION_LIST} are allowed"
    )
