"""The code stays ruff-clean (rules in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from paths import ROOT


def test_ruff_check_is_clean():
    if (
        shutil.which("ruff") is None
        and subprocess.run(
            [sys.executable, "-m", "ruff", "--version"], capture_output=True
        ).returncode
    ):
        pytest.skip("ruff is not installed (it comes with the 'test' extra)")
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--quiet", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
