"""Builds in parallel translation units (symgen.build.compiler,
symgen.backends.c99.emit.partition), zero-filled outputs
(symgen.backends.c99.printer.ZERO_FILL_MIN) and the simd backend's scalar loop for kernels that
store more than they compute: the same module, function for function and bit for bit, as
one unit, and every unit compiles under the strict warnings on its own."""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import cache

import numpy as np
import pytest
from mechanisms import n_four_bar
from paths import EXAMPLES

import symgen
import symgen.backends.c99.emit
import symgen.build.compiler
from symgen.backends import emit_simd
from symgen.backends.c99.emit import MIN_UNIT_STATEMENTS, emit_c, partition
from symgen.backends.c99.printer import ZERO_FILL_MIN
from symgen.build.compiler import MIN_UNITS, build_jobs, compile_kernels
from symgen.errors import SymgenError
from symgen.ir.counts import op_counts

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Werror"]

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


@cache
def pendulum():
    """The double pendulum's default kernels (small: units are forced by lowering
    MIN_UNIT_STATEMENTS)."""
    return symgen.generate(symgen.load(EXAMPLES / "double_pendulum.yaml"))


@pytest.fixture
def small_units(monkeypatch):
    monkeypatch.setattr(symgen.backends.c99.emit, "MIN_UNIT_STATEMENTS", 20)


@cache
def chain():
    """A 12-loop parallelogram chain (n = 26): its 26 x 26 mass matrix and 25 x 26 Jacobian
    hold more than ZERO_FILL_MIN zeros."""
    from symgen.formulations.natural.kernels import NaturalOptions, natural_model

    model = n_four_bar(12)
    ks = symgen.generate(model, ["nc_mass_matrix", "nc_jacobian", "nc_constraints"],
                         options=NaturalOptions())
    return natural_model(model), ks


def test_partition_covers_every_item_once_in_balanced_groups():
    sizes = [5000, 4000, 3000, 2500, 100, 50, 7]
    groups = partition(sizes, 3)
    assert sorted(i for g in groups for i in g) == list(range(len(sizes)))
    assert len(groups) == 3 and all(g == sorted(g) for g in groups)
    loads = sorted(sum(sizes[i] for i in g) for g in groups)
    assert loads[-1] - loads[0] <= max(sizes)  # LPT: within one item of each other
    # small sources stay whole: fewer than two units' worth of statements
    assert partition([MIN_UNIT_STATEMENTS // 4] * 3, 8) == [[0, 1, 2]]
    assert partition([], 4) == []


def test_build_jobs_from_the_environment(monkeypatch):
    monkeypatch.setenv("SYMGEN_BUILD_JOBS", "3")
    assert build_jobs() == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("SYMGEN_BUILD_JOBS", bad)
        with pytest.raises(SymgenError, match="SYMGEN_BUILD_JOBS must be a positive integer"):
            build_jobs()
    monkeypatch.delenv("SYMGEN_BUILD_JOBS")
    assert build_jobs() >= 1


def _defined(text: str, pattern: str) -> list[str]:
    return re.findall(pattern, text, flags=re.M)


@pytest.mark.parametrize("backend", ["c99", "simd"])
def test_units_define_every_function_once_and_compile_strictly(backend, tmp_path,
                                                               small_units):
    ks = pendulum()
    scalar = emit_c(ks, units=4)
    src = scalar if backend == "c99" else emit_simd(ks, scalar=scalar, units=4)
    assert len(src.units) >= 2
    pattern = (r"^void (\w+)\(" if backend == "c99" else r"^void (\w+_simd_batch)\(")
    whole = sorted(_defined(src.source, pattern))
    assert sorted(n for u in src.units for n in _defined(u, pattern)) == whole
    if backend == "simd":  # the width function: once in all
        assert sum(len(_defined(u, r"^size_t \w+_simd_width\(")) for u in src.units) == 1
    src.write(tmp_path)
    if src is not scalar:
        scalar.write(tmp_path)
    for i, unit in enumerate(src.units):
        (tmp_path / f"unit{i}.c").write_text(unit)
        flags = ["-march=native"] if backend == "simd" else []
        run = subprocess.run(["gcc", "-O1", *STRICT, *flags, "-c", f"unit{i}.c", "-o",
                              f"unit{i}.o"], cwd=tmp_path, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[:2000]


def _evaluate_all(compiled, ks, seed: int = 3) -> dict[str, list[np.ndarray]]:
    """Every kernel on 9 random argument sets (a batch: the simd path with its remainder)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in ks.programs:
        f = compiled[name]
        args = [rng.normal(scale=0.3, size=(9, *spec.shape)) for spec in f.inputs]
        res = f(*args)
        out[name] = [np.asarray(r) for r in (res if isinstance(res, tuple) else (res,))]
    return out


def test_split_build_equals_single_unit_build(monkeypatch, tmp_path, small_units):
    ks = pendulum()
    results = []
    # one unit; a serial build split for its progress (MIN_UNITS); a parallel one
    for jobs, min_units, units in (("1", 1, 0), ("1", MIN_UNITS, MIN_UNITS), ("3", 1, 6)):
        monkeypatch.setenv("SYMGEN_BUILD_JOBS", jobs)
        monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path / f"{jobs}-{min_units}"))
        monkeypatch.setattr(symgen.build.compiler, "MIN_UNITS", min_units)
        compiled = compile_kernels(ks, vectorize="auto")
        assert len(compiled.source.units) == units
        results.append(_evaluate_all(compiled, ks))
    for other in results[1:]:
        for name, outputs in results[0].items():
            for a, b in zip(outputs, other[name], strict=True):
                np.testing.assert_array_equal(a, b, err_msg=name)


def test_zero_filled_outputs_equal_the_matrices(tmp_path):
    nm, ks = chain()
    source = emit_c(ks).source
    assert source.count("symgen_k < 676") == 1 and source.count("symgen_k < 650") == 1
    for name in ("nc_mass_matrix", "nc_jacobian"):  # stores more than it computes
        assert op_counts(ks[name])["total"] < ZERO_FILL_MIN
    compiled = compile_kernels(ks, vectorize="auto")
    np.testing.assert_array_equal(compiled["nc_mass_matrix"](), nm.mass_matrix)
    rng = np.random.default_rng(5)
    qs = nm.q0 + rng.normal(scale=0.1, size=(7, nm.n))
    batch = compiled["nc_jacobian"](qs)  # the scalar loop of the simd batch
    for q, jac in zip(qs, batch, strict=True):
        np.testing.assert_allclose(compiled["nc_jacobian"](q), jac, rtol=0, atol=0)
        np.testing.assert_allclose(jac, nm.phi_q(q), rtol=1e-14, atol=1e-14)
