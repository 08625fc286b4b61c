"""C emission: a model's programs as one C99 header and source, through the Jinja2
templates in ``templates/`` (design.md §4).

Every decision is made here: names (every symbol prefixed with the model name), the real
type, statements, documentation and op counts; the templates hold layout only. The output is
reentrant (no globals, no static state, no heap), takes ``const`` inputs and writes its
outputs last, and is deterministic: the banner carries the symgen version and a hash of the
programs and options, never a timestamp, so the same input gives byte-identical files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import jinja2

from . import __version__
from .generate import KernelSet
from .kernels import INPUT_DOCS, KERNELS
from .model import SymgenError
from .printing import CPrinter
from .program import ArraySpec, Program

REALS = ("double", "float")
TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "templates"

OUTPUT_DOCS = {
    "poses": "world pose [R | p] (3x4, row-major) of every body, then every named frame",
    "J": "Jacobian, rows [angular; linear] (6 x nv, row-major)",
    "Jdot_v": "Jdot(q, v)*v: classical acceleration [wdot; pddot] at zero joint acceleration",
    "tau": "joint forces and torques (nv), N and N·m",
    "M": "joint-space mass matrix (nv x nv, row-major)",
    "Minv": "inverse of the mass matrix (nv x nv, row-major)",
    "a": "joint accelerations (nv)",
    "energy": "[kinetic, potential] energy, J",
    "q_next": "configuration q (+) v*dt (nq)",
}


@dataclass(frozen=True)
class CSource:
    """The generated header and source of one model."""

    prefix: str
    header_name: str
    source_name: str
    header: str
    source: str

    def write(self, directory: str | os.PathLike) -> list[Path]:
        """Write both files into ``directory`` (created if needed). Each file is written to a
        temporary name first and renamed, so nothing half-written is ever left."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        umask = os.umask(0)
        os.umask(umask)
        paths = []
        for name, text in ((self.header_name, self.header), (self.source_name, self.source)):
            fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(text)
                os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 is for the temporary only
                os.replace(tmp, out / name)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            paths.append(out / name)
        return paths


#: ASCII spellings of the symbols the kernel documentation uses (the C files are ASCII).
_ASCII = {
    "×": "x", "·": "*", "J̇": "Jdot", "ω̇": "wdot", "p̈": "pddot", "−": "-", "Σ": "sum ",
    "ᵀ": "^T", "⁻¹": "^-1", "τ": "tau", "⊕": "(+)", "θ": "theta", "ω": "w",
}


def ascii_text(text: str) -> str:
    """``text`` with the documentation's symbols spelled in ASCII."""
    for symbol, spelling in _ASCII.items():
        text = text.replace(symbol, spelling)
    if not text.isascii():
        raise SymgenError(f"no ASCII spelling for a character of {text!r}")
    return text


def c_identifier(name: str) -> str:
    """``name`` made a lower-case C identifier."""
    ident = re.sub(r"[^0-9A-Za-z_]", "_", name).lower()
    return ident if ident and not ident[0].isdigit() else f"m_{ident}"


def _environment() -> jinja2.Environment:
    if not TEMPLATE_DIR.is_dir():
        raise SymgenError(f"the C templates are missing (looked in {TEMPLATE_DIR.name}/)")
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def _argument(direction: str, spec: ArraySpec, doc: str) -> dict:
    shape = "" if len(spec.shape) == 1 else " (" + " x ".join(map(str, spec.shape)) + ")"
    return {"direction": direction, "name": spec.name, "size": spec.size,
            "shape_note": shape, "doc": doc}


def _ops_text(program: Program) -> str:
    c = program.op_counts()
    parts = [f"{c[k]} {k}" for k in ("add", "mul", "div", "sqrt", "trig", "other") if c[k]]
    return f"{c['total']} ({', '.join(parts) or 'none'})"


def _function(ks: KernelSet, name: str, prefix: str, printer: CPrinter) -> dict:
    program = ks[name]
    kernel = ks.kernel_of[name]
    summary = KERNELS[kernel].summary if kernel in KERNELS else program.doc
    if name in ks.frame_of:
        summary += f" (frame '{ks.frame_of[name]}', {ks.options.jacobian_reference})"
    if name in ks.choices:
        summary += f" [{ks.choices[name]}]"
    real = f"{prefix}_real"
    inputs = [_argument("in ", s, INPUT_DOCS.get(s.name, s.doc)) for s in program.inputs]
    outputs = [_argument("out", s, OUTPUT_DOCS.get(s.name, s.doc))
               for s in program.output_specs]
    fname = f"{prefix}_{name}"
    params = [f"const {real} {a['name']}[{a['size']}]" for a in inputs]
    params += [f"{real} {a['name']}[{a['size']}]" for a in outputs]
    batch = [f"const {real} *{a['name']}" for a in inputs] + [f"{real} *{a['name']}"
                                                            for a in outputs]
    used: set[str] = set()
    for _, expr in program.assignments:
        used |= {s.name for s in expr.symbols()}
    for _, exprs in program.outputs:
        for e in exprs:
            used |= {s.name for s in e.symbols()}
    used_arrays = {u.split("[")[0] for u in used if "[" in u}
    body = [f"const {real} {sym} = {printer(expr)};" for sym, expr in program.assignments]
    for spec, exprs in program.outputs:
        body += [f"{spec.name}[{i}] = {printer(e)};" for i, e in enumerate(exprs)]
    return {
        "name": fname,
        "summary": ascii_text(summary),
        "arguments": inputs + outputs,
        "ops": _ops_text(program),
        "prototype": f"void {fname}({', '.join(params)})",
        "batch_prototype": f"void {fname}_batch(size_t count, {', '.join(batch)})",
        "unused": [a["name"] for a in inputs if a["name"] not in used_arrays],
        "body": body,
    }


def _conventions(ks: KernelSet) -> list[str]:
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
        qs, vs = m.q_slices[j.name], m.v_slices[j.name]
        lines.append(
            f"  {j.name} ({j.type.value}): q[{qs.start}:{qs.stop}] v[{vs.start}:{vs.stop}]"
        )
    lines.append("Bodies (rows of f_ext and poses): " + ", ".join(m.body_names))
    if m.frame_names:
        lines.append("Frames (poses rows after the bodies): " + ", ".join(m.frame_names))
    if m.parameters:
        lines.append("Runtime parameters (params): " + ", ".join(
            f"{p.name} (default {p.default:g})" for p in m.parameters))
    if ks.notes:
        lines += ["", *ks.notes]
    return lines


def content_hash(ks: KernelSet, prefix: str, real: str) -> str:
    """sha256 over symgen's version, the options and every program, line for line."""
    h = hashlib.sha256()
    h.update(f"symgen {__version__}|{prefix}|{real}|".encode())
    h.update(repr(dataclasses.astuple(ks.options)).encode())
    for name, program in ks.programs.items():
        h.update(name.encode())
        h.update("\n".join(program.lines()).encode())
    return h.hexdigest()


def emit_c(ks: KernelSet, prefix: str | None = None, real: str = "double") -> CSource:
    """C99 header and source for every program of ``ks``."""
    if real not in REALS:
        raise SymgenError(f"real must be one of {', '.join(REALS)}, got {real!r}")
    prefix = c_identifier(prefix or ks.model.name)
    printer = CPrinter(real)
    functions = [_function(ks, name, prefix, printer) for name in ks.programs]
    digest = content_hash(ks, prefix, real)
    banner = (
        f"/* Generated by symgen {__version__} from model '{ks.model.name}' "
        f"({real}). Do not edit.\n"
        f" * Content hash (model, options, programs): sha256:{digest[:32]} */"
    )
    m = ks.model
    sizes = [
        (f"{prefix.upper()}_NQ", m.nq, "length of q"),
        (f"{prefix.upper()}_NV", m.nv, "length of v, a, tau"),
        (f"{prefix.upper()}_NBODIES", m.nbodies, "moving bodies (rows of f_ext)"),
        (f"{prefix.upper()}_NPARAMS", len(m.parameters), "runtime parameters"),
    ]
    header_name, source_name = f"{prefix}.h", f"{prefix}.c"
    env = _environment()
    context = {
        "banner": banner,
        "guard": f"{prefix.upper()}_H",
        "real": real,
        "prefix": prefix,
        "sizes": sizes,
        "conventions": _conventions(ks),
        "functions": functions,
        "header": header_name,
    }
    header = ascii_text(env.get_template("model.h.j2").render(context))
    source = ascii_text(env.get_template("model.c.j2").render(context))
    return CSource(prefix, header_name, source_name, header, source)


__all__ = ["CSource", "OUTPUT_DOCS", "REALS", "c_identifier", "content_hash", "emit_c"]


