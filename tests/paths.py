"""Paths of the repository the tests read (the examples, the committed C, the docs)."""

from __future__ import annotations

from pathlib import Path

#: The repository root.
ROOT = Path(__file__).resolve().parent.parent
#: The example models.
EXAMPLES = ROOT / "examples" / "models"
#: The shared test helpers (random models, kernel checks, ...).
TESTS = ROOT / "tests"
