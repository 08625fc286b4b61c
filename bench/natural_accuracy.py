"""What the natural-coordinate step tolerates: the compiled ``nc_step`` (default
``NaturalOptions`` except the step h, which it bakes in) on the benchmark mechanisms over a
range of steps, against independent references.

    python -m bench.natural_accuracy            # h = 1e-2 ... 1e-5 (7 steps), ~10 min
    python -m bench.natural_accuracy --quick    # h = 1e-2, 1e-3, 1e-4, 1e-5
    python -m bench.natural_accuracy --cases chain2,top --steps 1e-3,1e-4
    python -m bench.natural_accuracy --quick --kernel nc_step_rk4

``python -m bench`` runs it as its ``natural_accuracy`` section (all cases and steps; the
quick mode a few) and renders the tables on docs/benchmarks.md.

Per mechanism (the cases of tests/natural_runs.py: the N-four-bar chain for N = 2 and 40
against its exact one-DOF reduction, Andrews' squeezer against the test set's solution at
0.03 s, the spinning top against Euler's equations, Bricard's linkage, the example models)
and per h: whether the run stayed finite, the error against the reference, the energy drift
(max|E − E₀| over the run / the run's largest kinetic energy), the largest |Φ| and |λ|, the
empirical order of the error between neighbouring steps, and the time per step (the compiled
kernel's fast path, ``out=`` arrays; best of 3 loops of 2,000 steps). A run that turns
non-finite is reported with its time of failure and |Φ|, |λ|, |q̇| over its last records.

Horizons: the chain 20 s at h ≥ 1e-3 and 2 s below (2 s passes its first singular positions,
cranks horizontal, at 0.58 s and 1.15 s for N = 2), Andrews 0.03 s, the others 2 s. Builds
(generation and compilation, one per mechanism and h) run in ``--jobs`` worker processes,
each simulating what it built; the C is cached by symgen (by source hash), so a second run
only regenerates. With two jobs each run shares the machine with the other worker's
compiler: ``--jobs 1`` for quiet timings. Results: printed tables and
``bench/results[/quick]/natural_accuracy.json`` (a run of chosen cases, steps or kernel
writes only where ``--out`` says, so that it never replaces the full results).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import symgen

from .common import RESULTS, ROOT, log, machine_info, table, write_json

sys.path.insert(0, str(ROOT / "tests"))  # the references and runs (numpy only)

import natural_runs as nr  # noqa: E402

FULL_STEPS = (1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5)
QUICK_STEPS = (1e-2, 1e-3, 1e-4, 1e-5)
#: Build cost ranking (largest first), so that the long builds start early.
ORDER = ("chain40", "chain40_iftomm", "puma560", "bricard", "rssr", "double_pendulum", "top",
         "chain2", "chain2_iftomm", "andrews", "slider_crank", "four_bar")

_CASES: dict[str, nr.Case] = {}


def _case(key: str) -> nr.Case:
    """The case ``key``, built once per process (its natural model's symbolic work is
    shared by every h)."""
    if key not in _CASES:
        _CASES[key] = nr.make_case(key)
    return _CASES[key]


def measure(key: str, h: float, kernel: str = "nc_step") -> dict[str, Any]:
    """Build the step ``kernel`` of case ``key`` for step h, run it and judge the run."""
    case = _case(key)
    start = time.perf_counter()
    lib = nr.step_kernels(case, h, (kernel, "nc_constraints"))
    built = time.perf_counter()
    rec = nr.simulate(case, lib[kernel], h)
    ran = time.perf_counter()
    out = nr.assess(case, rec, lib.nc_constraints)
    out.update({"case": key, "h": h, "steps": int(round(rec.t[-1] / h)),
                "build_s": built - start, "run_s": ran - built,
                "step_us": 1e6 * nr.time_per_step(case, lib[kernel], h)})
    if rec.failed_at is not None:
        out["trace"] = nr.failure_trace(case, rec, lib.nc_constraints)
    return out


def describe(key: str) -> dict[str, Any]:
    """Sizes of a case's natural model and, for the chain, its singular times."""
    case = _case(key)
    nm = case.nm
    out: dict[str, Any] = {"n": nm.n, "m": nm.m, "dof": nm.dof, "error": case.error_name}
    if key.startswith("chain"):
        ref = nr.chain_reference(case.notes["n"], 20.0 + 1e-3, case.notes["start"])
        out["singular_times"] = [round(t, 4) for t in ref.singular_times(20.0)]
    return out


def code_version() -> str:
    """The commit of the symgen imported (its repository's HEAD, "+dirty" when symgen/ has
    uncommitted changes), or its folder when that is not a git checkout."""
    package = Path(symgen.__file__).resolve().parent

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=package, capture_output=True, text=True,
                                  check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""

    commit = git("rev-parse", "--short", "HEAD")
    if not commit:
        return f"symgen from {package} (not a git checkout)"
    return commit + ("+dirty" if git("status", "--porcelain", ".") else "")


def _fmt(x: Any, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:.{digits}e}" if isinstance(x, float) else str(x)


def _stable(r: dict[str, Any]) -> str:
    return "yes" if r["stable"] else f"NaN at t = {r['failed_at']:.4g} s"


def _order(previous: dict[str, Any] | None, r: dict[str, Any]) -> str:
    """The empirical order log(e₁/e₂)/log(h₁/h₂) of the error between the previous (larger)
    step and this one, on the same horizon (the chain's 2 s error where there is one)."""
    if previous is None or not (previous["stable"] and r["stable"]):
        return "—"
    name = "error 2 s" if "error 2 s" in r else "error"
    if name == "error" and abs(previous["t_end"] - r["t_end"]) > 1e-9:
        return "—"
    e1, e2 = previous.get(name), r.get(name)  # None (JSON) or NaN: no error measured
    if not (isinstance(e1, float) and isinstance(e2, float) and e1 > 0 and e2 > 0):
        return "—"
    return f"{math.log(e1 / e2) / math.log(previous['h'] / r['h']):.2f}"


def render(key: str, info: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """One case's table (Markdown) with a header line."""
    head = f"### {key}: n = {info['n']}, m = {info['m']}, DOF = {info['dof']}"
    if "singular_times" in info:
        times = ", ".join(f"{t:.2f}" for t in info["singular_times"][:4])
        head += f"; cranks horizontal (singular) at t = {times}, ... s"
    early = ["error 2 s"] if any("error 2 s" in r for r in rows) else []
    extra = ["momentum drift"] if any("momentum drift" in r for r in rows) else []
    header = ["h (s)", "steps", "stable", info["error"] or "error", *early, "order",
              "energy drift", *extra, "max abs Φ", "max abs λ", "µs/step"]
    body = []
    previous = None
    for r in sorted(rows, key=lambda r: -r["h"]):
        body.append([f"{r['h']:g}", r["steps"], _stable(r), _fmt(r["error"]),
                     *(_fmt(r.get(k)) for k in early), _order(previous, r),
                     _fmt(r["energy drift"]),
                     *(_fmt(r.get(k)) for k in extra), _fmt(r["phi"]), _fmt(r["lam"]),
                     f"{r['step_us']:.2f}"])
        previous = r
    lines = [head, "", table(header, body)]
    for r in rows:
        if "trace" in r:
            lines.append(f"\nh = {r['h']:g}: records around the onset (|Φ| above 100 times "
                         f"its early values) and before the failure at "
                         f"t = {r['failed_at']:.6g} s:")
            lines.append(table(["t (s)", "max abs Φ", "max abs λ", "max abs q̇"],
                               [[f"{p['t']:.6g}", _fmt(p["phi"]), _fmt(p["lam"]),
                                 _fmt(p["qd"])] for p in r["trace"]]))
    return "\n".join(lines)


def _plain(x: Any) -> Any:
    """``x`` with NaN as None (strict JSON)."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    return None if isinstance(x, float) and math.isnan(x) else x


def run(cases: list[str], steps: list[float], jobs: int, kernel: str = "nc_step"
        ) -> dict[str, Any]:
    """Every (case, h) measured, in ``jobs`` processes; the results by case."""
    tasks = [(k, h) for k in sorted(cases, key=lambda k: ORDER.index(k) if k in ORDER else 99)
             for h in steps]
    results: dict[str, list[dict[str, Any]]] = {k: [] for k in cases}
    started = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(measure, k, h, kernel): (k, h) for k, h in tasks}
            infos = {k: pool.submit(describe, k) for k in cases}
            for future, (k, h) in futures.items():
                results[k].append(future.result())
                log(f"  {k} h = {h:g}: {time.perf_counter() - started:.0f} s")
            info = {k: f.result() for k, f in infos.items()}
    else:
        for k, h in tasks:
            results[k].append(measure(k, h, kernel))
            log(f"  {k} h = {h:g}: {time.perf_counter() - started:.0f} s")
        info = {k: describe(k) for k in cases}
    return {k: {"model": info[k], "runs": results[k]} for k in cases}


def measure_all(cases: list[str], steps: list[float], jobs: int, kernel: str = "nc_step"
                ) -> dict[str, Any]:
    """Every (case, h) measured, with the machine, the code version and the settings: the
    content of ``natural_accuracy.json``."""
    started = time.perf_counter()
    log(f"natural accuracy: {len(cases)} cases × {len(steps)} steps, {jobs} job(s)")
    version = code_version()
    log(f"  kernel {kernel}, code {version}")
    results = run(cases, steps, max(1, jobs), kernel)
    return _plain({"machine": machine_info(), "code": version,
                   "settings": {"steps": steps, "jobs": jobs, "kernel": kernel},
                   "results": results, "seconds": time.perf_counter() - started})


def summary(res: dict[str, Any]) -> str:
    """One sentence for the benchmark page's summary: how many runs stayed finite."""
    runs = [r for case in res["results"].values() for r in case["runs"]]
    stable = sum(1 for r in runs if r["stable"])
    steps = sorted({r["h"] for r in runs})
    return (f"{stable} of {len(runs)} runs of `{res['settings']['kernel']}` stayed finite "
            f"({len(res['results'])} mechanisms, h = {steps[0]:g} ... {steps[-1]:g} s, "
            "default options).")


def section(res: dict[str, Any]) -> str:
    """The benchmark page's section: the settings, then one table per mechanism."""
    intro = (f"The compiled `{res['settings']['kernel']}` (default `NaturalOptions` except "
             "the step h, which it bakes in) on the benchmark mechanisms of `docs/natural.md`, "
             "against independent references (`tests/natural_runs.py`): the error (the "
             "chain's crank tip against its exact one-DOF reduction, Andrews' seven angles "
             "against the test set's solution at 0.03 s, the top's attitude against Euler's "
             "equations), the energy drift (of the run's largest kinetic energy), the "
             "largest |Φ| and |λ|, the empirical order and the time per step. The chains "
             "from two starts: `chain<N>` cranks at 45° and +1 rad/s (the start of "
             "`docs/natural.md`'s first tables), `chain<N>_iftomm` the IFToMM benchmark's own "
             "(problem A02: cranks vertical, −1 rad/s, 20 s). Code "
             f"{res['code']}; {res['seconds']:.0f} s. Re-measure one mechanism with "
             "`python -m bench.natural_accuracy --cases chain40`.")
    tables = [render(key, case["model"], case["runs"]) for key, case in res["results"].items()]
    return "\n\n".join([intro, *tables])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.natural_accuracy",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"steps {', '.join(f'{h:g}' for h in QUICK_STEPS)} only")
    parser.add_argument("--cases", default=None,
                        help=f"comma-separated cases (of {', '.join(nr.BENCH_CASES)}; "
                             "default all)")
    parser.add_argument("--steps", default=None, help="comma-separated steps h (s)")
    parser.add_argument("--kernel", default="nc_step",
                        help="the step kernel (inputs q, qd, qdd, lam[, tau, params]; "
                             "default nc_step; e.g. nc_step_rk4)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder of natural_accuracy.json (default bench/results/, "
                             "--quick: bench/results/quick/; a run of chosen cases, steps "
                             "or kernel writes no file unless given one)")
    args = parser.parse_args(argv)
    cases = ([c.strip() for c in args.cases.split(",") if c.strip()] if args.cases
             else list(nr.BENCH_CASES))
    unknown = sorted(set(cases) - set(nr.BENCH_CASES))
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)} (known: {', '.join(nr.BENCH_CASES)})")
    try:
        steps = ([float(x) for x in args.steps.split(",")] if args.steps
                 else list(QUICK_STEPS if args.quick else FULL_STEPS))
    except ValueError:
        parser.error(f"--steps takes numbers, got {args.steps!r}")
    if any(not h > 0 for h in steps):
        parser.error("steps must be positive")
    try:
        symgen.registry.get(args.kernel)
    except symgen.SymgenError as exc:
        parser.error(str(exc))
    chosen = bool(args.cases or args.steps) or args.kernel != "nc_step"
    out = args.out or (None if chosen else RESULTS / "quick" if args.quick else RESULTS)
    res = measure_all(cases, steps, args.jobs, args.kernel)
    print(f"Code {res['code']}, step kernel {args.kernel}, default NaturalOptions(step=h).\n")
    for key in cases:
        print(render(key, res["results"][key]["model"], res["results"][key]["runs"]) + "\n",
              flush=True)
    if out is None:
        log("chosen cases, steps or kernel: no file written (--out DIR to keep the results)")
        return 0
    write_json(out / "natural_accuracy.json", res)
    log(f"wrote {out / 'natural_accuracy.json'} ({res['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
