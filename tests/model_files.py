"""Helpers for tests that write small model files and check the lines errors cite."""

from __future__ import annotations

import textwrap
from pathlib import Path

#: A one-body YAML model (one revolute joint) that tests edit into the case they check.
BASE = """
name: m
bodies:
  - name: link
    mass: 1
    inertia: [0.1, 0.1, 0.1]
joints:
  - name: j
    type: revolute
    parent: ground
    child: link
"""


def write(tmp_path: Path, text: str, name: str = "model.yaml") -> Path:
    """Write dedented ``text`` to ``tmp_path / name`` and return the path."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def line_of(path: Path, needle: str) -> int:
    """1-based number of the first line of ``path`` containing ``needle``."""
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        if needle in text:
            return number
    raise AssertionError(f"{needle!r} not in {path}")
