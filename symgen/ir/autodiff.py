"""Differentiation as a program transform: forward mode (Griewank & Walther, *Evaluating
Derivatives*, 2nd ed., SIAM 2008, ch. 3: the tangent propagation of a straight-line
program) and reverse mode (ibid., ch. 3.2-3.3 and 4: the adjoint sweep).

:func:`replay` re-emits a :class:`~symgen.ir.program.Program` into another builder with its
inputs replaced by expressions (so that programs compose: a configuration perturbed on its
manifold, an acceleration computed by another program, ...) and, given the tangents of those
inputs, emits the tangent of every temporary: for ``t = f(c₁, ..., cₖ)``,
ṫ[d] = Σᵢ ∂f/∂cᵢ · ċᵢ[d] for every direction d, the partial derivatives of each node's rule
(sum, product with integer powers, the C99 functions, selections) emitted once per node.
Tangents are sparse (a direction reaches only what depends on it), zeros fold as the
expressions are built, and the usual CSE and dead-code removal follow, so the derivative
program keeps the structure of the original (a hinge's quantities depend on its ancestors'
coordinates only).

:func:`adjoint` is the reverse mode: the program replayed forward (values only), then its
assignments visited backwards, each temporary's adjoint t̄ (the sum of the contributions
of its uses, complete once the sweep reaches its definition) passed on as c̄ᵢ += ∂f/∂cᵢ · t̄.
Adjoints are sparse maps too, direction = a seeded output element, so one sweep gives every
row of a Jacobian: cheaper than forward mode when the outputs are fewer than the inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from symgen.errors import SymgenError
from symgen.ir.expr import (
    ONE,
    ZERO,
    Add,
    Call,
    Elem,
    Expr,
    Less,
    Mul,
    Num,
    Select,
    Sym,
    add_terms,
    call,
    esum,
    mul_factors,
    power,
    select,
    sqrt,
)
from symgen.ir.program import Program, ProgramBuilder

#: A tangent: direction index → derivative (absent directions are zero).
Tangent = dict[int, Expr]


class _Replay:
    """The state of one replay: new values and tangents of the program's symbols."""

    def __init__(self, b: ProgramBuilder, values: Mapping[str, Sequence[Expr]],
                 tangents: Mapping[str, Sequence[Tangent]]) -> None:
        self.b = b
        self.values = values
        self.tangents = tangents
        self.env: dict[Sym, Expr] = {}
        self.tan: dict[Sym, Tangent] = {}

    def atom(self, s: Sym) -> tuple[Expr, Tangent]:
        if isinstance(s, Elem):
            seq = self.tangents.get(s.array)
            return self.values[s.array][s.index], (seq[s.index] if seq is not None else {})
        return self.env[s], self.tan.get(s, {})

    def combine(self, parts: Sequence[tuple[Expr, Tangent]]) -> Tangent:
        """Σᵢ pᵢ · ṫᵢ over the directions present, each emitted."""
        directions: dict[int, list[Expr]] = {}
        for partial, tangent in parts:
            if partial is ZERO:
                continue
            for d, x in tangent.items():
                directions.setdefault(d, []).append(partial * x)
        out: Tangent = {}
        for d, terms in directions.items():
            value = self.b.emit(esum(terms))
            if value is not ZERO:
                out[d] = value
        return out

    def node(self, e: Expr) -> tuple[Expr, Tangent]:
        """(new value, tangent) of expression ``e`` of the original program."""
        b = self.b
        if isinstance(e, Num):
            return e, {}
        if isinstance(e, Sym):
            return self.atom(e)
        if isinstance(e, Add):
            kids = [self.node(base) for base, _ in e.terms]
            value = add_terms(e.const, [(v, c) for (v, _), (_, c) in zip(kids, e.terms,
                                                                        strict=True)])
            return value, self.combine([(Num(c), t) for (_, t), (_, c) in zip(
                kids, e.terms, strict=True)])
        if isinstance(e, Mul):
            kids = [self.node(base) for base, _ in e.factors]
            vals = [(b.emit(v), n) for (v, _), (_, n) in zip(kids, e.factors, strict=True)]
            value = mul_factors(e.coeff, vals)
            parts = []
            for i, ((v, n), (_, t)) in enumerate(zip(vals, kids, strict=True)):
                if not t:
                    continue
                others = [(w, m) for j, (w, m) in enumerate(vals) if j != i]
                partial = mul_factors(e.coeff * n, [*others, *([(v, n - 1)] if n != 1 else [])])
                parts.append((b.emit(partial), t))
            return value, self.combine(parts)
        if isinstance(e, Call):
            kids = [self.node(a) for a in e.args]
            args = [b.emit(v) for v, _ in kids]
            value = call(e.fn, *args)
            if not any(t for _, t in kids):
                return value, {}
            partials = _call_partials(e.fn, args, b.emit(value))
            return value, self.combine([(b.emit(p), t) for p, (_, t) in zip(
                partials, kids, strict=True)])
        if isinstance(e, Select):
            cond, _ = self.node(e.cond)
            if isinstance(cond, Less) and isinstance(cond.lhs, Num) and \
                    isinstance(cond.rhs, Num):  # a decided branch: only it is evaluated
                return self.node(e.then if cond.lhs.value < cond.rhs.value else e.other)
            (then_v, then_t), (other_v, other_t) = self.node(e.then), self.node(e.other)
            value = select(cond, b.emit(then_v), b.emit(other_v))  # type: ignore[arg-type]
            tangent = {d: b.emit(select(cond, then_t.get(d, ZERO), other_t.get(d, ZERO)))  # type: ignore[arg-type]
                       for d in set(then_t) | set(other_t)}
            return value, {d: x for d, x in tangent.items() if x is not ZERO}
        if isinstance(e, Less):
            (lhs, _), (rhs, _) = self.node(e.lhs), self.node(e.rhs)
            return Less(self.b.emit(lhs), self.b.emit(rhs)), {}
        raise SymgenError(f"autodiff: no rule for {type(e).__name__}")


def _call_partials(fn: str, args: list[Expr], value: Expr) -> list[Expr]:
    """∂fn/∂argᵢ at ``args`` (``value`` = fn(args))."""
    x = args[0]
    if fn == "sin":
        return [call("cos", x)]
    if fn == "cos":
        return [-call("sin", x)]
    if fn == "tan":
        return [ONE + value * value]
    if fn == "asin":
        return [power(sqrt(ONE - x * x), -1)]
    if fn == "acos":
        return [-power(sqrt(ONE - x * x), -1)]
    if fn == "atan":
        return [power(ONE + x * x, -1)]
    if fn == "atan2":  # atan2(y, x)
        y, x = args
        r2 = power(x * x + y * y, -1)
        return [x * r2, -(y * r2)]
    if fn == "sqrt":
        return [0.5 * power(value, -1)]
    if fn == "fabs":
        return [select(Less(x, ZERO), -ONE, ONE)]
    if fn == "pow" and isinstance(args[1], Num):
        return [args[1] * call("pow", x, Num(args[1].value - 1.0)), ZERO]
    raise SymgenError(f"autodiff: no derivative for {fn} with these arguments")


def _straight_line(program: Program) -> None:
    """Raise :class:`SymgenError` for a program with a :class:`~symgen.ir.solve.Solve`
    (its loops are not replayed)."""
    if program.solves:
        raise SymgenError(f"autodiff: {program.name} solves in place (loops) and cannot be "
                          "replayed; derive it without")


def replay(b: ProgramBuilder, program: Program, values: Mapping[str, Sequence[Expr]],
           tangents: Mapping[str, Sequence[Tangent]] | None = None
           ) -> tuple[dict[str, list[Expr]], dict[str, list[Tangent]]]:
    """Emit ``program`` into ``b`` with its input arrays replaced by ``values`` (one
    expression per element) and, given the ``tangents`` of some inputs (per element, a
    sparse map direction → derivative), the tangents of its outputs. Returns (outputs,
    output tangents), each by output name, flattened row-major."""
    _straight_line(program)
    state = _Replay(b, values, tangents or {})
    for sym, expr in program.assignments:
        value, tangent = state.node(expr)
        state.env[sym] = b.emit(value)
        if tangent:
            state.tan[sym] = tangent
    outputs: dict[str, list[Expr]] = {}
    out_tangents: dict[str, list[Tangent]] = {}
    for spec, exprs in program.outputs:
        pairs = [state.node(e) for e in exprs]
        outputs[spec.name] = [b.emit(v) for v, _ in pairs]
        out_tangents[spec.name] = [t for _, t in pairs]
    return outputs, out_tangents


class _Adjoint:
    """The reverse sweep: adjoint terms of temporaries and input elements, by direction."""

    def __init__(self, b: ProgramBuilder, forward: _Replay) -> None:
        self.b = b
        self.forward = forward
        self.terms: dict[Sym, dict[int, list[Expr]]] = {}

    def value(self, e: Expr) -> Expr:
        return self.b.emit(self.forward.node(e)[0])

    def scaled(self, partial: Expr, adj: Tangent) -> Tangent:
        if partial is ZERO:
            return {}
        out: Tangent = {}
        for d, x in adj.items():
            product = self.b.emit(partial * x)
            if product is not ZERO:
                out[d] = product
        return out

    def back(self, e: Expr, adj: Tangent) -> None:
        """Pass the adjoint ``adj`` of expression ``e`` (of the original program) down to the
        atoms it reads."""
        if not adj or isinstance(e, Num | Less):
            return
        if isinstance(e, Sym):  # a temporary or an input element
            target = self.terms.setdefault(e, {})
            for d, x in adj.items():
                target.setdefault(d, []).append(x)
            return
        if isinstance(e, Add):
            for base, c in e.terms:
                self.back(base, self.scaled(Num(c), adj))
            return
        if isinstance(e, Mul):
            vals = [(self.value(base), n) for base, n in e.factors]
            for i, (v, n) in enumerate(vals):
                others = [(w, m) for j, (w, m) in enumerate(vals) if j != i]
                partial = mul_factors(e.coeff * n, [*others, *([(v, n - 1)] if n != 1 else [])])
                self.back(e.factors[i][0], self.scaled(self.b.emit(partial), adj))
            return
        if isinstance(e, Call):
            args = [self.value(a) for a in e.args]
            partials = _call_partials(e.fn, args, self.b.emit(call(e.fn, *args)))
            for p, a in zip(partials, e.args, strict=True):
                self.back(a, self.scaled(self.b.emit(p), adj))
            return
        if isinstance(e, Select):
            cond, _ = self.forward.node(e.cond)
            if isinstance(cond, Less) and isinstance(cond.lhs, Num) and \
                    isinstance(cond.rhs, Num):  # a decided branch
                self.back(e.then if cond.lhs.value < cond.rhs.value else e.other, adj)
                return
            b = self.b
            self.back(e.then, {d: b.emit(select(cond, x, ZERO))  # type: ignore[arg-type]
                               for d, x in adj.items()})
            self.back(e.other, {d: b.emit(select(cond, ZERO, x))  # type: ignore[arg-type]
                                for d, x in adj.items()})
            return
        raise SymgenError(f"autodiff: no adjoint rule for {type(e).__name__}")

    def total(self, s: Sym) -> Tangent:
        """The adjoint of ``s``: its terms summed (and forgotten)."""
        out: Tangent = {}
        for d, terms in self.terms.pop(s, {}).items():
            value = self.b.emit(esum(terms))
            if value is not ZERO:
                out[d] = value
        return out


def adjoint(b: ProgramBuilder, program: Program, values: Mapping[str, Sequence[Expr]],
            output_seeds: Mapping[str, Sequence[Tangent]]
            ) -> tuple[dict[str, list[Expr]], dict[str, list[Tangent]]]:
    """Reverse mode: emit ``program`` into ``b`` with its inputs replaced by ``values`` and,
    given the adjoint seeds of some outputs (per element, a sparse map direction → weight),
    the adjoints of its inputs: for direction d, Σ over seeded outputs of weight × ∂output/∂input.
    Returns (outputs, input adjoints by input name, flattened row-major)."""
    _straight_line(program)
    forward = _Replay(b, values, {})
    for sym, expr in program.assignments:
        forward.env[sym] = b.emit(forward.node(expr)[0])
    outputs = {spec.name: [b.emit(forward.node(e)[0]) for e in exprs]
               for spec, exprs in program.outputs}
    sweep = _Adjoint(b, forward)
    for spec, exprs in program.outputs:
        for e, seed in zip(exprs, output_seeds.get(spec.name, ()), strict=False):
            sweep.back(e, seed)
    for sym, expr in reversed(program.assignments):
        sweep.back(expr, sweep.total(sym))
    adjoints = {spec.name: [sweep.total(Elem(spec.name, i)) for i in range(spec.size)]
                for spec in program.inputs}
    return outputs, adjoints


def seeds(size: int, offset: int = 0) -> list[Tangent]:
    """The tangents of an input that is its own direction: element i → {offset + i: 1}."""
    return [{offset + i: ONE} for i in range(size)]


def jacobian(tangents: Sequence[Tangent], directions: Sequence[int]) -> list[list[Expr]]:
    """The rows (one per tangent) of the derivatives along ``directions``."""
    return [[t.get(d, ZERO) for d in directions] for t in tangents]


__all__ = ["Tangent", "adjoint", "jacobian", "replay", "seeds"]
