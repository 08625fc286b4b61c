"""Regenerate the committed C kernels of the example models in ``generated/``.

    python generated/regenerate.py [--out DIR]

Writes ``<model>.h`` and ``<model>.c`` (double, default options, every default kernel) for
each model of :data:`MODELS` into DIR (default: this folder).
``tests/kernels/test_generated.py`` fails when a committed file differs from a fresh
generation, so run this after any change that alters the generated code, and commit the
result.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import symgen
from symgen.io.robots import robot_urdf

ROOT = Path(__file__).resolve().parent.parent

#: prefix -> how to load the model
MODELS = {
    "panda": lambda: symgen.load(robot_urdf("panda")),
    "double_pendulum": lambda: symgen.load(ROOT / "examples" / "models" / "double_pendulum.yaml"),
    "puma560": lambda: symgen.load(ROOT / "examples" / "models" / "puma560.yaml"),
}


def regenerate(out: Path) -> list[Path]:
    """Write every model's files into ``out``; returns the paths written."""
    paths: list[Path] = []
    for prefix, load in MODELS.items():
        paths += symgen.write_c(symgen.generate(load()), out, prefix=prefix)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    for path in regenerate(args.out):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
