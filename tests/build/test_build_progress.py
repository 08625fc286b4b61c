"""Progress of compile_kernels' builds on stderr (symgen.build.progress) and through
``symgen verify``: shown once a build takes a few seconds (the threshold lowered here), on
demand, never for a module from the cache; ``progress=False`` is silent."""

from __future__ import annotations

import re
import shutil
from functools import cache

import pytest
from cli_runner import run_split
from paths import EXAMPLES

import symgen
import symgen.build.progress
from symgen.build.compiler import compile_kernels

PENDULUM = EXAMPLES / "double_pendulum.yaml"

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


@cache
def pendulum():
    return symgen.generate(symgen.load(PENDULUM), ["mass_matrix", "inverse_dynamics"])


def counts(text: str) -> list[tuple[int, int]]:
    """(done, total) of each "compiling C" line."""
    return [(int(d), int(t)) for d, t in re.findall(r"compiling C: (\d+)/(\d+) files", text)]


def test_a_build_reports_its_files_and_the_cache_is_silent(kernel_cache, capfd):
    lib = compile_kernels(pendulum(), progress=True, vectorize=None)
    err = capfd.readouterr().err
    (first, total), *_ = counts(err)
    assert first == 0 and total >= 2  # the kernels' C and cffi's wrapper at least
    assert counts(err)[-1] == (total, total)
    assert re.search(rf"^compiled {total} C files in \d+ s$", err, re.M)
    assert "\r" not in err  # stderr is not a terminal
    assert lib.mass_matrix([0.1, 0.2]).shape == (2, 2)
    compile_kernels(pendulum(), progress=True, vectorize=None)
    assert capfd.readouterr().err == ""


def test_progress_false_and_a_quick_default_build_are_silent(kernel_cache, capfd,
                                                             monkeypatch):
    compile_kernels(pendulum(), progress=False, vectorize=None)
    monkeypatch.setattr(symgen.build.progress, "PROGRESS_AFTER", 1e6)
    compile_kernels(pendulum(), real="float", vectorize=None)
    assert capfd.readouterr().err == ""


def test_a_long_default_build_shows_progress(kernel_cache, capfd, monkeypatch):
    monkeypatch.setattr(symgen.build.progress, "PROGRESS_AFTER", 0.0)
    compile_kernels(pendulum(), vectorize=None)
    assert counts(capfd.readouterr().err)


def test_a_failed_build_gives_its_error_and_no_total(kernel_cache, capfd):
    with pytest.raises(symgen.SymgenError, match="compiling .* failed"):
        compile_kernels(pendulum(), flags=("-O2", "-std=c99", "-fno-such-flag"),
                        progress=True, vectorize=None)
    err = capfd.readouterr().err
    assert counts(err) and "compiled" not in err


def test_verify_shows_the_progress_of_a_long_build(kernel_cache, monkeypatch):
    monkeypatch.setattr(symgen.build.progress, "PROGRESS_AFTER", 0.0)
    result = run_split("verify", str(PENDULUM), "--kernels", "mass_matrix", "--states", "2")
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    start = lines.index("compiling (double)")
    assert counts(lines[start + 1])[0][0] == 0  # right after the build starts
    assert any(line.startswith("compiled ") for line in lines[start:])
