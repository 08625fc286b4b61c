"""C emission: a model's programs as one C99 header and source, through the Jinja2
templates in ``symgen/backends/c99/templates/`` (docs/architecture.md).

Every decision is made here: names (every symbol prefixed; model names reach the C only
through :mod:`symgen.cnames`, escaped in comments and made identifiers), the size macros
(:attr:`KernelSet.sizes`), the real type, statements, documentation and op counts; the
templates hold layout only. The output is
reentrant (no globals, no static state, no heap), takes ``const`` inputs and writes its
outputs last, and is deterministic: the banner carries the symgen version and a hash of the
programs and options, never a timestamp, so the same input gives byte-identical files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import jinja2

from symgen.backends.c99.printer import CPrinter
from symgen.backends.real import REALS, real_type
from symgen.cnames import c_comment_text, c_identifier, c_name_text, check_prefix, default_prefix
from symgen.errors import SymgenError
from symgen.generate import KernelSet
from symgen.ir import splitting
from symgen.ir.counts import op_counts
from symgen.ir.expr import Elem
from symgen.ir.printer import program_lines
from symgen.ir.program import ArraySpec, Program
from symgen.model.scalars import scalar_text
from symgen.registry import all_kernels
from symgen.version import __version__

#: The Jinja2 templates, shipped inside the package (package data
#: ``symgen/backends/c99/templates/*.j2``).
TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"



@dataclass(frozen=True)
class CFunction:
    """One emitted kernel: its C name, the name of its batch loop, its arguments (inputs,
    then outputs) and both prototypes as printed (:class:`symgen.backends.c99.printer.CPrinter`)."""

    name: str
    batch_name: str
    program: str
    inputs: tuple[ArraySpec, ...]
    outputs: tuple[ArraySpec, ...]
    prototype: str
    batch_prototype: str


@dataclass(frozen=True)
class CSource:
    """The generated header and source of one model, and the structure they were printed
    from: the real typedef and every function (what a binding such as cffi declares)."""

    prefix: str
    header_name: str
    source_name: str
    header: str
    source: str
    typedef: str = ""
    functions: tuple[CFunction, ...] = ()
    #: Translation units that together define what ``source`` defines (each a complete C
    #: file holding some of the functions), for compiling in parallel
    #: (:mod:`symgen.build.compiler`); empty: compile ``source`` whole.
    units: tuple[str, ...] = ()

    def declarations(self) -> str:
        """The typedef and every prototype, one declaration per line (for ``ffi.cdef``)."""
        lines = [self.typedef] if self.typedef else []
        for f in self.functions:
            lines += [f"{f.prototype};", f"{f.batch_prototype};"]
        return "\n".join(lines)

    def write(self, directory: str | os.PathLike) -> list[Path]:
        """Write both files into ``directory`` (created if needed), together or not at all:
        both are written to temporaries first, then renamed into place
        (:func:`symgen.backends.files.write_files_atomically`). A failure raises ``SymgenError``
        naming the destination file."""
        from symgen.backends.files import write_files_atomically

        return write_files_atomically(
            directory, {self.header_name: self.header, self.source_name: self.source}
        )


#: ASCII spellings of the symbols the kernel documentation uses (the C files are ASCII).
_ASCII = {
    "×": "x", "·": "*", "J̇": "Jdot", "ω̇": "wdot", "p̈": "pddot", "−": "-", "Σ": "sum ",
    "ᵀ": "^T", "⁻¹": "^-1", "τ": "tau", "⊕": "(+)", "θ": "theta", "ω": "w",
}


def ascii_text(text: str) -> str:
    """``text`` with the documentation's symbols spelled in ASCII and made safe for a C
    comment (any other character escaped by :func:`symgen.cnames.c_comment_text`)."""
    for symbol, spelling in _ASCII.items():
        text = text.replace(symbol, spelling)
    return c_comment_text(text)


def template_environment(directory: Path = TEMPLATE_DIR) -> jinja2.Environment:
    """The Jinja2 environment of a backend's templates in ``directory`` (layout only)."""
    if not directory.is_dir():
        raise SymgenError(f"the C templates are missing (looked in {directory})")
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(directory)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def _argument(direction: str, spec: ArraySpec, doc: str) -> dict:
    shape = "" if len(spec.shape) == 1 else " (" + " x ".join(map(str, spec.shape)) + ")"
    return {"direction": direction, "name": spec.name, "size": spec.size,
            "shape_note": shape, "doc": ascii_text(doc)}


def ops_text(program: Program) -> str:
    c = op_counts(program)
    parts = [f"{c[k]} {k}" for k in ("add", "mul", "div", "sqrt", "trig", "other") if c[k]]
    return f"{c['total']} ({', '.join(parts) or 'none'})"


def _function(ks: KernelSet, name: str, prefix: str, printer: CPrinter
              ) -> tuple[CFunction, dict]:
    """The structure of one kernel's C function and its template context."""
    program = ks[name]
    kernel = all_kernels().get(ks.kernel_of[name])
    # the declaration's summary and output docs, unless the program documents itself
    declared = kernel is not None and not kernel.program_docs
    summary = ascii_text(kernel.summary if declared else program.doc)
    output_docs = {o.name: o.doc for o in kernel.outputs} if kernel is not None else {}
    if name in ks.frame_of:
        frame = c_comment_text(ks.frame_of[name]).replace("'", "\\x27")
        summary += f" (frame '{frame}', {ks.options.jacobian_reference})"
    if name in ks.choices:
        summary += f" [{ascii_text(ks.choices[name])}]"
    inputs = [_argument("in ", s, s.doc) for s in program.inputs]
    outputs = [_argument("out", s, output_docs[s.name] if declared else s.doc)
               for s in program.output_specs]
    fname = f"{prefix}_{name}"
    function = CFunction(
        fname, f"{fname}_batch", name, program.inputs, program.output_specs,
        printer.prototype(fname, program.inputs, program.output_specs),
        printer.batch_prototype(f"{fname}_batch", program.inputs, program.output_specs),
    )
    read = program.input_arrays_read()
    try:
        body, parts = _bodies(program, fname, printer)
    except SymgenError as exc:
        raise SymgenError(f"kernel {name}: {exc}") from None
    return function, {
        "name": fname,
        "summary": summary,
        "arguments": inputs + outputs,
        "ops": ops_text(program),
        "prototype": function.prototype,
        "batch_name": function.batch_name,
        "batch_prototype": function.batch_prototype,
        "unused": [] if parts else [a["name"] for a in inputs if a["name"] not in read],
        "body": body,
        "parts": parts,
        "statements": len(body) + sum(len(part["body"]) for part in parts),
    }


def _bodies(program: Program, fname: str, printer: CPrinter) -> tuple[list[str], list[dict]]:
    """The kernel's body and, for a program of :data:`~symgen.ir.splitting.SPLIT_MIN` or more
    assignments, its parts (:mod:`symgen.ir.splitting`): each a function ``<kernel>_part<k>``
    of the kernel's arguments and the work array, which the kernel declares and calls them
    with in order."""
    if len(program.assignments) < splitting.SPLIT_MIN:
        return printer.body(program), []
    split_parts, size = splitting.split(program)
    work = printer.WORK_ARRAY
    names = [spec.name for spec in (*program.inputs, *program.output_specs)]
    parts = []
    for k, (part, lines) in enumerate(zip(split_parts, printer.part_bodies(program,
                                                                          split_parts),
                                          strict=True)):
        used = {e.array for sym, e_ in program.assignments[part.start:part.stop]
                for e in e_.symbols() if isinstance(e, Elem)}
        if k == len(split_parts) - 1:
            used |= {spec.name for spec in program.output_specs}
            used |= {e.array for _, exprs in program.outputs for x in exprs
                     for e in x.symbols() if isinstance(e, Elem)}
        if part.reads or part.exports:
            used.add(work)
        unused = [printer.discard(n) for n in (*names, work) if n not in used]
        parts.append({"prototype": printer.part_prototype(f"{fname}_part{k}", program.inputs,
                                                          program.output_specs),
                      "body": unused + lines})
    body = [printer.work_array(size)]
    body += [printer.call(f"{fname}_part{k}", [*names, work]) for k in range(len(parts))]
    return body, parts


def _conventions(ks: KernelSet) -> list[str]:
    """The header's documentation block: conventions, the model's tree layout when the set
    documents it (:attr:`KernelSet.tree_layout`), and the kernel set's notes. Names pass
    through :func:`c_name_text`, notes through :func:`ascii_text`."""
    if not ks.tree_layout:
        return [
            "Conventions (docs/conventions.md): SI units; matrices row-major.",
            "The *_batch functions apply the kernel to `count` consecutive argument sets",
            "(each argument advances by its own size).",
            *([""] + [ascii_text(line) for line in ks.notes] if ks.notes else []),
        ]
    m = ks.model
    lines = [
        "Conventions (docs/conventions.md): SI units; spatial vectors [angular; linear];",
        "quaternions (x, y, z, w), scalar last; matrices row-major; f_ext[i] is the",
        "[moment; force] on body i in its body frame, moment about the body-frame origin.",
        "The *_batch functions apply the kernel to `count` consecutive argument sets",
        "(each argument advances by its own size).",
        "",
        "Joints (q indices | v indices):",
    ]
    for j in m.joints:
        coupling = m.coupled.get(j.name)
        if coupling is not None:  # no coordinate of its own
            lines.append(f"  {c_name_text(j.name)} ({j.type.value}): coupled, "
                         f"{scalar_text(coupling.ratio)} * {c_name_text(coupling.master)} "
                         f"+ {scalar_text(coupling.offset)}")
            continue
        qs, vs = m.q_slices[j.name], m.v_slices[j.name]
        lines.append(
            f"  {c_name_text(j.name)} ({j.type.value}): q[{qs.start}:{qs.stop}] "
            f"v[{vs.start}:{vs.stop}]"
        )
    lines.append("Bodies (rows of f_ext and poses): "
                 + ", ".join(c_name_text(b) for b in m.body_names))
    if m.frame_names:
        lines.append("Frames (poses rows after the bodies): "
                     + ", ".join(c_name_text(f) for f in m.frame_names))
    if m.parameters:
        lines.append("Runtime parameters (params): " + ", ".join(
            f"{c_name_text(p.name)} (default {p.default:g})" for p in m.parameters))
    if ks.notes:
        lines += ["", *(ascii_text(line) for line in ks.notes)]
    return lines


def content_hash(ks: KernelSet, prefix: str, real: str) -> str:
    """sha256 over symgen's version, the options and every program, line for line."""
    h = hashlib.sha256()
    h.update(f"symgen {__version__}|{prefix}|{real}|".encode())
    h.update(repr(dataclasses.astuple(ks.options)).encode())
    for name, program in ks.programs.items():
        h.update(name.encode())
        h.update("\n".join(program_lines(program)).encode())
    return h.hexdigest()


def _check_symbols(prefix: str, ks: KernelSet, sizes: list[tuple[str, int, str]]) -> str:
    """The include guard, after checking that every C symbol of the header is a distinct
    identifier: a clash raises :class:`SymgenError` naming both owners."""
    guard = f"{prefix.upper()}_H"
    owners: dict[str, str] = {f"{prefix}_real": "the real typedef", guard: "the include guard"}

    def claim(symbol: str, owner: str) -> None:
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", symbol) or "__" in symbol:
            raise SymgenError(f"{owner}: {symbol!r} is not a valid C identifier")
        if symbol in owners:
            raise SymgenError(f"{owner} and {owners[symbol]} both get the C name {symbol}")
        owners[symbol] = owner

    for suffix, _value, _doc in sizes:
        claim(f"{prefix.upper()}_{suffix}", f"size macro {suffix}")
    for name in ks.programs:
        owner = f"kernel {name}" + (f" (frame {ks.frame_of[name]!r})" if name in ks.frame_of
                                    else "")
        claim(f"{prefix}_{name}", owner)
        claim(f"{prefix}_{name}_batch", f"the batch function of {owner}")
        program = ks.programs[name]
        if len(program.assignments) >= splitting.SPLIT_MIN:
            for k in range(splitting.part_count(program)):
                claim(f"{prefix}_{name}_part{k}", f"part {k} of {owner}")
    return guard


def check_c_text(text: str, what: str) -> str:
    """The last line of defence: generated C is printable ASCII (tabs allowed) with no
    trigraph and no backslash-newline."""
    for number, line in enumerate(text.splitlines(), start=1):
        bad = next((ch for ch in line if not (" " <= ch <= "~" or ch == "\t")), None)
        if bad is not None or "??" in line or line.endswith("\\"):
            detail = f"{bad!r} found" if bad is not None else repr(line[-40:])
            raise SymgenError(f"internal error: line {number} of the generated {what} is not "
                              f"safe C text ({detail})")
    return text


def banner(ks: KernelSet, prefix: str, real: str, backend: str | None = None) -> str:
    """The first comment of every generated file: symgen's version, the backend (when not
    the C99 one), the model, the real type and the content hash (:func:`content_hash`)."""
    digest = content_hash(ks, prefix, real)
    model_name = c_comment_text(ks.model.name).replace("'", "\\x27")
    which = f" (backend {backend})" if backend else ""
    return (
        f"/* Generated by symgen {__version__}{which} from model '{model_name}' "
        f"({real}). Do not edit.\n"
        f" * Content hash (model, options, programs): sha256:{digest[:32]} */"
    )


#: Statements below which splitting a source into more translation units costs more compiler
#: start-ups than it saves (a unit holds at least this many, unless one function is alone).
MIN_UNIT_STATEMENTS = 2000


def partition(sizes: Sequence[int], count: int) -> list[list[int]]:
    """Indices of ``sizes`` (statements per function) in at most ``count`` groups of similar
    total size, each of about :data:`MIN_UNIT_STATEMENTS` or more (longest processing time
    first: each item, largest first, joins the lightest group); each group in increasing
    order, empty groups dropped."""
    count = min(count, len(sizes), max(sum(sizes) // MIN_UNIT_STATEMENTS, 1))
    groups: list[list[int]] = [[] for _ in range(max(count, 1))]
    load = [0] * len(groups)
    for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        lightest = load.index(min(load))
        groups[lightest].append(i)
        load[lightest] += sizes[i]
    return [sorted(g) for g in groups if g]


def write_c(ks: KernelSet, directory: str | Path, real: str = "double",
            prefix: str | None = None) -> list[Path]:
    """Write ``<prefix>.h`` and ``<prefix>.c`` of ``ks`` (:func:`emit_c`) into ``directory``,
    together or not at all; returns the paths."""
    return emit_c(ks, prefix=prefix, real=real).write(directory)


def emit_c(ks: KernelSet, prefix: str | None = None, real: str = "double",
           units: int = 1) -> CSource:
    """C99 header and source for every program of ``ks``; with ``units`` > 1, also the
    functions in at most that many translation units of similar size
    (:attr:`CSource.units`, to compile in parallel).

    ``prefix`` (default: ``ks.prefix``, else :func:`symgen.cnames.default_prefix` of the
    model name) must be a valid prefix (:func:`symgen.cnames.check_prefix`); it is used as
    given, never rewritten.
    """
    real = real_type(real).name  # an unknown name raises
    if prefix is None:
        prefix = ks.prefix if ks.prefix is not None else default_prefix(ks.model.name)
    check_prefix(prefix)
    sizes = [(f"{prefix.upper()}_{suffix}", value, ascii_text(doc))
             for suffix, value, doc in ks.sizes]
    guard = _check_symbols(prefix, ks, ks.sizes)
    printer = CPrinter(real, f"{prefix}_real")
    emitted = [_function(ks, name, prefix, printer) for name in ks.programs]
    functions = [context for _, context in emitted]
    header_name, source_name = f"{prefix}.h", f"{prefix}.c"
    env = template_environment()
    context = {
        "banner": banner(ks, prefix, real),
        "guard": guard,
        "typedef": printer.typedef(),
        "prefix": prefix,
        "sizes": sizes,
        "conventions": _conventions(ks),
        "functions": functions,
        "header": header_name,
        "helpers": printer.helpers(),
    }
    header = check_c_text(env.get_template("model.h.j2").render(context), header_name)
    template = env.get_template("model.c.j2")
    source = check_c_text(template.render(context), source_name)
    groups = partition([f["statements"] for f in functions], units)
    groups = groups if len(groups) > 1 else []
    unit_sources = tuple(template.render({**context, "functions": [functions[i] for i in g]})
                         for g in groups)
    return CSource(prefix, header_name, source_name, header, source,
                   typedef=printer.typedef(),
                   functions=tuple(function for function, _ in emitted), units=unit_sources)


__all__ = [
    "MIN_UNIT_STATEMENTS",
    "REALS",
    "CFunction",
    "CSource",
    "banner",
    "c_identifier",
    "check_c_text",
    "content_hash",
    "emit_c",
    "ops_text",
    "partition",
    "template_environment",
]
