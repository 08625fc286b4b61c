"""The committed kernels in generated/: identical to a fresh generation, and compiling
without a warning for the host and for a Cortex-M4 (double as committed, and float)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
from paths import ROOT

GENERATED = ROOT / "generated"
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Werror"]
ARM = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard",
       "-mfpu=fpv4-sp-d16", "-Os", *STRICT]


@cache
def regenerate_module():
    spec = importlib.util.spec_from_file_location("regenerate", GENERATED / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fresh")
    regenerate_module().regenerate(out)
    return out


def committed_files() -> list[str]:
    return sorted(p.name for p in GENERATED.iterdir() if p.suffix in (".c", ".h"))


def test_every_model_is_committed():
    expected = sorted(f"{prefix}.{ext}" for prefix in regenerate_module().MODELS
                      for ext in ("c", "h"))
    assert committed_files() == expected


@pytest.mark.parametrize("name", committed_files())
def test_committed_file_equals_a_fresh_generation(fresh, name):
    assert (GENERATED / name).read_bytes() == (fresh / name).read_bytes(), (
        f"generated/{name} is stale: run `python generated/regenerate.py` and commit"
    )


@pytest.mark.parametrize("name", [n for n in committed_files() if n.endswith(".c")])
def test_committed_file_compiles_for_the_host(name, tmp_path):
    run = subprocess.run(["gcc", *STRICT, "-O0", "-c", str(GENERATED / name), "-o",
                          str(tmp_path / "k.o")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[:3000]


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                    reason="arm-none-eabi-gcc not installed (.ci/run installs it)")
@pytest.mark.parametrize("prefix", list(regenerate_module().MODELS))
def test_every_model_compiles_for_cortex_m4(prefix, tmp_path):
    import symgen

    float_dir = tmp_path / "float"
    ks = symgen.generate(regenerate_module().MODELS[prefix]())
    symgen.write_c(ks, float_dir, "float", prefix)
    for source in (GENERATED / f"{prefix}.c", float_dir / f"{prefix}.c"):
        run = subprocess.run([*ARM, "-c", str(source), "-o", str(tmp_path / "k.o")],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[:3000]
