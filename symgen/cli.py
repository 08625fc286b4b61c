"""The ``symgen`` command line.

Every user error (missing file, invalid model, bad option) ends with exit code 2 and one line
on stderr naming the problem; never a Python traceback.
"""

from __future__ import annotations

import json
import sys

import click

from . import __version__
from .generate import FD_METHODS, PARTITION_CHOICES, Options, generate
from .io import load
from .kernels import KERNELS
from .model import SymgenError
from .summary import describe


class _Group(click.Group):
    """Turns symgen errors raised by any command into one line and exit code 2."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except SymgenError as exc:
            message = " ".join(str(exc).split())
            click.echo(f"symgen: error: {message}", err=True)
            sys.exit(2)
        except OSError as exc:
            click.echo(f"symgen: error: {exc.filename or ''}: {exc.strerror or exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="symgen")
def main() -> None:
    """symgen: closed-form C dynamics kernels for multibody systems."""


#: Columns of the op-count table and keys of each ``--json`` entry, in this order.
OP_COLUMNS = ("add", "mul", "div", "sqrt", "trig", "other", "total")


@main.command()
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.option(
    "--floating-base",
    is_flag=True,
    help="Attach the model's root body to the world by a free joint.",
)
@click.option(
    "--ops",
    is_flag=True,
    help="Derive every catalogue kernel and print a table of operation counts "
    "(add, mul, div, sqrt, trig, other, total) and the variant chosen for each.",
)
@click.option(
    "--natural",
    is_flag=True,
    help="Also build the natural-coordinate model and print its coordinates, constraints, "
    "the Jacobian's sparsity and the count check (coordinates - independent constraints = "
    "DOF).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="With --ops: print only one JSON object {program: {add, mul, div, sqrt, trig, "
    "other, total}} on stdout.",
)
@click.option(
    "--partition",
    metavar="auto|always|never",
    default=None,
    help="With --ops: split multi-DOF joints into 1-DOF hinges (always), not (never), or "
    "keep the cheaper per kernel (auto, the default).",
)
@click.option(
    "--fd-method",
    metavar="auto|aba|ltdl",
    default=None,
    help="With --ops: method of the forward_dynamics kernel: articulated body (aba), mass "
    "matrix + LtDL solve (ltdl), or the cheaper (auto, the default).",
)
@click.option(
    "--frame",
    "frames",
    metavar="NAME",
    multiple=True,
    help="With --ops: derive the per-frame kernels for this frame or body only "
    "(repeatable; default: every named frame, or the leaf bodies).",
)
@click.option(
    "--kernels",
    "kernel_list",
    metavar="A,B,...",
    default=None,
    help="With --ops: derive only these kernels (comma-separated catalogue names; "
    "default: all of them).",
)
def info(
    model_path: str,
    floating_base: bool,
    ops: bool,
    natural: bool,
    as_json: bool,
    partition: str | None,
    fd_method: str | None,
    frames: tuple[str, ...],
    kernel_list: str | None,
) -> None:
    """Describe MODEL (a .urdf, .yaml or .yml file): bodies, joints and their types, nq/nv,
    frames, loop joints, couplings and runtime parameters.

    With --ops, also derive the kernels and print their operation counts, one row per
    program (per-frame kernels give one program per frame, e.g. frame_jacobian_tip),
    with the variant chosen in the last column and, where several were tried, the total
    of each (e.g. "ltdl (aba 99, ltdl 76)"); a last line names the default
    forward-dynamics method. --json prints the counts as one JSON object instead, and
    nothing else on stdout. Progress ("deriving NAME") goes to stderr.
    """
    if not ops:
        given = [
            flag
            for flag, value in (
                ("--json", as_json),
                ("--partition", partition is not None),
                ("--fd-method", fd_method is not None),
                ("--frame", bool(frames)),
                ("--kernels", kernel_list is not None),
            )
            if value
        ]
        if given:
            raise SymgenError(f"{given[0]} only applies with --ops")
    _check_choice("--partition", partition, PARTITION_CHOICES)
    _check_choice("--fd-method", fd_method, FD_METHODS)
    model = load(model_path, floating_base=floating_base)
    if not ops:
        click.echo(describe(model))
        if natural:
            from .formulations.natural.kernels import describe_natural, natural_model

            click.echo()
            click.echo(describe_natural(natural_model(model)))
        return
    options = Options(
        partition=partition or "auto",
        forward_dynamics=fd_method or "auto",
        frames=tuple(frames) if frames else None,
    )
    names = list(KERNELS)
    if kernel_list is not None:
        names = [k.strip() for k in kernel_list.split(",") if k.strip()]
        if not names:
            raise SymgenError("--kernels names no kernel")
    kernel_set = _derive_with_progress(model, names, options)
    counts = {
        name: {key: int(value[key]) for key in OP_COLUMNS}
        for name, value in kernel_set.op_counts().items()
    }
    if as_json:
        click.echo(json.dumps(counts, indent=2))
        return
    click.echo(describe(model))
    click.echo()
    click.echo(_ops_table(kernel_set, counts))


def _check_choice(flag: str, value: str | None, allowed: tuple[str, ...]) -> None:
    if value is not None and value not in allowed:
        raise SymgenError(f"{flag} must be one of {', '.join(allowed)}, got {value!r}")


def _derive_with_progress(model, names: list[str], options):
    """``generate`` with one "deriving NAME" line per program on stderr: plain lines, or
    a single rewritten line when stderr is a terminal."""
    isatty = getattr(sys.stderr, "isatty", None)
    live = bool(isatty and isatty())

    def say(line: str) -> None:
        if live:
            click.echo(f"\r\x1b[K{line}", err=True, nl=False)
        else:
            click.echo(line, err=True)

    try:
        return generate(model, names, options, progress=say)
    finally:
        if live:
            click.echo("\r\x1b[K", err=True, nl=False)


def _short_variant(label: str) -> str:
    return (
        label.replace("unpartitioned", "unpart")
        .replace("partitioned", "part")
        .replace(", ", "/")
    )


def _choice_text(kernel_set, name: str) -> str:
    choice = kernel_set.choices.get(name, "")
    alternatives = kernel_set.alternatives.get(name)
    if not alternatives:
        return choice
    tried = ", ".join(f"{_short_variant(label)} {total}" for label, total in alternatives.items())
    return f"{choice} ({tried})"


def _ops_table(kernel_set, counts: dict[str, dict[str, int]]) -> str:
    """The ``--ops`` table and its closing line."""
    header = ("kernel", *OP_COLUMNS, "choice")
    rows = [
        (name, *(str(c[key]) for key in OP_COLUMNS), _choice_text(kernel_set, name))
        for name, c in counts.items()
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header) - 1)]
    lines = [f"op counts ({len(rows)} programs)"]
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:-1], widths[1:], strict=True)]
        cells.append(row[-1])
        lines.append("  " + "  ".join(cells).rstrip())
    lines.append(_closing_line(kernel_set))
    return "\n".join(lines)


def _closing_line(kernel_set) -> str:
    """Which forward-dynamics method ``forward_dynamics`` uses, and where the partitioning
    of each kernel shows when the model has multi-DOF joints."""
    if "forward_dynamics" not in kernel_set.programs:
        text = "forward_dynamics: not derived (not in --kernels)"
    else:
        method = kernel_set.choices.get("forward_dynamics", "").split(", ")[0]
        requested = kernel_set.options.forward_dynamics
        if requested == "auto":
            text = f"default forward-dynamics method: {method} (the cheaper of aba and ltdl)"
        else:
            text = f"forward-dynamics method: {method} (--fd-method {requested})"
    if any(j.nv > 1 for j in kernel_set.model.joints):
        partition = kernel_set.options.partition
        text += (
            f"; multi-DOF joints, --partition {partition}: each kernel's partitioning is in "
            "the choice column"
        )
        if partition == "auto":
            text += " (part = partitioned, unpart = unpartitioned)"
    return text


# ---------------------------------------------------------------- generate / verify
def _generation_options(command):
    """Options shared by ``generate`` and ``verify``."""
    decorators = [
        click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False)),
        click.option("--floating-base", is_flag=True,
                     help="Attach the model's root body to the world by a free joint."),
        click.option("--kernels", "kernel_list", metavar="A,B,...", default=None,
                     help="Comma-separated kernel names (default: every default kernel; "
                     "see `symgen info MODEL --ops` for the catalogue)."),
        click.option("--real", default="double", metavar="double|float",
                     help="Scalar type of the generated C (default double)."),
        click.option("--param", "params", metavar="NAME", multiple=True,
                     help="Keep this declared parameter a runtime input (repeatable); when "
                     "given, the other parameters are baked in at their defaults. Default: "
                     "every declared parameter stays a runtime input."),
        click.option("--prefix", default=None, metavar="P",
                     help="Prefix of every C symbol and the file names (default: the model "
                     "name as a C identifier)."),
        click.option("--partition", metavar="auto|always|never", default=None,
                     help="Split multi-DOF joints into 1-DOF hinges (default auto: the "
                     "cheaper per kernel)."),
        click.option("--fd-method", metavar="auto|aba|ltdl", default=None,
                     help="Method of forward_dynamics (default auto: fewer operations)."),
        click.option("--frame", "frames", metavar="NAME", multiple=True,
                     help="Frame (or body) of the per-frame kernels; repeatable."),
        click.option("--external-forces", is_flag=True,
                     help="Give inverse and forward dynamics an f_ext input."),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return command


def _prepare(model_path, floating_base, kernel_list, real, params, partition, fd_method,
             frames, external_forces):
    """Load the model and derive its kernels (one progress line per program on stderr)."""
    _check_choice("--real", real, ("double", "float"))
    _check_choice("--partition", partition, PARTITION_CHOICES)
    _check_choice("--fd-method", fd_method, FD_METHODS)
    model = load(model_path, floating_base=floating_base)
    if params:
        model = model.keep_parameters(list(params))
    names = None
    if kernel_list is not None:
        names = [k.strip() for k in kernel_list.split(",") if k.strip()]
        if not names:
            raise SymgenError("--kernels names no kernel")
    options = Options(
        partition=partition or "auto",
        forward_dynamics=fd_method or "auto",
        frames=tuple(frames) if frames else None,
        external_forces=external_forces,
    )
    return _derive_with_progress(model, names, options)


@main.command("generate")
@_generation_options
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory for <prefix>.h and <prefix>.c (created if needed).")
def generate_command(model_path, floating_base, kernel_list, real, params, prefix, partition,
                     fd_method, frames, external_forces, out_dir) -> None:
    """Generate the C kernels of MODEL into a directory: <prefix>.h (declarations,
    argument sizes, units and conventions) and <prefix>.c. Files are written whole or not at
    all."""
    ks = _prepare(model_path, floating_base, kernel_list, real, params, partition, fd_method,
                  frames, external_forces)
    _say("emitting C")
    paths = ks.write(out_dir, real=real, prefix=prefix)
    total = sum(c["total"] for c in ks.op_counts().values())
    click.echo(f"wrote {', '.join(str(p) for p in paths)} ({len(ks.programs)} kernels, "
               f"{total} operations)")


@main.command("verify")
@_generation_options
@click.option("--states", default=20, show_default=True, type=click.IntRange(1, 100000),
              help="Random states to compare on.")
@click.option("--seed", default=0, show_default=True, type=int, help="Random seed.")
def verify_command(model_path, floating_base, kernel_list, real, params, prefix, partition,
                   fd_method, frames, external_forces, states, seed) -> None:
    """Generate and compile the kernels of MODEL, then compare them on random states with
    symgen's numpy reference and, when installed, Pinocchio (and, with --real float, the
    float build with the double one). Prints the worst relative error per kernel and peer;
    exits with code 1 when one exceeds its tolerance (1e-10 for double, 1e-4 for float vs
    double)."""
    from .verify import check_compiled, random_states

    ks = _prepare(model_path, floating_base, kernel_list, real, params, partition, fd_method,
                  frames, external_forces)
    _say("compiling (double)")
    lib = ks.compile("double", prefix)
    float_lib = None
    if real == "float":
        _say("compiling (float)")
        float_lib = ks.compile("float", prefix)
    _say(f"comparing on {states} random states")
    checks = check_compiled(lib, random_states(ks, states, seed), float_lib)
    width = max(len(c.program) for c in checks)
    click.echo(f"{'kernel'.ljust(width)}  {'peer':<15}  {'max rel. error':>14}  tolerance")
    for c in checks:
        mark = "ok" if c.ok else "FAIL"
        click.echo(f"{c.program.ljust(width)}  {c.peer:<15}  {c.error:14.2e}  {c.tolerance:.0e}"
                   f"  {mark}")
    failed = [c for c in checks if not c.ok]
    peers = sorted({c.peer for c in checks})
    if failed:
        click.echo(f"{len(failed)} of {len(checks)} checks FAILED", err=True)
        sys.exit(1)
    click.echo(f"all {len(checks)} checks passed ({', '.join(peers)})")


def _say(line: str) -> None:
    click.echo(line, err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
