"""Smoke test of the benchmark command: ``python -m bench --smoke`` runs every section end to
end on the smallest models (the 2-link chain; the UR5 for the batch and Python-call sections;
the four-bar for the natural-coordinate step)
in under a minute and writes a page and JSON.

The benchmarks themselves are not part of the test run; this only proves the command works.
Peers that are not installed (MuJoCo and matplotlib come with the ``bench`` extra) are
reported on the page instead of measured, which the test accepts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paths import ROOT

LIMIT_S = 60.0


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="the drivers use POSIX clocks")
def test_bench_smoke_runs_end_to_end(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONHASHSEED="0")
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "bench", "--smoke", "--out", str(tmp_path)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - start
    assert run.returncode == 0, run.stderr[-3000:]
    assert elapsed < LIMIT_S, f"smoke run took {elapsed:.0f} s"

    page = (tmp_path / "benchmarks.md").read_text()
    for heading in ("## Summary", "## 1. Kernel speed", "## 3. Generation speed",
                    "## 4. Operation counts", "## 6. Batch throughput (vectorised vs scalar)",
                    "## 7. Single calls from Python",
                    "## 8. Natural coordinates: the step's accuracy and stability",
                    "## 9. Closed loops: constrained forward dynamics",
                    "## 10. Derivatives: ∂ID and ∂FD"):
        assert heading in page

    speed = json.loads((tmp_path / "kernel_speed.json").read_text())
    assert speed["complete"] and [e["model"] for e in speed["results"]] == ["chain2"]
    ns = speed["results"][0]["builds"]["-O3"]["ns"]
    for kernel in ("inverse_dynamics", "mass_matrix", "forward_dynamics_aba",
                   "forward_dynamics_ltdl", "mass_matrix_inverse"):
        assert ns[f"symgen {kernel}"] > 0
    # every tool that ran was checked against symgen.reference before it was timed
    errors = speed["results"][0]["check_error"]
    assert max(errors["symgen"].values()) < 1e-12
    assert ("mujoco" in errors) != ("mujoco" in speed["unavailable"])

    sg = json.loads((tmp_path / "sympy_generation.json").read_text())
    assert sg["check_ok"]
    assert [r["status"] for r in sg["sympy"]] == ["ok", "ok"]
    assert sg["symgen_all"][-1]["ops"]["total"] > 0

    # the SIMD batch against the scalar loop, through C and numpy: same results (the SIMD
    # batch differs from the scalar kernels by a few ulp of sin and cos at most)
    batch = json.loads((tmp_path / "batch.json").read_text())
    ur5 = batch["robots"]["ur5"]
    for source in (ur5["targets"]["portable"]["kernels"], ur5["numpy"]["portable"]):
        assert sorted(source) == ["FD", "ID", "M"]
        for per in source.values():
            for figures in per.values():
                assert figures["scalar"] > 0 and figures["simd"] > 0
                assert figures["max_rel_diff"] < 1e-12

    calls = json.loads((tmp_path / "python_calls.json").read_text())
    if "unavailable" not in calls:
        times = calls["results"]["ur5"]
        assert sorted(times) == ["forward_dynamics", "inverse_dynamics", "mass_matrix"]
        assert all(t["symgen"] > 0 and t["pinocchio"] > 0 for t in times.values())

    natural = json.loads((tmp_path / "natural_accuracy.json").read_text())
    runs = natural["results"]["four_bar"]["runs"]
    assert sorted(r["h"] for r in runs) == [1e-4, 1e-3]
    assert all(r["stable"] and r["step_us"] > 0 for r in runs)
