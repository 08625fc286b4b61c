"""A small, fast symbolic expression type for straight-line programs.

Kernels are derived by millions of elementary operations on numbers and symbols; sympy's
general machinery (assumptions, automatic simplification) costs tens of microseconds per
operation, which made generation slow. Programs only need a commutative ring with
division and a few functions, so symgen's IR uses this canonical form instead:

- :class:`Num` (a float), :class:`Sym` (a temporary ``t12``), :class:`Elem` (element 3 of
  input array ``q``, a symbol whose layout the printer decides);
- :class:`Add` ``const + Σ cᵢ·bᵢ`` with coefficient-free bases bᵢ;
- :class:`Mul` ``c · Π bᵢ^eᵢ`` with integer exponents (negative: division);
- :class:`Call` ``sin``, ``cos``, ``sqrt``; :class:`Select` ``then if a < b else other``.

Construction folds constants, zeros and ones, merges like terms and sorts operands by a
structural key, so equal expressions are equal objects (hash-consing works) and the order
never depends on hashing: generation is deterministic. Numbers are never distributed over
sums (``2*(x + y)`` stays one multiplication).

Model values that are sympy expressions of runtime parameters enter through
:func:`from_sympy`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import sympy


class Expr:
    """Base class: immutable, compared and hashed by its structural key."""

    __slots__ = ("key", "_hash")
    precedence = 100

    def __init__(self, key: str) -> None:
        self.key = key
        self._hash = hash(key)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Expr):
            return self.key == other.key
        if isinstance(other, int | float):
            return isinstance(self, Num) and self.value == other
        return NotImplemented

    def __repr__(self) -> str:
        return self.key

    __str__ = __repr__

    # arithmetic ---------------------------------------------------------------
    def __add__(self, other: object) -> Expr:
        return add(self, as_expr(other))

    def __radd__(self, other: object) -> Expr:
        return add(as_expr(other), self)

    def __sub__(self, other: object) -> Expr:
        return add(self, neg(as_expr(other)))

    def __rsub__(self, other: object) -> Expr:
        return add(as_expr(other), neg(self))

    def __mul__(self, other: object) -> Expr:
        return mul(self, as_expr(other))

    def __rmul__(self, other: object) -> Expr:
        return mul(as_expr(other), self)

    def __truediv__(self, other: object) -> Expr:
        return mul(self, inv(as_expr(other)))

    def __rtruediv__(self, other: object) -> Expr:
        return mul(as_expr(other), inv(self))

    def __neg__(self) -> Expr:
        return neg(self)

    def __pos__(self) -> Expr:
        return self

    def __pow__(self, n: int) -> Expr:
        if not isinstance(n, int):
            raise TypeError("only integer powers are supported")
        return power(self, n)

    def __lt__(self, other: object) -> Less:
        return Less(self, as_expr(other))

    # structure ------------------------------------------------------------------
    @property
    def is_number(self) -> bool:
        return False

    def symbols(self) -> set[Sym]:
        """Every symbol the expression reads."""
        out: set[Sym] = set()
        stack: list[Expr] = [self]
        while stack:
            e = stack.pop()
            if isinstance(e, Sym):
                out.add(e)
            else:
                stack.extend(e.children())
        return out

    def children(self) -> tuple[Expr, ...]:
        return ()

    def rebuild(self, children: list[Expr]) -> Expr:
        """The same operation on new operands (in :meth:`children` order)."""
        return self

    def replace(self, mapping: Mapping[Expr, Expr]) -> Expr:
        """Substitute sub-expressions (symbols, typically) by ``mapping``."""
        hit = mapping.get(self)
        if hit is not None:
            return hit
        kids = self.children()
        if not kids:
            return self
        return self.rebuild([k.replace(mapping) for k in kids])


class Num(Expr):
    __slots__ = ("value",)

    def __init__(self, value: float) -> None:
        self.value = float(value) + 0.0  # no negative zero
        super().__init__(repr(self.value))

    @property
    def is_number(self) -> bool:
        return True


class Sym(Expr):
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(name)


class Elem(Sym):
    """Element ``index`` of input array ``array`` (flattened row-major). The printer decides
    its layout (``q[3]`` in scalar C and Python, a lane load in a vectorised batch); its
    structural key is the scalar spelling, so programs sort and hash as before."""

    __slots__ = ("array", "index")

    def __init__(self, array: str, index: int) -> None:
        self.array = array
        self.index = index
        super().__init__(f"{array}[{index}]")


class Add(Expr):
    """``const + Σ coeff·base``; bases are not Num, Add, or Mul with a coefficient ≠ 1."""

    __slots__ = ("const", "terms")
    precedence = 10

    def __init__(self, const: float, terms: tuple[tuple[Expr, float], ...]) -> None:
        const = const + 0.0
        self.const = const
        self.terms = terms
        inner = " ".join(f"{c!r}*{b.key}" for b, c in terms)
        super().__init__(f"(+ {const!r} {inner})")

    def children(self) -> tuple[Expr, ...]:
        return tuple(b for b, _ in self.terms)

    def rebuild(self, children: list[Expr]) -> Expr:
        return add_terms(self.const, [(b, c) for b, (_, c) in zip(children, self.terms,
                                                                      strict=True)])


class Mul(Expr):
    """``coeff · Π base^exp``, integer exponents ≠ 0; bases are not Num or Mul."""

    __slots__ = ("coeff", "factors")
    precedence = 20

    def __init__(self, coeff: float, factors: tuple[tuple[Expr, int], ...]) -> None:
        coeff = coeff + 0.0
        self.coeff = coeff
        self.factors = factors
        inner = " ".join(f"{b.key}^{e}" for b, e in factors)
        super().__init__(f"(* {coeff!r} {inner})")

    def children(self) -> tuple[Expr, ...]:
        return tuple(b for b, _ in self.factors)

    def rebuild(self, children: list[Expr]) -> Expr:
        out: Expr = Num(self.coeff)
        for b, (_, e) in zip(children, self.factors, strict=True):
            out = mul(out, power(b, e))
        return out

    def without_coeff(self) -> Expr:
        if len(self.factors) == 1 and self.factors[0][1] == 1:
            return self.factors[0][0]
        return Mul(1.0, self.factors)


class Call(Expr):
    """``fn(args...)``: one of the C99 ``<math.h>`` functions in :attr:`FUNCTIONS` (their
    Python ``math`` counterparts have the same names and meanings)."""

    __slots__ = ("fn", "args")
    FUNCTIONS = {
        "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin,
        "acos": math.acos, "atan": math.atan, "atan2": math.atan2, "sqrt": math.sqrt,
        "fabs": math.fabs, "pow": math.pow,
    }

    def __init__(self, fn: str, *args: Expr) -> None:
        self.fn = fn
        self.args = tuple(args)
        super().__init__(f"({fn} {' '.join(a.key for a in self.args)})")

    @property
    def arg(self) -> Expr:
        return self.args[0]

    def children(self) -> tuple[Expr, ...]:
        return self.args

    def rebuild(self, children: list[Expr]) -> Expr:
        return call(self.fn, *children)


class Less(Expr):
    """The condition ``lhs < rhs`` of a :class:`Select`."""

    __slots__ = ("lhs", "rhs")

    def __init__(self, lhs: Expr, rhs: Expr) -> None:
        self.lhs, self.rhs = lhs, rhs
        super().__init__(f"(< {lhs.key} {rhs.key})")

    def children(self) -> tuple[Expr, ...]:
        return (self.lhs, self.rhs)

    def rebuild(self, children: list[Expr]) -> Expr:
        return Less(children[0], children[1])


class Select(Expr):
    """``then if cond else other``: only the selected branch is evaluated, so nothing may
    be hoisted out of a branch (CSE treats a Select as opaque)."""

    __slots__ = ("cond", "then", "other")

    def __init__(self, cond: Less, then: Expr, other: Expr) -> None:
        self.cond, self.then, self.other = cond, then, other
        super().__init__(f"(? {cond.key} {then.key} {other.key})")

    def children(self) -> tuple[Expr, ...]:
        return (self.cond, self.then, self.other)

    def rebuild(self, children: list[Expr]) -> Expr:
        return Select(children[0], children[1], children[2])  # type: ignore[arg-type]


ZERO = Num(0.0)
ONE = Num(1.0)


# ---------------------------------------------------------------------- construction
def as_expr(x: object) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, int | float):
        return Num(float(x))
    if isinstance(x, sympy.Basic):
        return from_sympy(x, {})
    raise TypeError(f"cannot use {type(x).__name__} in an expression")


def _split(e: Expr) -> tuple[Expr, float]:
    """(coefficient-free base, coefficient) of a non-number term."""
    if isinstance(e, Mul) and e.coeff != 1.0:
        return e.without_coeff(), e.coeff
    return e, 1.0


def add_terms(const: float, terms: Iterable[tuple[Expr, float]]) -> Expr:
    """``const + Σ c·e`` in canonical form."""
    acc: dict[str, list] = {}
    for e, c in terms:
        if c == 0.0:
            continue
        if isinstance(e, Num):
            const += c * e.value
            continue
        if isinstance(e, Add) and c == 1.0:
            const += e.const
            for b, cb in e.terms:
                _accumulate(acc, b, cb)
            continue
        base, cb = _split(e)
        _accumulate(acc, base, c * cb)
    items = tuple(sorted(((b, c) for b, c in acc.values() if c != 0.0), key=lambda t: t[0].key))
    if not items:
        return Num(const)
    if len(items) == 1 and const == 0.0:
        b, c = items[0]
        return b if c == 1.0 else mul(Num(c), b)
    return Add(const, items)


def _accumulate(acc: dict[str, list], base: Expr, c: float) -> None:
    slot = acc.get(base.key)
    if slot is None:
        acc[base.key] = [base, c]
    else:
        slot[1] += c


def add(*xs: Expr) -> Expr:
    return add_terms(0.0, ((x, 1.0) for x in xs))


def esum(xs: Iterable[object]) -> Expr:
    """Sum of any number of expressions or numbers."""
    return add_terms(0.0, ((as_expr(x), 1.0) for x in xs))


def neg(x: Expr) -> Expr:
    if isinstance(x, Num):
        return Num(-x.value)
    if isinstance(x, Mul):
        if x.coeff == -1.0 and len(x.factors) == 1 and x.factors[0][1] == 1:
            return x.factors[0][0]
        return Mul(-x.coeff, x.factors)
    if isinstance(x, Add):
        return Add(-x.const, tuple((b, -c) for b, c in x.terms))
    return Mul(-1.0, ((x, 1),))


def mul_factors(coeff: float, factors: Iterable[tuple[Expr, int]]) -> Expr:
    """``coeff · Π b^e`` in canonical form."""
    acc: dict[str, list] = {}
    for b, e in factors:
        if isinstance(b, Num):
            coeff *= b.value**e
            continue
        if isinstance(b, Mul):
            coeff *= b.coeff**e
            for bb, ee in b.factors:
                _accumulate(acc, bb, ee * e)  # type: ignore[arg-type]
            continue
        _accumulate(acc, b, e)  # type: ignore[arg-type]
    if coeff == 0.0:
        return ZERO
    items = tuple(sorted(((b, int(e)) for b, e in acc.values() if e != 0),
                         key=lambda t: t[0].key))
    if not items:
        return Num(coeff)
    if len(items) == 1 and items[0][1] == 1 and coeff == 1.0:
        return items[0][0]
    return Mul(coeff, items)


def mul(a: Expr, b: Expr) -> Expr:
    if isinstance(a, Num) and isinstance(b, Num):
        return Num(a.value * b.value)
    if (isinstance(a, Num) and a.value == 0.0) or (isinstance(b, Num) and b.value == 0.0):
        return ZERO
    if isinstance(a, Num) and a.value == 1.0:
        return b
    if isinstance(b, Num) and b.value == 1.0:
        return a
    return mul_factors(1.0, ((a, 1), (b, 1)))


def inv(x: Expr) -> Expr:
    if isinstance(x, Num):
        if x.value == 0.0:
            raise ZeroDivisionError("division by an exact zero in a generated expression")
        return Num(1.0 / x.value)
    return power(x, -1)


def power(x: Expr, n: int) -> Expr:
    if n == 0:
        return ONE
    if n == 1:
        return x
    if isinstance(x, Num):
        return Num(x.value**n)
    return mul_factors(1.0, ((x, n),))


def call(fn: str, *args: Expr) -> Expr:
    if all(isinstance(a, Num) for a in args):
        return Num(Call.FUNCTIONS[fn](*(a.value for a in args)))
    return Call(fn, *args)


def atan2(y: object, x: object) -> Expr:
    return call("atan2", as_expr(y), as_expr(x))


def sin(x: object) -> Expr:
    return call("sin", as_expr(x))


def cos(x: object) -> Expr:
    return call("cos", as_expr(x))


def sqrt(x: object) -> Expr:
    return call("sqrt", as_expr(x))


def select(cond: Less, then: object, other: object) -> Expr:
    return Select(cond, as_expr(then), as_expr(other))


def extract_minus_sign(e: Expr) -> bool:
    """Canonical sign: exactly one of ``e`` and ``-e`` says True (for non-zero e)."""
    if isinstance(e, Num):
        return e.value < 0
    if isinstance(e, Mul):
        return e.coeff < 0
    if isinstance(e, Add):
        return e.terms[0][1] < 0
    return False


def is_atom(e: Expr) -> bool:
    """Numbers, symbols and negated symbols."""
    if isinstance(e, Num | Sym):
        return True
    return (
        isinstance(e, Mul)
        and e.coeff == -1.0
        and len(e.factors) == 1
        and e.factors[0][1] == 1
        and isinstance(e.factors[0][0], Sym)
    )


# ---------------------------------------------------------------------- sympy bridge
def from_sympy(x: sympy.Basic, mapping: Mapping[sympy.Symbol, Expr],
               memo: dict | None = None) -> Expr:
    """A sympy expression of parameters as an :class:`Expr` (``mapping``: symbol → Expr);
    ``memo`` caches the conversion of repeated subtrees within one call."""
    if memo is None:
        memo = {}
    if x in memo:
        return memo[x]
    out = _from_sympy(x, mapping, memo)
    memo[x] = out
    return out


def _from_sympy(x: sympy.Basic, mapping: Mapping[sympy.Symbol, Expr], memo: dict) -> Expr:
    if x.is_Number or (x.is_number and x.is_real):  # numbers and constants such as pi
        return Num(float(x))
    if x.is_Symbol:
        if x in mapping:
            return mapping[x]
        raise ValueError(f"no value for symbol {x} in a model expression")
    args = [from_sympy(a, mapping, memo) for a in x.args] if not x.is_Pow else []
    if x.is_Add:
        return esum(args)
    if x.is_Mul:
        out: Expr = ONE
        for a in args:
            out = mul(out, a)
        return out
    if x.is_Pow:
        base, exp = x.args
        b = from_sympy(base, mapping, memo)
        if exp.is_Integer:
            return power(b, int(exp))
        if exp == sympy.S.Half:
            return sqrt(b)
        if exp == -sympy.S.Half:
            return inv(sqrt(b))
        return call("pow", b, from_sympy(exp, mapping, memo))
    if isinstance(x, sympy.atan2):
        return call("atan2", *args)
    if isinstance(x, sympy.Abs):
        return call("fabs", args[0])
    for fn, name in _SYMPY_FUNCTIONS:
        if isinstance(x, fn):
            return call(name, args[0])
    raise ValueError(f"unsupported function {x.func} in a model expression")


#: sympy's one-argument functions and the :class:`Call` that computes each.
_SYMPY_FUNCTIONS = (
    (sympy.sin, "sin"), (sympy.cos, "cos"), (sympy.tan, "tan"), (sympy.asin, "asin"),
    (sympy.acos, "acos"), (sympy.atan, "atan"),
)


__all__ = [
    "ONE",
    "ZERO",
    "Add",
    "Call",
    "Elem",
    "Expr",
    "Less",
    "Mul",
    "Num",
    "Select",
    "Sym",
    "add",
    "as_expr",
    "atan2",
    "cos",
    "esum",
    "extract_minus_sign",
    "from_sympy",
    "inv",
    "is_atom",
    "mul",
    "neg",
    "power",
    "select",
    "sin",
    "sqrt",
]
