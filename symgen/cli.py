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


if __name__ == "__main__":  # pragma: no cover
    main()
