"""The built wheel works without the source tree (issue 11, "the wheel must work").

Builds the wheel from a copy of the package (so the build leaves nothing in the checkout),
installs it without ``-e`` into a fresh virtual environment (no system site-packages, so the
editable checkout cannot shadow it; the dependencies come from the package index or pip's
cache, and Pinocchio is absent), then, from a directory outside the repository, generates
the Panda's C, compiles it with the strict flags, and runs ``symgen verify`` (cffi build,
comparison with symgen's numpy reference).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Werror"]
KERNELS = "mass_matrix,inverse_dynamics,forward_dynamics,frame_jacobian"


def _run(args, cwd, env, timeout=900):
    run = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=timeout)
    assert run.returncode == 0, f"{args}: {run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    return run


@pytest.mark.slow
def test_wheel_installed_in_a_fresh_venv_generates_compiles_and_verifies_panda(tmp_path):
    from symgen.io.robots import robot_urdf

    panda = robot_urdf("panda")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["SYMGEN_CACHE_DIR"] = str(tmp_path / "cache")
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "symgen", src / "symgen",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
    _run([sys.executable, "-m", "pip", "wheel", src, "--no-deps", "-w", tmp_path / "dist"],
         tmp_path, env)
    wheel = next((tmp_path / "dist").glob("symgen-*.whl"))

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], tmp_path, env)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    _run([bindir / "python", "-m", "pip", "install", wheel], tmp_path, env)

    work = tmp_path / "work"  # outside the repository
    work.mkdir()
    where = _run([bindir / "python", "-c", "import symgen; print(symgen.__file__)"], work, env)
    assert Path(where.stdout.strip()).is_relative_to(venv)
    typed = _run([bindir / "python", "-c", "import pathlib, symgen; print(pathlib.Path("
                  "symgen.__file__).with_name('py.typed').is_file())"], work, env)
    assert typed.stdout.strip() == "True"  # PEP 561: the type hints ship

    _run([bindir / "symgen", "generate", panda, "-o", "out", "--kernels", KERNELS], work, env)
    assert sorted(p.name for p in (work / "out").iterdir()) == ["panda.c", "panda.h"]
    _run(["gcc", *STRICT, "-c", work / "out" / "panda.c", "-o", work / "panda.o"], work, env)

    verify = _run([bindir / "symgen", "verify", panda, "--kernels", KERNELS, "--states", "10"],
                  work, env)
    lines = verify.stdout.splitlines()
    checked = [line for line in lines if " reference " in line]
    assert len(checked) == 4 and all(line.endswith("ok") for line in checked), verify.stdout
    assert "passed" in lines[-1], verify.stdout
