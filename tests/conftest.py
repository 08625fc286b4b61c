"""Shared fixtures and the test tiers.

The tests are grouped by what they check, one directory per tier; each test gets the marker
of its tier, so that ``pytest -m unit`` (or ``kernels``, ``peers``, ``build``, ``embedded``,
``docs``) runs one tier:

- ``unit``: unit tests only, one piece at a time, in well under a minute: the model readers
  and validation, the IR, the spatial types, the joint table, the numpy reference's
  invariants (no fuzz runs, subprocesses, robot sweeps or compilation);
- ``kernels``: generated programs against the reference and each other, natural coordinates,
  the committed C in ``generated/``, generation's determinism across processes;
- ``peers``: against Pinocchio, and the URDF reader over example-robot-data's robots (not
  collected when PyPI ``pin`` is missing);
- ``build``: C emission, compilation, the numpy wrappers, SIMD batches, the command line,
  the fuzz run of the readers through ``generate`` and ``emit_c``;
- ``embedded``: the kernels built bare-metal and run on qemu's Cortex-M4F and Cortex-M7, and
  the firmware example (skipped without the Arm cross compiler, newlib or qemu);
- ``docs``: the README, the docs' examples, the example scripts, lint, the benchmark smoke
  test.

The ``slow`` marker (any tier) keeps a test out of the default run; ``pytest -m slow`` runs
those.
"""

from __future__ import annotations

import gc
import importlib.util
from pathlib import Path

import pytest

TIERS = ("unit", "kernels", "peers", "build", "embedded", "docs")
HAVE_PINOCCHIO = importlib.util.find_spec("pinocchio") is not None

#: Without Pinocchio the peer tier is not collected (its modules import it).
collect_ignore_glob = [] if HAVE_PINOCCHIO else ["peers/*"]


def pytest_configure(config: pytest.Config) -> None:
    for tier in TIERS:
        config.addinivalue_line("markers", f"{tier}: the {tier} tier (tests/{tier}/)")


def pytest_report_header(config: pytest.Config) -> str | None:
    if not HAVE_PINOCCHIO:
        return "pinocchio is not installed: the peer tier (tests/peers) is skipped"
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).resolve().parent
    for item in items:
        try:
            tier = Path(item.fspath).resolve().relative_to(here).parts[0]
        except ValueError:
            continue
        if tier in TIERS:
            item.add_marker(getattr(pytest.mark, tier))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove hypothesis' garbage-collection timer (``gc.callbacks``) once a session's tests
    are done: when pytest-xdist stops a worker it interrupts the worker's main thread, and a
    KeyboardInterrupt landing in that callback was printed as an "Exception ignored"
    traceback after a passing run."""
    gc.callbacks[:] = [callback for callback in gc.callbacks
                       if not getattr(callback, "__module__", "").startswith("hypothesis.")]


@pytest.fixture
def kernel_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private compiled-kernel cache for one test (``SYMGEN_CACHE_DIR``)."""
    path = tmp_path / "cache"
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(path))
    return path


@pytest.fixture(scope="session")
def panda_model():
    """The Franka Panda of example-robot-data, loaded once per session."""
    import symgen
    from symgen.io.robots import robot_urdf

    return symgen.load(robot_urdf("panda"))
