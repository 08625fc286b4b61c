"""The natural step's error against the step size on the N-four-bar chain (IFToMM
benchmark A02), from the benchmark's own start and from the docs' start: docs/natural.md's
chain table.

    python -m bench.natural_chain                      # N = 2 and 40, both starts, 9 steps
    python -m bench.natural_chain --n 2 --steps 1e-3,2.5e-4,6.25e-5
    python -m bench.natural_chain --kernel nc_step_rk4 --out /tmp/rk4.json

Per (N, start, h): the compiled step (default ``NaturalOptions`` except the step h, -O1,
double) run over ``--seconds`` (default 20 s, the benchmark's duration) from the start of
tests/natural_runs.py's ``CHAIN_STARTS`` (``iftomm``: cranks vertical, the first crank's tip
B0 at ẋ = +1 m/s, i.e. θ̇ = −1 rad/s; ``docs``: cranks at 45°, θ̇ = +1 rad/s); its error is
the largest distance, over records at least every millisecond, between the first crank's
tip and the exact one-DOF reduction integrated by RK4 at 10⁻⁴ s (``ChainReference``,
~10⁻¹⁴ m); also the error over the first 2 s, the energy drift (max|E − E₀| over the
largest kinetic energy) and the largest |Φ|. The N = 40 builds take 10-30 s each.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any

from .common import ROOT, log, table

sys.path.insert(0, str(ROOT / "tests"))  # the chain cases and their reference

import natural_runs as nr  # noqa: E402

STEPS = (1e-2, 3e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4, 6.25e-5, 3e-5, 1e-5)
STARTS = ("iftomm", "docs")


def measure(n: int, start: str, h: float, seconds: float, kernel: str,
            flags: tuple[str, ...] = ("-O1", "-std=c99")) -> dict[str, Any]:
    """Build the step of the chain of ``n`` four-bars for step h and run it."""
    case = nr.chain_case(n, start=start)
    case.record_dt = 1e-3
    began = time.perf_counter()
    lib = nr.step_kernels(case, h, (kernel, "nc_constraints"), flags)
    built = time.perf_counter()
    rec = nr.simulate(case, lib[kernel], h, int(round(seconds / h)))
    ran = time.perf_counter()
    out = nr.assess(case, rec, lib.nc_constraints)
    return {"n": n, "start": start, "h": h, "seconds": seconds, "kernel": kernel,
            "error": out["error"], "error 2 s": out.get("error 2 s", math.nan),
            "energy drift": out["energy drift"], "phi": out["phi"],
            "failed_at": out["failed_at"], "build_s": built - began, "run_s": ran - built}


def render(rows: list[dict[str, Any]]) -> str:
    """The error table: one row per h, one column per (N, start)."""
    columns = sorted({(r["n"], r["start"]) for r in rows},
                     key=lambda c: (c[0], STARTS.index(c[1]) if c[1] in STARTS else 9))
    cell = {(r["n"], r["start"], r["h"]): r for r in rows}

    def fmt(r: dict[str, Any] | None) -> str:
        if r is None:
            return ""
        if r["failed_at"] is not None:
            return f"NaN at {r['failed_at']:.3g} s"
        return f"{r['error']:.2e}"

    header = ["h (s)", *(f"N = {n}, {start}" for n, start in columns)]
    body = [[f"{h:g}", *(fmt(cell.get((n, start, h))) for n, start in columns)]
            for h in sorted({r["h"] for r in rows}, reverse=True)]
    return table(header, body)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", default="2,40", help="chain lengths (comma-separated)")
    p.add_argument("--starts", default=",".join(STARTS))
    p.add_argument("--steps", default=",".join(f"{h:g}" for h in STEPS))
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--kernel", default="nc_step")
    p.add_argument("--out", help="write the runs as JSON here")
    a = p.parse_args(argv)
    rows = []
    for n in (int(x) for x in a.n.split(",")):
        for start in a.starts.split(","):
            for h in (float(x) for x in a.steps.split(",")):
                rows.append(measure(n, start, h, a.seconds, a.kernel))
                r = rows[-1]
                log(f"  N = {n} {start} h = {h:g}: error {r['error']:.2e} "
                    f"(build {r['build_s']:.0f} s, run {r['run_s']:.1f} s)")
    print(f"{a.kernel}: first crank's tip error (m) over {a.seconds:g} s\n")
    print(render(rows))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1, default=lambda x: None)


if __name__ == "__main__":
    main()
