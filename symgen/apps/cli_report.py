"""What ``symgen info`` derives and prints: the whole catalogue of a model with one progress
line per program, and the op-count table with the choices made (variants, partitioning);
the catalogue itself (``symgen kernels``)."""

from __future__ import annotations

import sys

import click

import symgen.registry as registry
from symgen.errors import SymgenError
from symgen.generate import Options, generate
from symgen.kernel_set import KernelSet
from symgen.kernels import KERNELS
from symgen.model import Model

#: Columns of the op-count table and keys of each ``--json`` entry, in this order.
OP_COLUMNS = ("add", "mul", "div", "sqrt", "trig", "other", "total")


def derive_catalogue(model: Model, options: Options, skipped: list[str]) -> KernelSet:
    """Every kernel of the catalogue for ``model``: the default ones, then each other one
    on its own, those that need what the model does not declare (e.g. actuated joints)
    left out with one line in ``skipped``."""
    default = [k for k, spec in KERNELS.items() if spec.default]
    kernel_set = derive_with_progress(model, default, options)
    for name, spec in KERNELS.items():
        if spec.default:
            continue
        if spec.on_request:
            skipped.append(f"{name}: not derived (built from other programs; name it with "
                           "--kernels)")
            continue
        try:
            more = derive_with_progress(model, [name], options)
        except SymgenError as exc:
            skipped.append(f"{name}: not derived ({exc})")
            continue
        kernel_set.programs.update(more.programs)
        kernel_set.kernel_of.update(more.kernel_of)
        kernel_set.frame_of.update(more.frame_of)
        kernel_set.choices.update(more.choices)
        kernel_set.alternatives.update(more.alternatives)
    return kernel_set


def derive_with_progress(model: Model, names: list[str], options: Options) -> KernelSet:
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


def _choice_text(kernel_set: KernelSet, name: str) -> str:
    choice = kernel_set.choices.get(name, "")
    alternatives = kernel_set.alternatives.get(name)
    if not alternatives:
        return choice
    tried = ", ".join(f"{_short_variant(label)} {total}" for label, total in alternatives.items())
    return f"{choice} ({tried})"


def ops_table(kernel_set: KernelSet, counts: dict[str, dict[str, int]]) -> str:
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


def _closing_line(kernel_set: KernelSet) -> str:
    """Which variant each kernel with variants uses (the forward-dynamics method), and where
    the partitioning of each kernel shows when the model has multi-DOF joints."""
    lines = []
    for name, kernel in KERNELS.items():
        if not kernel.variants:
            continue
        what = name.replace("_", "-") + " method"
        if name not in kernel_set.programs:
            lines.append(f"{name}: not derived (not in --kernels)")
            continue
        method = kernel_set.choices.get(name, "").split(", ")[0]
        requested = getattr(kernel_set.options, name, "auto")
        if requested == "auto" and kernel_set.model.coupled:
            lines.append(f"default {what}: {method} (the articulated-body recursion does not "
                         "apply to coupled joints)")
        elif requested == "auto":
            variants = kernel.loop_variants if kernel.loop_variants and \
                kernel_set.model.loop_joints else kernel.variants
            methods = " and ".join(v.removeprefix(f"{name}_") for v in variants)
            lines.append(f"default {what}: {method} (the cheaper of {methods})")
        else:
            lines.append(f"{what}: {method} (--fd-method {requested})")
    text = "; ".join(lines)
    if any(j.nv > 1 for j in kernel_set.model.joints):
        partition = kernel_set.options.partition
        text += (
            f"; multi-DOF joints, --partition {partition}: each kernel's partitioning is in "
            "the choice column"
        )
        if partition == "auto":
            text += " (part = partitioned, unpart = unpartitioned)"
    return text


def kernel_catalogue() -> str:
    """The text of ``symgen kernels``: every registered kernel and its summary, by
    formulation (the default one first, its default kernels marked with ``*``)."""
    kernels = registry.all_kernels()
    width = max(len(name) for name in kernels)
    formulations = dict.fromkeys([registry.DEFAULT_FORMULATION,
                                  *(k.formulation for k in kernels.values())])
    lines = []
    for formulation in formulations:
        lines.append(f"{formulation} formulation:")
        lines += [f"  {'*' if k.default and formulation == registry.DEFAULT_FORMULATION else ' '}"
                  f" {k.name.ljust(width)}  {k.summary}"
                  for k in kernels.values() if k.formulation == formulation]
    lines.append("* generated when --kernels is not given; --kernels A,B,... names any "
                 "(of one formulation)")
    return "\n".join(lines)


__all__ = ["OP_COLUMNS", "derive_catalogue", "derive_with_progress", "kernel_catalogue",
           "ops_table"]
