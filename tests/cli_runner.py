"""Invoking the ``symgen`` command line in-process from the tests."""

from __future__ import annotations

from click.testing import CliRunner

from symgen.apps.cli import main


def run(*args: str):
    """Invoke with stdout and stderr mixed (``result.output``)."""
    return CliRunner().invoke(main, list(args))


def run_split(*args: str):
    """Invoke with stdout and stderr kept apart (``result.stdout``, ``result.stderr``)."""
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()  # click >= 8.2 always records stderr separately
    return runner.invoke(main, list(args))
