"""The ``simd`` backend: batch kernels that evaluate W states at once in the lanes of GCC/Clang
vector types (``__attribute__((vector_size))``).

``<prefix>_<name>_simd_batch(count, q, ..., out)`` has the argument layout of the scalar
``<prefix>_<name>_batch`` (array of structures: state k's ``q`` at ``q + k*nq``). Each
iteration gathers W states into structure-of-arrays lane vectors (W x W blocks: W unaligned
vector loads and an in-register transpose, :mod:`symgen.backends.simd.transpose`), runs the
kernel's assignments once on vectors (:class:`SimdPrinter`: every temporary is a vector,
numbers broadcast, a :class:`~symgen.ir.expr.Select` becomes a mask blend) and writes the output
elements straight from registers: W consecutive elements of the W states per transpose and W
vector stores (a symmetric matrix's two equal elements are one register stored twice, no
buffer round trip). The next group's output cache lines are prefetched for writing while the
group computes (output-heavy kernels such as the mass matrix are otherwise bound by the
stores' cache misses at large batches). The remaining ``count % W`` states go through the
scalar kernel ``<prefix>_<name>``.

Exactness: with ``-std=c99`` GCC contracts no multiply-add (``-ffp-contract=off``, which
:mod:`symgen.backends.simd.target` also passes), and a vector ``+ - * /`` is the same IEEE 754
operation per lane as the scalar one, evaluated in the same order (the same C expression
text), so lanes equal the scalar kernel except through ``sin``, ``cos`` and the other
transcendental functions when glibc's libmvec supplies them (within 4 ulp, glibc manual
"Errors in Math Functions"). ``sqrt`` and ``fabs`` always run lane by lane through
``<math.h>`` (exact).

Width W, chosen by the preprocessor from the target (the generated source is the same for
every target; :func:`symgen.backends.simd.target.simd_target` picks the flags): the widest
native vector register, so every vector operation is one instruction and a vector never
travels in memory between calls: AVX-512 8 doubles, AVX/AVX2 4, SSE2 (baseline x86-64),
AArch64 NEON and POWER VSX 2. ``float`` kernels fill the same registers, so W doubles (16, 8,
4). A target with no vector unit for the real type (Cortex-M4, whose FPU is scalar single
precision) or a compiler without vector extensions gets W = 1: ``*_simd_batch`` calls the
scalar ``*_batch`` loop (generic vectors wider than the hardware would only be split back
into scalar operations). ``<PREFIX>_SIMD_WIDTH`` may be predefined to force a width
(1 or a width of the table for the real type, which have block code; GCC vector lengths are
powers of two) and ``emit_simd(width=...)`` bakes one in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from symgen.backends.c99.emit import (
    CFunction,
    CSource,
    banner,
    check_c_text,
    emit_c,
    ops_text,
    partition,
    template_environment,
)
from symgen.backends.c99.printer import CPrinter
from symgen.backends.real import RealType, real_type
from symgen.backends.simd.transpose import block_helpers, is_power_of_two, store_calls
from symgen.cnames import check_prefix, default_prefix
from symgen.errors import SymgenError
from symgen.generate import KernelSet
from symgen.ir import splitting
from symgen.ir.counts import op_counts
from symgen.ir.expr import Call, Expr, Less, Num, Select
from symgen.ir.program import ArraySpec, Assign, Program, Statement, Store
from symgen.registry import Kernel, all_kernels

#: Templates of this backend (layout only; everything is decided here).
TEMPLATES = ("simd.h.j2", "simd.c.j2")
#: Where they are (package data ``symgen/backends/simd/templates/*.j2``).
TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"

#: Width by target, first match wins (preprocessor condition, register width in doubles:
#: lanes of double; a narrower real type has :attr:`RealType.per_double` times as many).
WIDTHS = (
    ("defined(__AVX512F__)", 8),
    ("defined(__AVX__)", 4),
    ("defined(__SSE2__)", 2),
    ("defined(__aarch64__)", 2),
    ("defined(__VSX__)", 2),
)
#: Widths for one real type only, after :data:`WIDTHS` (condition, lanes): 32-bit ARM NEON
#: has float (not double) vector arithmetic.
ONLY_WIDTHS = {"float": (("defined(__ARM_NEON)", 4),)}

#: x86-64 vector function ABI ISA letters of libmvec's symbols (``_ZGV<isa>N<W><args>_<fn>``),
#: their number for the preprocessor, the condition under which the variant is callable, and
#: the register width in doubles (Intel, "Vector Function Application Binary Interface").
MVEC_ISAS = (
    ("e", 4, "defined(__AVX512F__)", 8),
    ("d", 3, "defined(__AVX2__)", 4),
    ("c", 2, "defined(__AVX__)", 4),
    ("b", 1, "defined(__SSE2__)", 2),
)
#: glibc minor version (2.x) whose libmvec first has the function (sqrt, fabs: never used).
MVEC_SINCE = {"sin": 22, "cos": 22, "pow": 22, "tan": 35, "asin": 35, "acos": 35, "atan": 35,
              "atan2": 35}
#: Arity of every function :class:`symgen.ir.expr.Call` may hold.
ARITY = {"sin": 1, "cos": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1, "atan2": 2, "sqrt": 1,
         "fabs": 1, "pow": 2}
#: Local names of the batch function (an argument may not take them).
LOCALS = ("count", "k", "lanes")


class SimdPrinter(CPrinter):
    """C with GCC vector types: an input element is the lane vector of that element in the
    structure-of-arrays copy (``q[3]``: element 3 of W states), temporaries are ``const``
    vectors, a number broadcasts (implicitly as an operand, with ``<prefix>_simd_set1`` where
    a vector is required), a call goes to ``<prefix>_simd_<fn>``, a comparison becomes a mask
    and a select a blend. :attr:`functions` collects the functions printed."""

    pairs_angles = False  # a vector's lanes are states, not angles

    def __init__(self, real: str | RealType = "double", type_name: str | None = None,
                 prefix: str = "m") -> None:
        super().__init__(real, type_name)
        self.vector = f"{prefix}_simd_v"
        self.mask = f"{prefix}_simd_m"
        self.helper = f"{prefix}_simd_"
        self.functions: set[str] = set()
        self.uses_select = False
        self.uses_set1 = False

    def element(self, array: str, index: int) -> str:
        """Lane vector ``index`` of the structure-of-arrays copy of ``array``."""
        return f"{array}[{index}]"

    def define(self, target: str, value: str) -> str:
        return f"const {self.vector} {target} = {value};"

    def store(self, target: str, value: str) -> str:
        return f"{target} = {value};"

    def lanes(self, e: Expr) -> str:
        """``e`` as a vector (a number broadcast to every lane)."""
        if isinstance(e, Num):
            self.uses_set1 = True
            return f"{self.helper}set1({self.number(e.value)})"
        return self.expr(e)

    def statement(self, st: Statement) -> str:
        if isinstance(st, Assign):
            return self.define(self.expr(st.target), self.lanes(st.value))
        if isinstance(st, Store):
            return self.store(self.element(st.array.name, st.index), self.lanes(st.value))
        raise TypeError(f"cannot print {type(st).__name__}")

    def expr(self, e: Expr) -> str:
        if isinstance(e, Call):
            if e.fn not in ARITY:
                raise SymgenError(f"no vector form of the function {e.fn!r}")
            self.functions.add(e.fn)
            return f"{self.helper}{e.fn}({', '.join(self.lanes(a) for a in e.args)})"
        if isinstance(e, Less):
            lhs = self.lanes(e.lhs) if isinstance(e.lhs, Num) else self._factor(e.lhs)
            return f"({self.mask})({lhs} < {self._factor(e.rhs)})"
        if isinstance(e, Select):
            self.uses_select = True
            return (f"{self.helper}select({self.expr(e.cond)}, {self.lanes(e.then)}, "
                    f"{self.lanes(e.other)})")
        return super().expr(e)

    def lanes_parameters(self, inputs: tuple[ArraySpec, ...],
                         outputs: tuple[ArraySpec, ...]) -> str:
        """``const V q[nq], ..., real *out``: the inputs' structure-of-arrays copies and the
        outputs of the group's first state (array of structures)."""
        ins = [f"const {self.vector} {s.name}[{s.size}]" for s in inputs]
        return ", ".join(ins + [f"{self.type_name} *{s.name}" for s in outputs])

    def vector_parameters(self, names: list[str]) -> str:
        """``V x, V y``: the parameters of a vector math helper."""
        return ", ".join(f"{self.vector} {a}" for a in names)


@dataclass(frozen=True)
class _Names:
    """Every C symbol of the simd files beyond the scalar ones."""

    prefix: str

    @property
    def macros(self) -> dict[str, str]:
        up = self.prefix.upper()
        return {"W": f"{up}_SIMD_WIDTH", "MVEC": f"{up}_SIMD_MVEC", "guard": f"{up}_SIMD_H",
                "BLOCKS": f"{up}_SIMD_BLOCKS"}

    def helpers(self) -> list[str]:
        p = self.prefix
        names = ["v", "m", "u", "set1", "select", "shuffle", "gather", "gather_block",
                 "store_block", "store_lanes", "prefetch", "width", *ARITY]
        return [f"{p}_simd_{n}" for n in names]


def _claim_symbols(scalar: CSource, ks: KernelSet, prefix: str) -> None:
    """Raise :class:`SymgenError` when a simd symbol equals a scalar one or another simd
    symbol, or an argument name equals a local name of the batch function."""
    up = prefix.upper()
    taken = {f"{prefix}_real", f"{up}_H", *(f"{up}_{s}" for s, _, _ in ks.sizes)}
    for f in scalar.functions:
        taken |= {f.name, f.batch_name}
    names = _Names(prefix)
    mine = [*names.macros.values(), *names.helpers()]
    for f in scalar.functions:
        mine += [f"{f.name}_simd_batch", f"{f.name}_simd_lanes"]
        for spec in (*f.inputs, *f.outputs):
            if spec.name in LOCALS:
                raise SymgenError(f"{f.name}: argument {spec.name!r} clashes with a local "
                                  "name of the simd batch function")
    seen: set[str] = set()
    for symbol in mine:
        if symbol in taken or symbol in seen:
            raise SymgenError(f"the simd backend's C name {symbol} is already taken")
        seen.add(symbol)


def _function_context(fn: str, printer: SimdPrinter) -> dict:
    """Template context of one vector math helper: libmvec variants and the lane loop."""
    arity = ARITY[fn]
    params = ["x"] if arity == 1 else ["y", "x"] if fn == "atan2" else ["x", "y"]
    real = printer.real_type
    mvec = []
    if fn in MVEC_SINCE:
        glibc = "" if MVEC_SINCE[fn] <= 22 else (
            f" && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= {MVEC_SINCE[fn]})")
        for letter, number, _cond, doubles in MVEC_ISAS:
            width = doubles * real.per_double
            mvec.append({"letter": number, "glibc": glibc,
                         "symbol": f"_ZGV{letter}N{width}{'v' * arity}_{fn}"
                                   f"{real.math_suffix}"})
    return {
        "helper": f"{printer.helper}{fn}",
        "vector_params": printer.vector_parameters(params),
        "first": params[0],
        "c_name": printer.function(fn),
        "lane_args": ", ".join(f"{a}[l]" for a in params),
        "mvec": mvec,
    }


def _scalar_loop_reason(program: Program, kernel: Kernel | None) -> str | None:
    """Why a kernel gets no lane code (None: it gets some): a setup kernel (``Kernel.setup``:
    run once per initial condition, such as an assembly, whose lane code would double the
    build of what is often the model's largest kernel), or one that stores more output
    elements than it computes operations (a constant or sparse matrix such as the natural
    mass matrix or constraint Jacobian: its batch is bound by the stores, which the scalar
    loop issues as fast, and its thousands of constant lanes and transposes cost the
    compiler minutes), one printed in parts (:data:`~symgen.ir.splitting.SPLIT_MIN`), or
    one with a :class:`~symgen.ir.solve.Solve` (loops over its outputs)."""
    if kernel is not None and kernel.setup:
        return "runs once per initial condition (a setup kernel)"
    if program.solves:
        return ("solves for its outputs in place (loops over their columns, "
                "symgen.ir.solve.Solve)")
    if len(program.assignments) >= splitting.SPLIT_MIN:
        return (f"has {len(program.assignments):,} assignments: its scalar function is "
                "printed in parts (symgen.ir.splitting), and lane code of this size would take "
                "the compiler minutes")
    stores = sum(spec.size for spec in program.output_specs)
    if op_counts(program)["total"] < stores:
        return "stores more elements than it computes operations"
    return None


def _kernel_context(f: CFunction, ks: KernelSet, printer: SimdPrinter, ops: str,
                    widths: list[int]) -> dict:
    """Template context of one kernel: the program's assignments on lane vectors, then per
    width the stores of its output elements straight from registers (block transposes)."""
    program = ks[f.program]
    helper = printer.helper
    plain = [{"name": spec.name, "size": spec.size} for spec in (*f.inputs, *f.outputs)]
    batch_prototype = printer.batch_prototype(f"{f.name}_simd_batch", f.inputs, f.outputs)
    reason = _scalar_loop_reason(program, all_kernels().get(ks.kernel_of.get(f.program, "")))
    if reason is not None:
        return {"vector": False, "reason": reason, "scalar_name": f.name,
                "batch_name": f"{f.name}_simd_batch", "batch_prototype": batch_prototype,
                "arguments": plain}
    try:
        body = [printer.statement(Assign(sym, e)) for sym, e in program.assignments]
        outputs = [(spec.name, [printer.lanes(e) for e in exprs])
                   for spec, exprs in program.outputs]
    except SymgenError as exc:
        raise SymgenError(f"kernel {f.program}: {exc}") from None
    assert [(n, len(v)) for n, v in outputs] == [(s.name, s.size) for s in f.outputs]
    stores = [{"width": w, "lines": [line for name, values in outputs for line in store_calls(
        w, name, values, f"{helper}store_block", f"{helper}store_lanes")]} for w in widths]
    read = program.input_arrays_read()
    arguments, offset = [], 0
    for spec in f.inputs:
        arguments.append({"name": spec.name, "size": spec.size, "offset": offset})
        offset += spec.size
    arguments += [{"name": spec.name, "size": spec.size, "offset": None} for spec in f.outputs]
    n_in = len(f.inputs)
    return {
        "vector": True,
        "scalar_name": f.name,
        "batch_name": f"{f.name}_simd_batch",
        "batch_prototype": batch_prototype,
        "lanes_name": f"{f.name}_simd_lanes",
        "lanes_params": printer.lanes_parameters(f.inputs, f.outputs),
        "unused": [s.name for s in f.inputs if s.name not in read],
        "body": body,
        "stores": stores,
        "ops": ops,
        "total": offset,
        "arguments": arguments,
        "inputs": arguments[:n_in],
        "outputs": arguments[n_in:],
    }


def emit_simd(ks: KernelSet, prefix: str | None = None, real: str = "double",
              width: int | None = None, scalar: CSource | None = None,
              units: int = 1) -> CSource:
    """``<prefix>_simd.h`` / ``<prefix>_simd.c``: a ``<prefix>_<name>_simd_batch`` for every
    program of ``ks``, to be compiled with :func:`symgen.backends.simd.target.simd_target`'s
    flags and linked with the scalar ``<prefix>.c`` (:func:`symgen.backends.c99.emit.emit_c`;
    pass it as ``scalar`` when already emitted). ``width`` bakes in a lane count (default:
    chosen by the preprocessor from the target, see the module documentation).

    The returned :class:`CSource` lists one :class:`CFunction` per kernel whose ``name`` and
    ``prototype`` are the scalar kernel's (which the simd batch calls for the remainder) and
    whose ``batch_name`` / ``batch_prototype`` are the simd batch's."""
    real = real_type(real).name  # an unknown name raises
    if width is not None and (not isinstance(width, int) or width < 1):
        raise SymgenError(f"width must be a positive integer, got {width!r}")
    if prefix is None:
        prefix = ks.prefix if ks.prefix is not None else default_prefix(ks.model.name)
    check_prefix(prefix)
    scalar = scalar if scalar is not None else emit_c(ks, prefix, real)
    if scalar.prefix != prefix:
        raise SymgenError(f"the scalar source has prefix {scalar.prefix!r}, not {prefix!r}")
    _claim_symbols(scalar, ks, prefix)
    names = _Names(prefix)
    macros = names.macros
    printer = SimdPrinter(real, f"{prefix}_real", prefix)
    lane = printer.real_type.per_double
    widths = [(cond, doubles * lane) for cond, doubles in WIDTHS]
    widths += list(ONLY_WIDTHS.get(real, ()))
    if width is not None:
        if width > 1 and not is_power_of_two(width):
            raise SymgenError(f"width must be a power of two (GCC vector types), got {width}")
        widths = [("1", width)]
    block_widths = sorted({w for _, w in widths if w > 1})
    kernels, uses = [], []
    for f in scalar.functions:  # each kernel's helpers, for its own translation unit
        printer.functions, printer.uses_select, printer.uses_set1 = set(), False, False
        kernels.append(_kernel_context(f, ks, printer, ops_text(ks[f.program]),
                                       block_widths))
        uses.append((set(printer.functions), printer.uses_select, printer.uses_set1))
    printer.functions = set().union(*(u[0] for u in uses))
    printer.uses_select = any(u[1] for u in uses)
    printer.uses_set1 = any(u[2] for u in uses)
    functions = [_function_context(fn, printer) for fn in sorted(printer.functions)]
    block_names = {"V": printer.vector, "U": f"{prefix}_simd_u",
                   "shuffle": f"{prefix}_simd_shuffle"}
    blocks = [block_helpers(w, block_names) for w in block_widths]
    mvec = [(f"{macros['W']} == {doubles * lane} && {cond}", number)
            for _letter, number, cond, doubles in MVEC_ISAS]
    top = banner(ks, prefix, real, "simd")
    header_name, source_name = f"{prefix}_simd.h", f"{prefix}_simd.c"
    context = {
        "banner": top,
        "guard": macros["guard"],
        "scalar_header": scalar.header_name,
        "header": header_name,
        "conventions": [
            f"Vectorised batch kernels of {scalar.header_name}: each *_simd_batch function",
            "takes the arguments of the matching *_batch function and evaluates W states",
            f"at once ({macros['W']} lanes; the remainder through the scalar kernel).",
            "Compile with -std=c99 (no FMA contraction) and never -ffast-math; define",
            "SYMGEN_LIBMVEC and link -lmvec to use glibc's vector sin/cos.",
        ],
        "width_function": f"{prefix}_simd_width",
        "define_width": True,
        "kernels": kernels,
        "functions": functions,
        "helpers": printer.helpers(),
        "widths": widths,
        "mvec": mvec,
        "uses_select": printer.uses_select,
        "uses_set1": printer.uses_set1,
        "real": real,
        "p": prefix,
        "T": f"{prefix}_real",
        "V": printer.vector,
        "M": printer.mask,
        "U": block_names["U"],
        "shuffle": block_names["shuffle"],
        "blocks": blocks,
        "block_list": ", ".join(str(w) for w in block_widths),
        "mask_int": printer.real_type.mask_int,
        **macros,
    }
    env = template_environment(TEMPLATE_DIR)
    header = check_c_text(env.get_template("simd.h.j2").render(context), header_name)
    template = env.get_template("simd.c.j2")
    source = check_c_text(template.render(context), source_name)
    helper_context = {fn["helper"]: fn for fn in functions}
    unit_sources = []
    sizes = [len(k.get("body", ())) + len(k["stores"][0]["lines"] if k.get("stores") else ())
             for k in kernels]  # statements, as the scalar source's units count them
    groups = partition(sizes, units)
    for i, group in enumerate(groups if len(groups) > 1 else []):
        used = sorted(set().union(*(uses[k][0] for k in group)))
        unit_sources.append(template.render({
            **context, "kernels": [kernels[k] for k in group], "define_width": i == 0,
            "functions": [helper_context[f"{printer.helper}{fn}"] for fn in used],
            "uses_select": any(uses[k][1] for k in group),
            "uses_set1": any(uses[k][2] for k in group)}))
    cfunctions = tuple(
        CFunction(f.name, k["batch_name"], f.program, f.inputs, f.outputs, f.prototype,
                  k["batch_prototype"])
        for f, k in zip(scalar.functions, kernels, strict=True))
    return CSource(prefix, header_name, source_name, header, source,
                   typedef=scalar.typedef, functions=cfunctions, units=tuple(unit_sources))


def simd_declarations(src: CSource) -> str:
    """The simd-only declarations for ``ffi.cdef`` (the width function and every
    ``*_simd_batch``), to add to the scalar source's :meth:`CSource.declarations`."""
    lines = [f"size_t {src.prefix}_simd_width(void);"]
    return "\n".join(lines + [f"{f.batch_prototype};" for f in src.functions])


__all__ = ["SimdPrinter", "TEMPLATES", "emit_simd", "simd_declarations"]
