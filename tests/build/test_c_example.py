"""``examples/c``: the generated C on its own. ``main.c`` built against kernels from
``symgen generate`` with the example's Makefile and with its CMakeLists.txt, run, its checks
passing, and its printed inverse dynamics, mass matrix and forward dynamics equal to symgen's
numpy reference at the printed state (an independent check of the C path)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_runner import run_split
from paths import EXAMPLES, ROOT

import symgen
from symgen import reference as ref

EXAMPLE = ROOT / "examples" / "c"
MODEL = EXAMPLES / "puma560.yaml"
FILES = ("main.c", "Makefile", "CMakeLists.txt")

needs_cc = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                              reason="no C compiler (cc or gcc) is installed")


def _copy_example(dest: Path) -> Path:
    dest.mkdir(parents=True)
    for name in FILES:
        shutil.copy(EXAMPLE / name, dest / name)
    return dest


def _generate(out: Path) -> None:
    """The README's step 1: ``symgen generate ../models/puma560.yaml -o generated_c``."""
    result = run_split("generate", str(MODEL), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["puma560.c", "puma560.h"]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS")}
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def _vector(lines: list[str], name: str) -> np.ndarray:
    prefix = f"{name} ="
    found = [line for line in lines if line.startswith(prefix)]
    assert len(found) == 1, (name, lines)
    return np.array([float(x) for x in found[0][len(prefix):].split()])


def _check_output(stdout: str) -> None:
    """The program's checks passed, and its values are the reference's at its state."""
    lines = stdout.splitlines()
    assert lines[0] == "kernels: puma560 (nq = 6, nv = 6)"
    assert any(line.startswith("check ID(FD(tau)) = tau: ok") for line in lines), stdout
    assert any(line.startswith("check M = M^T: ok") for line in lines), stdout
    assert lines[-1] == "all checks passed"
    q, v, a, tau = (_vector(lines, n) for n in ("q", "v", "a", "tau"))
    M = np.array([[float(x) for x in line.split("=")[1].split()]
                  for line in lines if line.startswith("  row =")])
    model = symgen.load(MODEL)
    assert M.shape == (model.nv, model.nv)

    def close(got, want):
        scale = max(1.0, float(np.max(np.abs(want))))
        assert np.max(np.abs(got - want)) <= 1e-9 * scale, (got, want)

    close(_vector(lines, "inverse_dynamics"), ref.inverse_dynamics(model, q, v, a))
    close(M, ref.mass_matrix(model, q))
    close(_vector(lines, "forward_dynamics"), ref.forward_dynamics(model, q, v, tau))


def _symgen_command() -> str | None:
    """The ``symgen`` script next to this interpreter (the venv's), else the one on PATH."""
    script = Path(sys.executable).with_name("symgen")
    return str(script) if script.exists() else shutil.which("symgen")


@needs_cc
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_generates_builds_and_runs(tmp_path):
    """``make`` runs ``symgen generate`` when the kernels are missing, then builds; the
    program's checks pass and its values match the reference."""
    work = _copy_example(tmp_path / "c")
    symgen_cmd = _symgen_command()
    if symgen_cmd is None:  # the generation step in-process instead
        _generate(work / "generated_c")
        symgen_cmd = "false"  # make must not need it
    built = _run(["make", f"SYMGEN={symgen_cmd}", f"SYMGEN_MODEL={MODEL}"], work)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (work / "generated_c" / "puma560.h").exists()
    ran = _run([str(work / "example")], work)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    _check_output(ran.stdout)
    # up to date: a second make neither generates nor compiles
    again = _run(["make", "-q", "example", "SYMGEN=false"], work)
    assert again.returncode == 0, again.stdout + again.stderr


@needs_cc
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_with_kernels_elsewhere_and_another_prefix(tmp_path):
    """GENERATED_DIR and KERNEL_PREFIX point the build at kernels generated elsewhere under
    another prefix (``--prefix arm``), and a failing check gives exit code 1."""
    work = _copy_example(tmp_path / "c")
    out = tmp_path / "kernels"
    result = run_split("generate", str(MODEL), "-o", str(out), "--prefix", "arm")
    assert result.exit_code == 0, result.stderr
    built = _run(["make", f"GENERATED_DIR={out}", "KERNEL_PREFIX=arm", "SYMGEN=false"], work)
    assert built.returncode == 0, built.stdout + built.stderr
    ran = _run([str(work / "example")], work)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.startswith("kernels: arm (nq = 6, nv = 6)")
    # a wrong forward dynamics (every acceleration doubled) fails the ID(FD) check
    source = (out / "arm.c").read_text()
    marker = "void arm_forward_dynamics("
    assert marker in source
    broken = tmp_path / "broken"
    broken.mkdir()
    shutil.copy(out / "arm.h", broken / "arm.h")
    (broken / "arm.c").write_text(
        source.replace(marker, "static void arm_forward_dynamics_(")
        + "\nvoid arm_forward_dynamics(const arm_real q[6], const arm_real v[6], "
        "const arm_real tau[6], arm_real a[6])\n{\n    int i;\n"
        "    arm_forward_dynamics_(q, v, tau, a);\n"
        "    for (i = 0; i < 6; ++i) {\n        a[i] *= 2;\n    }\n}\n")
    rebuilt = _run(["make", "-W", "main.c", f"GENERATED_DIR={broken}", "KERNEL_PREFIX=arm",
                    "SYMGEN=false"], work)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    failed = _run([str(work / "example")], work)
    assert failed.returncode == 1, failed.stdout
    assert "check ID(FD(tau)) = tau: FAILED" in failed.stdout
    assert failed.stdout.splitlines()[-1] == "1 check(s) FAILED"


@needs_cc
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_cmake_builds_and_runs(tmp_path):
    """The README's CMake steps: ``cmake -B build && cmake --build build``."""
    work = _copy_example(tmp_path / "c")
    _generate(work / "generated_c")
    configured = _run(["cmake", "-B", "build"], work)
    assert configured.returncode == 0, configured.stdout + configured.stderr
    built = _run(["cmake", "--build", "build"], work)
    assert built.returncode == 0, built.stdout + built.stderr
    ran = _run([str(work / "build" / "example")], work)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    _check_output(ran.stdout)


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_cmake_without_kernels_says_how_to_generate_them(tmp_path):
    work = _copy_example(tmp_path / "c")
    configured = _run(["cmake", "-B", "build"], work)
    assert configured.returncode != 0
    assert "symgen generate ../models/puma560.yaml -o generated_c" in configured.stderr
