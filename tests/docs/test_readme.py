"""README promises: its test command is the one CI runs, and its main command's script runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from paths import ROOT


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    quick_start = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", quick_start)


def test_quick_start_has_exactly_two_commands():
    commands = readme_commands()
    assert len(commands) == 2
    assert "pip install" in commands[0] and "examples/" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert readme_commands()[1] in ci


def test_main_job_script_runs_and_passes(tmp_path):
    script = readme_commands()[0].split("&&")[-1].split()[-1]
    env = dict(os.environ, SYMGEN_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run(
        [sys.executable, str(ROOT / script), "--states", "5", "--out", str(tmp_path / "c")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "passed" in result.stdout


def test_python_usage_examples_run(monkeypatch, tmp_path):
    """Every ```python block of the README, run in order in one namespace."""
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path / "cache"))
    text = (ROOT / "README.md").read_text()
    snippets = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(snippets) >= 2
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    exec(compile("\n".join(snippets), "README.md", "exec"), namespace)
    assert abs(namespace["qdd"]).max() < 1e-9  # gravity compensation: no acceleration
    assert namespace["ks"].op_counts()["forward_dynamics"]["total"] > 0
