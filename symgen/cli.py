"""The ``symgen`` command line.

Every user error (missing file, invalid model, bad option) ends with exit code 2 and one line
on stderr naming the problem; never a Python traceback.
"""

from __future__ import annotations

import sys

import click

from . import __version__
from .io import load
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


@main.command()
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.option(
    "--floating-base",
    is_flag=True,
    help="Attach the model's root body to the world by a free joint.",
)
def info(model_path: str, floating_base: bool) -> None:
    """Describe MODEL (a .urdf, .yaml or .yml file): bodies, joints and their types, nq/nv,
    frames, loop joints, couplings and runtime parameters."""
    model = load(model_path, floating_base=floating_base)
    click.echo(describe(model))


if __name__ == "__main__":  # pragma: no cover
    main()
