"""Concurrent builds (issue 11, item 6): two threads, and four processes, compiling different
and identical models into one fresh cache at once all succeed, give kernels that agree with
symgen.reference, leave one cache entry per distinct source and no build directory, and never
change the working directory (not even for a moment, as cffi's ``ffi.compile`` would)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from concurrent_models import FLAGS, assert_matches_reference, kernel_set
from paths import TESTS as TESTS_DIR

from symgen.build.compiler import compile_kernels

TESTS = TESTS_DIR


def cache_entries(cache_root: Path) -> list[str]:
    return sorted(p.name for p in cache_root.iterdir() if not p.name.startswith("."))


def leftovers(cache_root: Path) -> list[str]:
    return [p.name for p in cache_root.iterdir() if p.name.startswith(".")]


class CwdWatch:
    """Polls ``os.getcwd()`` from its own thread while the builds run, recording any value
    other than the starting one (a chdir in another thread is visible to every thread)."""

    def __init__(self) -> None:
        self.start = os.getcwd()
        self.seen: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                cwd = os.getcwd()
            except OSError as exc:  # a deleted working directory
                cwd = f"<{exc}>"
            if cwd != self.start:
                self.seen.add(cwd)
            time.sleep(0.0005)

    def __enter__(self) -> CwdWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def compile_in_threads(names: list[str]) -> list:
    """Compile ``names`` (kernel sets generated beforehand) in one thread each, released
    together by a barrier; returns the compiled kernels, raising the first failure."""
    sets = [kernel_set(n) for n in names]
    barrier = threading.Barrier(len(sets))
    results: list = [None] * len(sets)

    def work(i: int) -> None:
        barrier.wait()
        try:
            results[i] = compile_kernels(sets[i], flags=FLAGS)
        except BaseException as exc:  # reported by the main thread
            results[i] = exc

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(sets))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failures = [r for r in results if isinstance(r, BaseException)]
    assert not failures, failures
    return results


@pytest.mark.parametrize("names", [["double_pendulum", "puma560"],
                                   ["puma560", "puma560"]], ids=["different", "identical"])
def test_two_threads_compile_at_once(names, tmp_path, monkeypatch):
    cache_root = tmp_path / "cache"
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(cache_root))
    for n in names:
        kernel_set(n)  # derive before the race, so that the threads race on the build only
    with CwdWatch() as watch:
        libs = compile_in_threads(names)
    assert watch.seen == set(), "the working directory changed during the builds"
    assert os.getcwd() == watch.start
    for lib in libs:
        assert_matches_reference(lib)
    assert len(cache_entries(cache_root)) == len(set(names))
    assert leftovers(cache_root) == []


PROCESS_SCRIPT = """
import os, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
import concurrent_models as t
from symgen.build.compiler import compile_kernels
name, sync = sys.argv[1], Path(sys.argv[2])
ks = t.kernel_set(name)
(sync / f"ready-{os.getpid()}").touch()
while not (sync / "go").exists():
    time.sleep(0.01)
cwd = os.getcwd()
lib = compile_kernels(ks, flags=t.FLAGS)
assert os.getcwd() == cwd, os.getcwd()
t.assert_matches_reference(lib)
print("ok", name)
"""


def test_four_processes_compile_at_once(tmp_path):
    """Two processes build the same double pendulum, two others a Puma 560 and a 2-link
    chain; they start compiling together (all generated, then released by a file)."""
    cache_root, sync = tmp_path / "cache", tmp_path / "sync"
    sync.mkdir()
    names = ["double_pendulum", "double_pendulum", "puma560", "chain2"]
    env = dict(os.environ, SYMGEN_CACHE_DIR=str(cache_root))
    procs = [subprocess.Popen([sys.executable, "-c", PROCESS_SCRIPT, n, str(sync),
                               str(TESTS)], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in names]
    deadline = time.monotonic() + 240
    while len(list(sync.glob("ready-*"))) < len(procs) and time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break
        time.sleep(0.02)
    (sync / "go").touch()
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, outputs
    assert sorted(out.strip() for out, _ in outputs) == sorted(f"ok {n}" for n in names)
    assert len(cache_entries(cache_root)) == 3
    assert leftovers(cache_root) == []
