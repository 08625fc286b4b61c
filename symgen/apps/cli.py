"""The ``symgen`` command line.

Every user error (missing file, invalid model, bad option) ends with exit code 2 and one line
on stderr naming the problem; an internal error with exit code 3 and one line saying so (the
traceback only with ``--debug`` or ``SYMGEN_DEBUG=1``); never a raw Python traceback.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
import warnings
from typing import NoReturn

import click

import symgen.registry as registry
from symgen.apps.cli_help import LOCK_HELP, NO_COUPLINGS_HELP, STRICT_HELP
from symgen.apps.cli_report import (
    OP_COLUMNS,
    derive_catalogue,
    derive_with_progress,
    kernel_catalogue,
    ops_table,
)
from symgen.apps.cli_simulate import simulate_command
from symgen.apps.summary import describe
from symgen.backends.c99.emit import emit_c
from symgen.backends.microcontrollers import CORES, core
from symgen.backends.real import REALS, real_type
from symgen.build.compiler import compile_kernels
from symgen.errors import SymgenError
from symgen.generate import FD_METHODS, PARTITION_CHOICES, Options
from symgen.io import load
from symgen.version import __version__

#: Exit codes of ``symgen`` (see :func:`main`).
EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 3
EXIT_INTERRUPTED = 130
#: Environment variable that, set to anything but "" or "0", shows internal tracebacks.
DEBUG_ENV = "SYMGEN_DEBUG"


class _Group(click.Group):
    """Turns every exception raised by a command into one line on stderr and an exit code:
    2 for a user error (a SymgenError, or an OSError on a user's file), 3 for an internal
    error (with the traceback only under --debug or SYMGEN_DEBUG=1), 130 on Ctrl-C."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise  # usage errors and --help: click reports them itself
        except SymgenError as exc:
            _fail(ctx, f"error: {_one_line(str(exc))}", EXIT_USER_ERROR)
        except KeyboardInterrupt:
            click.echo("symgen: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:  # e.g. `symgen info robot.urdf | head`: nothing to report
            _silence_stdout()
            sys.exit(1)
        except OSError as exc:
            _fail(ctx, f"error: {_os_error(exc)}", EXIT_USER_ERROR)
        except Exception as exc:
            message = _one_line(str(exc), 300)
            _fail(
                ctx,
                f"internal error: {type(exc).__name__}{': ' if message else ''}{message} "
                f"(run with --debug or {DEBUG_ENV}=1 for the traceback)",
                EXIT_INTERNAL_ERROR,
            )


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit does not fail again (Python's
    documented way of handling a closed pipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (tests)
        pass


def _debug(ctx: click.Context) -> bool:
    return bool(ctx.params.get("debug")) or os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _fail(ctx: click.Context, line: str, code: int) -> NoReturn:
    """Print ``symgen: LINE`` on stderr (after the traceback under --debug) and exit."""
    if _debug(ctx):
        traceback.print_exc(file=sys.stderr)
    click.echo(f"symgen: {line}", err=True)
    sys.exit(code)


def _one_line(text: str, limit: int | None = None) -> str:
    text = " ".join(text.split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def _os_error(exc: OSError) -> str:
    """``FILE: reason`` for an OSError; for a rename (``os.replace(tmp, FILE)``) the file
    named is the destination, the user's, not the temporary one."""
    name = exc.filename2 if exc.filename2 is not None else exc.filename
    reason = exc.strerror or _one_line(str(exc)) or type(exc).__name__
    if isinstance(name, str | bytes | os.PathLike):
        return f"{os.fsdecode(name)}: {reason}"
    return reason


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="symgen")
@click.option(
    "--debug",
    is_flag=True,
    help=f"Show the Python traceback of an internal error (or set {DEBUG_ENV}=1).",
)
def main(debug: bool) -> None:
    """symgen: closed-form C dynamics kernels for multibody systems.

    Exit codes: 0 success; 1 `verify` found a kernel past its tolerance; 2 user error (bad
    model, option or file; one line on stderr naming it); 3 internal error (one line; the
    traceback with --debug or SYMGEN_DEBUG=1); 130 interrupted (Ctrl-C).
    """
    warnings.formatwarning = _warning_line


def _warning_line(message, category, filename, lineno, line=None) -> str:
    """Warnings on stderr as one line each, without Python's source excerpt."""
    return f"warning: {message}\n"


def parse_locks(specs: tuple[str, ...]) -> dict[str, list[float] | None]:
    """``--lock JOINT[=VALUE]`` options as ``{joint: values or None}``; the name ends at the
    last '=' and VALUE is one number or a comma-separated list."""
    out: dict[str, list[float] | None] = {}
    for spec in specs:
        name, sep, text = spec.rpartition("=")
        if not sep:
            name, text = spec, ""
        name = name.strip()
        if not name:
            raise SymgenError(f"--lock {spec!r}: expected JOINT or JOINT=VALUE")
        if name in out:
            raise SymgenError(f"--lock: joint {name!r} is locked twice")
        if not sep:
            out[name] = None
            continue
        try:
            values = [float(x) for x in text.split(",")]
        except ValueError:
            raise SymgenError(
                f"--lock {spec!r}: {text!r} is not a number or a comma-separated list of numbers"
            ) from None
        out[name] = values
    return out


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
    "--loops",
    is_flag=True,
    help="Analyse the closed loops in joint coordinates (Müller 2014): per loop the two "
    "chains, raw constraint rows, motion-space dimensions, the rows kept and the other "
    "possible cuts; in total the coordinates, kept and independent constraints (rank at "
    "several assembled configurations), redundant ones and the DOF.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="With --ops: print only one JSON object {program: {add, mul, div, sqrt, trig, "
    "other, total}} on stdout. With --loops: print the loop analysis as one JSON object "
    "(coordinates, constraints_raw, constraints_kept, constraints_independent, redundant, "
    "residual_redundant, dof, loops, ...).",
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
    metavar="auto|aba|ltdl|embedded|multipliers",
    default=None,
    help="With --ops: method of the forward_dynamics kernel: articulated body (aba), mass "
    "matrix + LtDL solve (ltdl), or the cheaper (auto, the default); for a model with loop "
    "joints, constraint embedding (embedded) or multipliers, also the derivation of "
    "constrained_forward_dynamics.",
)
@click.option(
    "--frame",
    "frames",
    metavar="NAME",
    multiple=True,
    help="With --ops: derive the per-frame kernels for this frame or body only "
    "(repeatable; 'all': every frame; default: the tips, see docs/api.md).",
)
@click.option(
    "--kernels",
    "kernel_list",
    metavar="A,B,...",
    default=None,
    help="With --ops: derive only these kernels (comma-separated catalogue names; "
    "default: all of them).",
)
@click.option("--lock", "locks", metavar="JOINT[=VALUE]", multiple=True, help=LOCK_HELP)
@click.option("--no-couplings", is_flag=True, help=NO_COUPLINGS_HELP)
@click.option("--strict", is_flag=True, help=STRICT_HELP)
@click.option(
    "--graph",
    "graph_path",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also draw the kinematic graph into FILE (.svg, .png or .pdf): bodies, joints by "
    "type, loop joints and their cuts, couplings, the constraint embedding's aggregates, "
    "the default frames (needs matplotlib: pip install 'symgen[graph]').",
)
def info(
    model_path: str,
    floating_base: bool,
    ops: bool,
    natural: bool,
    loops: bool,
    as_json: bool,
    partition: str | None,
    fd_method: str | None,
    frames: tuple[str, ...],
    kernel_list: str | None,
    locks: tuple[str, ...] = (),
    no_couplings: bool = False,
    strict: bool = False,
    graph_path: str | None = None,
) -> None:
    """Describe MODEL (a .urdf, .yaml or .yml file): bodies, joints and their types, nq/nv,
    frames, loop joints, couplings and runtime parameters.

    With --ops, also derive the kernels and print their operation counts, one row per
    program (per-frame kernels give one program per frame, e.g. frame_jacobian_tip),
    with the variant chosen in the last column and, where several were tried, the total
    of each (e.g. "ltdl (aba 99, ltdl 76)"); a last line names the default
    forward-dynamics method. --json prints the counts as one JSON object instead, and
    nothing else on stdout. Progress ("deriving NAME") goes to stderr.

    With --loops, analyse the closed loops instead (docs/loops.md); --json prints that
    analysis as one JSON object.

    With --graph FILE, also draw the model's kinematic graph into FILE ("wrote FILE" on
    stderr; docs/api.md).
    """
    if ops and loops:
        raise SymgenError("--loops and --ops are separate reports: give one of them")
    if not ops:
        given = [
            flag
            for flag, value in (
                ("--json", as_json and not loops),
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
    model = load(model_path, floating_base=floating_base, lock=parse_locks(locks),
                 couplings=not no_couplings, strict=strict)
    _base_hint(model)
    if graph_path is not None:
        from symgen.apps.graph import draw_graph

        click.echo(f"wrote {draw_graph(model, graph_path)}", err=True)
    if loops:
        from symgen.loops import analyse_loops
        from symgen.loops.embedding import describe_embedding

        analysis = analyse_loops(model)
        report, lines = describe_embedding(model, analysis)
        if as_json:
            click.echo(json.dumps({**analysis.as_dict(), "embedding": report}, indent=2))
        else:
            click.echo("\n".join([analysis.text(), *lines]))
        return
    if not ops:
        click.echo(describe(model))
        if natural:
            from symgen.formulations.natural.kernels import describe_natural, natural_model

            click.echo()
            click.echo(describe_natural(natural_model(model)))
        return
    options = Options(
        partition=partition or "auto",
        forward_dynamics=fd_method or "auto",
        frames=_frames_option(model, frames),
    )
    skipped: list[str] = []
    if kernel_list is not None:
        names = [k.strip() for k in kernel_list.split(",") if k.strip()]
        if not names:
            raise SymgenError("--kernels names no kernel")
        kernel_set = derive_with_progress(model, names, options)
    else:
        kernel_set = derive_catalogue(model, options, skipped)
    counts = {
        name: {key: int(value[key]) for key in OP_COLUMNS}
        for name, value in kernel_set.op_counts().items()
    }
    if as_json:
        click.echo(json.dumps(counts, indent=2))
        return
    click.echo(describe(model))
    click.echo()
    for line in skipped:
        click.echo(line)
    click.echo(ops_table(kernel_set, counts))


@main.command("kernels")
def kernels_command() -> None:
    """List the kernel catalogue: every kernel's name and summary, by formulation, the
    ones generated when --kernels is not given marked with *."""
    click.echo(kernel_catalogue())


def _frames_option(model, frames: tuple[str, ...]) -> tuple[str, ...] | None:
    """The frames of ``--frame``: None (the default set, :func:`symgen.generate.default_frames`)
    when not given; ``--frame all`` is every named frame (every body when there is none),
    unless the model has a frame or body called "all"."""
    if not frames:
        return None
    known = set(model.frame_names) | set(model.body_names) | {model.root}
    if tuple(frames) == ("all",) and "all" not in known:
        return tuple(model.frame_names) or tuple(model.body_names)
    return tuple(frames)


def _check_choice(flag: str, value: str | None, allowed: tuple[str, ...]) -> None:
    if value is not None and value not in allowed:
        raise SymgenError(f"{flag} must be one of {', '.join(allowed)}, got {value!r}")


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
                     help="Prefix of every C symbol and the file names: an ASCII C identifier "
                     "starting with a letter, without '__' or a trailing '_' (default: the "
                     "model name made one)."),
        click.option("--partition", metavar="auto|always|never", default=None,
                     help="Split multi-DOF joints into 1-DOF hinges (default auto: the "
                     "cheaper per kernel)."),
        click.option("--fd-method", metavar="auto|aba|ltdl|embedded|multipliers",
                     default=None,
                     help="Method of forward_dynamics (default auto: fewer operations; "
                     "embedded or multipliers for a model with loop joints)."),
        click.option("--frame", "frames", metavar="NAME", multiple=True,
                     help="Frame (or body) of the per-frame kernels; repeatable; 'all' for "
                     "every frame (default: the limb ends, e.g. feet, hands and tool frames; "
                     "symgen info lists them)."),
        click.option("--external-forces", is_flag=True,
                     help="Give inverse and forward dynamics an f_ext input."),
        click.option("--lock", "locks", metavar="JOINT[=VALUE]", multiple=True,
                     help=LOCK_HELP),
        click.option("--no-couplings", is_flag=True, help=NO_COUPLINGS_HELP),
        click.option("--strict", is_flag=True, help=STRICT_HELP),
        click.option("--actuated", metavar="J1,J2,...", default=None,
                     help="Actuated joints of a closed-loop model, for "
                     "constrained_inverse_dynamics (default: the model's actuators, else its "
                     "ground joints when they match the mobility)."),
        click.option("--independent", metavar="J1,J2,...", default=None,
                     help="Joints whose coordinates are the independent coordinates of a "
                     "closed-loop model, for dependent_coordinates and the embedded kernels "
                     "(default: the actuated joints when they determine the motion, else "
                     "chosen by pivoting the loop Jacobian)."),
        click.option("--baumgarte", metavar="ALPHA,BETA", default=None,
                     help="Baumgarte stabilisation of constrained_forward_dynamics, in 1/s: "
                     "G q'' = -G' q' - 2 ALPHA G q' - BETA^2 Phi (default: off)."),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return command


def _names(text: str | None, option: str) -> tuple[str, ...] | None:
    """A comma-separated option as a tuple of its non-empty items (None when not given)."""
    if text is None:
        return None
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    if not items:
        raise SymgenError(f"{option} names nothing")
    return items


def _baumgarte(text: str | None) -> tuple[float, float] | None:
    """``--baumgarte ALPHA,BETA`` as two numbers (None when not given)."""
    items = _names(text, "--baumgarte")
    if items is None:
        return None
    try:
        alpha, beta = (float(x) for x in items)
    except ValueError:
        raise SymgenError(f"--baumgarte {text!r}: expected two numbers ALPHA,BETA") from None
    return alpha, beta


def _prepare(model_path, floating_base, kernel_list, real, params, partition, fd_method,
             frames, external_forces, locks=(), no_couplings=False, actuated=None,
             baumgarte=None, independent=None, strict=False):
    """Load the model and derive its kernels (one progress line per program on stderr)."""
    _check_choice("--real", real, REALS)
    _check_choice("--partition", partition, PARTITION_CHOICES)
    _check_choice("--fd-method", fd_method, FD_METHODS)
    model = load(model_path, floating_base=floating_base, lock=parse_locks(locks),
                 couplings=not no_couplings, strict=strict)
    if params:
        model = model.keep_parameters(list(params))
    names = None
    if kernel_list is not None:
        names = [k.strip() for k in kernel_list.split(",") if k.strip()]
        if not names:
            raise SymgenError("--kernels names no kernel")
    if names and not isinstance(
            registry.formulation(registry.formulation_of(names)).default_options(), Options):
        # a formulation with options of its own (natural coordinates): its defaults
        return derive_with_progress(model, names, None)
    options = Options(
        partition=partition or "auto",
        forward_dynamics=fd_method or "auto",
        frames=_frames_option(model, frames),
        external_forces=external_forces,
        actuated=_names(actuated, "--actuated"),
        independent=_names(independent, "--independent"),
        baumgarte=_baumgarte(baumgarte),
    )
    return derive_with_progress(model, names, options)


@main.command("generate")
@_generation_options
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory for <prefix>.h and <prefix>.c (created if needed).")
@click.option("--simd", is_flag=True,
              help="Also write <prefix>_simd.h and <prefix>_simd.c: batch functions "
              "evaluating several states per vector instruction (compile with the CPU's "
              "flags, e.g. -march=native; on glibc x86-64 add -DSYMGEN_LIBMVEC -lmvec).")
@click.option("--target", default="host", metavar="host|" + "|".join(CORES),
              help="The processor the C is for (default host): with a microcontroller core, "
              "prints its arm-none-eabi-gcc flags, and a note when its FPU does not compute "
              "the --real type (double on a Cortex-M4 runs in software). The C is the same.")
def generate_command(model_path, floating_base, kernel_list, real, params, prefix, partition,
                     fd_method, frames, external_forces, out_dir, simd=False, target="host",
                     locks=(), no_couplings=False, actuated=None, baumgarte=None,
                     independent=None, strict=False) -> None:
    """Generate the C kernels of MODEL into a directory: <prefix>.h (declarations,
    argument sizes, units and conventions) and <prefix>.c, and with --simd the vectorised
    batch functions. Files are written whole or not at all."""
    _check_prefix(prefix)
    mcu = None if target == "host" else core(target)  # an unknown name fails before deriving
    ks = _prepare(model_path, floating_base, kernel_list, real, params, partition, fd_method,
                  frames, external_forces, locks, no_couplings, actuated, baumgarte,
                  independent, strict)
    _base_hint(ks.model)
    _say("emitting C")
    scalar = emit_c(ks, prefix=prefix, real=real)
    paths = scalar.write(out_dir)
    if simd:
        from symgen.backends import emit_simd

        paths += emit_simd(ks, prefix=scalar.prefix, real=real, scalar=scalar).write(out_dir)
    total = sum(c["total"] for c in ks.op_counts().values())
    click.echo(f"wrote {', '.join(str(p) for p in paths)} ({len(ks.programs)} kernels, "
               f"{total} operations)")
    if mcu is not None:
        note = mcu.note(real)
        if note:
            click.echo(note, err=True)
        click.echo(f"build for the {mcu.name} with: arm-none-eabi-gcc {' '.join(mcu.flags)} "
                   "-std=c99 -Os (enable the FPU before the first call: examples/embedded)")


@main.command("verify")
@_generation_options
@click.option("--states", default=20, show_default=True, type=click.IntRange(1, 100000),
              help="Random states to compare on.")
@click.option("--seed", default=0, show_default=True, type=int, help="Random seed.")
def verify_command(model_path, floating_base, kernel_list, real, params, prefix, partition,
                   fd_method, frames, external_forces, states, seed, locks=(),
                   no_couplings=False, actuated=None, baumgarte=None,
                   independent=None, strict=False) -> None:
    """Generate and compile the kernels of MODEL, then compare them on random states with
    symgen's numpy reference, Pinocchio when installed and, for an MJCF model, MuJoCo (and,
    with --real float, the float build with the double one). Prints the worst relative error
    per kernel and peer; exits with code 1 when one exceeds its tolerance (1e-10 for double,
    1e-4 for float vs double). Pinocchio's model is its own reading of the file
    (pinocchio.buildModelFromUrdf, or buildModelFromMJCF where it reads the file as MuJoCo
    does) when MODEL is a URDF or MJCF file with the same joints and no runtime parameters,
    so that it covers symgen's reading and lumping of the file too; else one built from
    symgen's model (the output says which, and why). MuJoCo compiles an MJCF MODEL again and
    gives its mass matrix, inverse and forward dynamics, bias and gravity forces, M⁻¹ and
    energy, its constraints, springs, dampers and actuators off. A peer's failure is
    reported as a skipped check; the verdict counts the performed checks and names what was
    skipped."""
    from symgen.apps.verify import random_states, verify_compiled

    _check_prefix(prefix)
    ks = _prepare(model_path, floating_base, kernel_list, real, params, partition, fd_method,
                  frames, external_forces, locks, no_couplings, actuated, baumgarte,
                  independent, strict)
    _base_hint(ks.model)
    _say("compiling (double)")
    lib = compile_kernels(ks, "double", prefix)
    float_lib = None
    if real_type(real).wider is not None:  # a narrower type: compared with the double build
        _say(f"compiling ({real})")
        float_lib = compile_kernels(ks, real, prefix)
    _say(f"comparing on {states} random states")
    report = verify_compiled(lib, random_states(ks, states, seed), float_lib)
    checks = report.checks
    width = max((len(c.program) for c in checks), default=6)
    if checks:
        click.echo(f"{'kernel'.ljust(width)}  {'peer':<15}  {'max rel. error':>14}  tolerance")
    for c in checks:
        error = "-" if c.skipped is not None else f"{c.error:.2e}"
        click.echo(f"{c.program.ljust(width)}  {c.peer:<15}  {error:>14}  {c.tolerance:.0e}"
                   f"  {c.status}")
    for note in report.notes:
        click.echo(note)
    if report.failed:
        click.echo(report.verdict(), err=True)
        sys.exit(1)
    click.echo(report.verdict())


def _check_prefix(prefix: str | None) -> None:
    """Reject an invalid ``--prefix`` before any work (:func:`symgen.cnames.check_prefix`)."""
    if prefix is not None:
        from symgen.cnames import check_prefix

        check_prefix(prefix)


def _say(line: str) -> None:
    click.echo(line, err=True)


def _base_hint(model) -> None:
    """On stderr, a one-line hint when a fixed-base model looks mobile
    (:func:`symgen.apps.summary.mobile_base_hint`)."""
    from symgen.apps.summary import mobile_base_hint

    hint = mobile_base_hint(model)
    if hint:
        _say(hint)


main.add_command(simulate_command)


if __name__ == "__main__":  # pragma: no cover
    main()
