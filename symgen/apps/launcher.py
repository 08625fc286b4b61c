"""The ``symgen`` console script: ``symgen --version`` answers without importing the
pipeline (sympy, the kernel catalogues); every other command runs :func:`symgen.apps.cli.main`."""

from __future__ import annotations

import sys

from symgen.version import __version__


def main() -> None:
    """Entry point of the ``symgen`` command."""
    if sys.argv[1:] == ["--version"]:
        print(f"symgen, version {__version__}")
        return
    from symgen.apps.cli import main as cli_main

    cli_main()


if __name__ == "__main__":  # pragma: no cover
    main()
