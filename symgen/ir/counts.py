"""Operation counts of expressions and programs: what a kernel costs, by kind of operation
(the conventions are those of :func:`count_ops`)."""

from __future__ import annotations

from collections import Counter

from symgen.ir.expr import Add, Call, Expr, Less, Mul, Num, Select, Sym
from symgen.ir.program import Program

OP_KINDS = ("add", "mul", "div", "sqrt", "trig", "other")
#: Kind of each function call; any other call (atan2, fabs, pow) counts as ``other``.
_CALL_KINDS = {"sqrt": "sqrt", "sin": "trig", "cos": "trig", "tan": "trig", "asin": "trig",
               "acos": "trig", "atan": "trig"}


def count_ops(expr: Expr, counts: Counter | None = None) -> Counter:
    """Floating-point operations to evaluate ``expr`` once, by kind.

    Conventions: an n-term sum is n−1 ``add`` (subtraction included); a product of n factors
    is n−1 ``mul`` plus one ``div`` when it has a denominator (``a*b/(c*d)``: 2 mul, 1 div);
    multiplying by ±1 and negation are free; ``x**k`` (k > 1) is k−1 mul; ``sqrt`` one
    ``sqrt``; ``sin``/``cos``/``tan`` and their inverses one ``trig``; ``atan2``, ``fabs``,
    ``pow`` and a selection (``a < b ? x : y``) one ``other``.
    """
    c = Counter() if counts is None else counts
    _count(expr, c)
    return c


def _count(e: Expr, c: Counter) -> None:
    if isinstance(e, Num | Sym):
        return
    if isinstance(e, Add):
        c["add"] += len(e.terms) + (e.const != 0.0) - 1
        for base, coeff in e.terms:
            if abs(coeff) != 1.0:
                c["mul"] += 1
            _count(base, c)
    elif isinstance(e, Mul):
        numerator = sum(x for _, x in e.factors if x > 0) + (abs(e.coeff) != 1.0)
        denominator = sum(-x for _, x in e.factors if x < 0)
        c["mul"] += max(numerator - 1, 0) + max(denominator - 1, 0)
        if denominator:
            c["div"] += 1
        for base, _ in e.factors:
            _count(base, c)
    elif isinstance(e, Call):
        kind = _CALL_KINDS.get(e.fn, "other")
        c[kind] += 1
        for arg in e.args:
            _count(arg, c)
    elif isinstance(e, Select):
        c["other"] += 1
        for child in e.children():
            _count(child, c)
    elif isinstance(e, Less):
        _count(e.lhs, c)
        _count(e.rhs, c)
    else:  # pragma: no cover
        raise TypeError(f"unknown expression {type(e).__name__}")


def op_counts(program: Program) -> dict[str, int]:
    """Operation counts of a whole program by kind, plus ``total`` (a
    :class:`~symgen.ir.solve.Solve`: per column of each row operation, a product and a sum
    for each term and a product for the scaling)."""
    c: Counter = Counter()
    for _, expr in program.assignments:
        _count(expr, c)
    for _, exprs in program.outputs:
        for expr in exprs:
            _count(expr, c)
    for solve in program.solves:  # per column: a product and a sum per term, the scaling
        for op in solve.row_operations():
            columns = sum(end - first for first, end in op.ranges)
            c["mul"] += (len(op.terms) + (op.scale is not None)) * columns
            c["add"] += len(op.terms) * columns
    out = {kind: int(c[kind]) for kind in OP_KINDS}
    out["total"] = sum(out.values())
    return out


__all__ = ["OP_KINDS", "count_ops", "op_counts"]
