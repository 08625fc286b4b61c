"""``python -m bench``: every benchmark of symgen against its peers, and docs/benchmarks.md.

    python -m bench                      # everything (about 65 minutes on 2 cores)
    python -m bench --quick              # small models only; writes under bench/results/quick/
    python -m bench --smoke --out DIR    # smallest model, end to end, in under a minute
    python -m bench --only kernel_speed  # one section; the page is re-rendered from all results

Sections (each writes ``<results>/<section>.json``; the page is rendered from those files):
``kernel_speed`` (symgen vs Pinocchio C++, Pinocchio's own generated C, CasADi-generated
Pinocchio, MuJoCo), ``generation``
(symgen's generation time and per-kernel op counts), ``sympy_generation`` (generation speed vs
sympy.physics.mechanics, with a PNG plot), ``embedded`` (instructions, code and stack on
emulated Cortex-M4F and M7 cores),
``batch`` (states/s of the SIMD batch against the scalar batch loop, through C and through the
numpy wrapper), ``python_calls`` (single calls from Python, symgen vs Pinocchio's bindings),
``natural_accuracy`` (the natural-coordinate step on the closed-loop benchmark mechanisms over
a range of steps, against independent references; ``bench.natural_accuracy``) and
``loop_dynamics`` (closed-loop constrained forward dynamics vs Pinocchio's ``lcaba``, its
generated ``CodeGenConstraintDynamics``, its C++ ``constraintDynamics`` and MuJoCo with equality
constraints; ``bench.loop_dynamics``) and ``derivatives`` (∂ID and ∂FD vs Pinocchio's C++
analytical derivatives, their generated C and CasADi-generated Jacobians, and a user's own
build of symgen's ∂FD; ``bench.derivatives``).
A peer that is not installed, or a tool that is missing, is reported on the page, not fatal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import symgen
from symgen.backends import C99_FLAGS
from symgen.io.robots import robot_urdf, spatial_chain

from . import batch_numpy, embedded, generation, report
from . import batch_throughput as bt
from . import derivatives as deriv
from . import kernel_speed as ksp
from . import loop_dynamics as loops
from . import natural_accuracy as nacc
from . import python_calls as pyc
from . import sympy_generation as sgen
from .common import RESULTS, ROOT, log, machine_info, pin_to_one_cpu, random_states, write_json
from .peers import casadi_peer, mujoco_peer

SECTIONS = ("kernel_speed", "generation", "sympy_generation", "embedded", "batch",
            "python_calls", "natural_accuracy", "loop_dynamics", "derivatives")
ROBOTS = (("ur5", False), ("panda", False), ("xarm7", False), ("solo12", True), ("talos", True))
CHAINS = (2, 5, 10, 20, 50)
CASADI_VENV = ROOT / "bench" / ".venv-casadi"

#: Settings per mode: models, states, repeats, builds, sympy / symgen chain sizes, ...
MODES: dict[str, dict[str, Any]] = {
    "full": {"robots": ROBOTS, "chains": CHAINS, "states": 1000, "repeats": 7, "rounds": 5,
             "builds": ksp.BUILDS, "sympy_sizes": sgen.SYMPY_SIZES,
             "symgen_sizes": sgen.SYMGEN_SIZES, "timeout_s": sgen.TIMEOUT_S,
             "generation_robots": generation.ROBOTS, "panda_runs": 3,
             "embedded": embedded.MODELS,
             "batch": {"robots": bt.ROBOTS, "targets": bt.TARGETS, "sizes": bt.SIZES,
                       "repeats": bt.REPEATS},
             "python_calls": {"robots": pyc.ROBOTS, "number": 20000, "repeat": 15},
             "natural": {"cases": nacc.nr.BENCH_CASES, "steps": nacc.FULL_STEPS},
             "loops": loops.MODES["full"], "derivatives": deriv.MODES["full"]},
    "quick": {"robots": ROBOTS[:1], "chains": (2, 10), "states": 200, "repeats": 5, "rounds": 3,
              "builds": {"-O3": ["-O3"]}, "sympy_sizes": (1, 2, 4, 6),
              "symgen_sizes": (1, 2, 4, 6, 10, 20), "timeout_s": 120.0,
              "generation_robots": generation.ROBOTS[:2], "panda_runs": 1,
              "embedded": embedded.MODELS[1:],
              "batch": {"robots": ("panda",), "targets": bt.TARGETS, "sizes": (1_000, 10_000),
                        "repeats": {1_000: 11, 10_000: 5}},
              "python_calls": {"robots": pyc.ROBOTS[:2], "number": 2000, "repeat": 7},
              "natural": {"cases": ("chain2", "andrews", "top", "four_bar"),
                          "steps": nacc.QUICK_STEPS},
              "loops": loops.MODES["quick"], "derivatives": deriv.MODES["quick"]},
    "smoke": {"robots": (), "chains": (2,), "states": 50, "repeats": 3, "rounds": 2,
              "builds": {"-O3": ["-O3"]}, "sympy_sizes": (1, 2), "symgen_sizes": (1, 2),
              "timeout_s": 60.0, "generation_robots": generation.ROBOTS[1:2], "panda_runs": 1,
              "embedded": ("chain2",),
              "batch": {"robots": ("ur5",), "targets": ("portable",), "sizes": (100, 1_000),
                        "repeats": {100: 3, 1_000: 3}},
              "python_calls": {"robots": pyc.ROBOTS[:1], "number": 200, "repeat": 3},
              "natural": {"cases": ("four_bar",), "steps": (1e-3, 1e-4)},
              "loops": loops.MODES["smoke"], "derivatives": deriv.MODES["smoke"]},
}


def _model(name: str, floating: bool = False) -> symgen.Model:
    if name.startswith("chain"):
        return spatial_chain(int(name[5:]))
    # the peers (Pinocchio, MuJoCo, CasADi) read the grippers' <mimic> joints as independent
    return symgen.load(robot_urdf(name), floating_base=floating, couplings=False)


def setup_peers(mode: str, builds: dict[str, list[str]], casadi_venv: Path | None,
                ) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    """What each peer needs (drivers, venv), the reasons of those not available, versions."""
    peers: dict[str, Any] = {}
    unavailable: dict[str, str] = {}
    versions: dict[str, Any] = {}
    reason = ksp.pinocchio_unavailable()
    if mode == "smoke":
        reason = "skipped by --smoke (building Pinocchio's C++ timing program takes minutes)"
    if reason:
        unavailable["pinocchio"] = reason
    else:
        import pinocchio

        versions["pinocchio"] = pinocchio.__version__
        peers["pinocchio"] = {label: ksp.pinocchio_driver(flags, log)
                              for label, flags in builds.items()}
    reason = mujoco_peer.unavailable()
    if reason:
        unavailable["mujoco"] = reason
    else:
        peers["mujoco"] = True
        versions.update(mujoco_peer.versions())
    if casadi_venv is None:
        unavailable["casadi"] = ("skipped by --smoke (it needs its own virtual environment)"
                                 if mode == "smoke" else "skipped (--no-casadi)")
    else:
        log(f"  CasADi route: virtual environment {casadi_venv} (created on first use)")
        reason = casadi_peer.setup(casadi_venv)
        if reason:
            unavailable["casadi"] = reason
        else:
            peers["casadi"] = casadi_venv
            versions["casadi"] = casadi_peer.versions(casadi_venv)
    return peers, unavailable, versions


def run_kernel_speed(cfg: dict[str, Any], out: Path, casadi_venv: Path | None) -> None:
    models = [(name, floating) for name, floating in cfg["robots"]]
    models += [(f"chain{n}", False) for n in cfg["chains"]]
    peers, unavailable, versions = setup_peers(cfg["mode"], cfg["builds"], casadi_venv)
    all_cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    pinned = pin_to_one_cpu()
    settings = {"states": cfg["states"], "repeats": cfg["repeats"], "rounds": cfg["rounds"],
                "seed": 0, "pinned_cpu": pinned, "models": [m for m, _ in models]}
    res: dict[str, Any] = {
        "machine": machine_info(), "builds": cfg["builds"], "versions": versions,
        "unavailable": unavailable, "settings": settings, "results": [], "complete": False,
        "timed": dict(mujoco_peer.TIMED) if "mujoco" in peers else {},
    }
    for name, floating in models:
        log(f"kernel speed: {name}")
        model = _model(name, floating)
        states = random_states(model, cfg["states"], seed=0)
        res["results"].append(ksp.measure_model(name, model, states, cfg["repeats"],
                                                cfg["rounds"], cfg["builds"], peers, log))
        write_json(out, res)  # incrementally: a long run keeps what it measured
    res["complete"] = True
    write_json(out, res)
    if all_cpus is not None:
        os.sched_setaffinity(0, all_cpus)


def run_generation(cfg: dict[str, Any], out: Path) -> None:
    log("generation time and op counts")
    res = generation.run(log, cfg["generation_robots"], cfg["panda_runs"])
    res["machine"] = machine_info()
    write_json(out, res)


def run_sympy(cfg: dict[str, Any], out: Path, png: Path) -> None:
    log("generation speed vs sympy.physics.mechanics")
    res = sgen.run(cfg["sympy_sizes"], cfg["symgen_sizes"], cfg["timeout_s"],
                   log=lambda m: log(f"  {m}"))
    res["machine"] = machine_info()
    try:
        sgen.plot(res, png)
        res["png"] = png.name
    except ImportError:
        res["png"] = None
        log("  matplotlib is not installed: no plot (pip install the bench extra)")
    write_json(out, res)


def run_embedded(cfg: dict[str, Any], out: Path) -> None:
    reason = embedded.unavailable()
    if reason:
        log(f"embedded: skipped, {reason}")
        write_json(out, {"machine": machine_info(), "unavailable": reason})
        return
    log("embedded: the kernels on qemu's Cortex-M4F and Cortex-M7")
    res = embedded.run([(name, _model(name)) for name in cfg["embedded"]], log)
    res["machine"] = machine_info()
    write_json(out, res)


def _restore(cpus: set[int] | None) -> None:
    if cpus is not None:
        os.sched_setaffinity(0, cpus)


def _affinity() -> set[int] | None:
    return os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None


def run_batch(cfg: dict[str, Any], out: Path) -> None:
    """The C measurement of bench.batch_throughput with the numpy one (bench.batch_numpy)
    as its hook, on one pinned core."""
    log("batch throughput: SIMD batch vs scalar batch loop, through C and numpy")
    c = cfg["batch"]
    cpus = _affinity()
    bt.NUMPY_HOOK = batch_numpy.measure
    try:
        res = bt.measure(c["robots"], c["targets"], c["sizes"], dict(c["repeats"]))
    finally:
        bt.NUMPY_HOOK = None
        _restore(cpus)
    res["settings"] = {"repeats": {str(k): v for k, v in c["repeats"].items()}, "seed": 0,
                       "scalar_flags": list(C99_FLAGS)}
    write_json(out, res)


def run_python_calls(cfg: dict[str, Any], out: Path) -> None:
    """Single calls from Python, symgen vs Pinocchio's bindings (bench.python_calls)."""
    reason = pyc.unavailable()
    if reason:
        log(f"python calls: skipped, {reason}")
        write_json(out, {"machine": machine_info(), "unavailable": reason})
        return
    import pinocchio

    log("single calls from Python: symgen vs Pinocchio's bindings")
    c = cfg["python_calls"]
    cpus = _affinity()
    try:
        cpu = pin_to_one_cpu()
        results = pyc.measure(c["robots"], c["number"], c["repeat"])
    finally:
        _restore(cpus)
    for robot, kernels in results.items():
        log(f"  {robot}: " + ", ".join(f"{k} x{t['speedup']:.2f}" for k, t in kernels.items()))
    write_json(out, {"machine": machine_info(), "cpu_pinned": cpu,
                     "versions": {"pinocchio": pinocchio.__version__},
                     "settings": {"number": c["number"], "repeat": c["repeat"],
                                  "states": pyc.STATES, "seed": 0,
                                  "robots": [r for r, _ in c["robots"]]},
                     "results": results})


def run_natural_accuracy(cfg: dict[str, Any], out: Path) -> None:
    """The natural-coordinate step's accuracy and stability (bench.natural_accuracy), two
    worker processes (each builds and runs its own cases)."""
    c = cfg["natural"]
    write_json(out, nacc.measure_all(list(c["cases"]), list(c["steps"]), jobs=2))


def run_loop_dynamics(cfg: dict[str, Any], out: Path) -> None:
    """Closed-loop constrained forward dynamics (bench.loop_dynamics); the smoke mode skips
    Pinocchio (its program takes minutes to build)."""
    c = cfg["loops"]
    loops.measure(c["models"], c["states"], c["repeats"], c["rounds"], cfg["mode"], out)


def run_derivatives(cfg: dict[str, Any], out: Path, casadi_venv: Path | None) -> None:
    """∂ID and ∂FD against Pinocchio's analytical derivatives and CasADi (bench.derivatives);
    the smoke mode skips Pinocchio's build and CasADi."""
    c = cfg["derivatives"]
    deriv.measure(c["robots"], c["states"], c["repeats"], c["rounds"], cfg["mode"], out,
                  casadi_venv)


def load_results(folder: Path) -> dict[str, Any]:
    """Every section's JSON in ``folder`` (None where a section has not been run)."""
    paths = {name: folder / f"{name}.json" for name in SECTIONS}
    return {name: json.loads(p.read_text()) if p.exists() else None for name, p in paths.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small models, one build")
    mode.add_argument("--smoke", action="store_true",
                      help="the smallest model, end to end (no Pinocchio build, no CasADi)")
    parser.add_argument("--only", default=",".join(SECTIONS),
                        help=f"comma-separated sections to run (of {', '.join(SECTIONS)}); "
                             "the others are taken from earlier results")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for the page, the JSON and the PNG (default: the page "
                             "in docs/, results in bench/results/; --quick: "
                             "bench/results/quick/)")
    parser.add_argument("--render-only", action="store_true",
                        help="measure nothing: re-render the page from the existing results")
    parser.add_argument("--no-casadi", action="store_true",
                        help="do not set up or time the CasADi route")
    parser.add_argument("--casadi-venv", type=Path, default=CASADI_VENV,
                        help="virtual environment for cmeel-casadi-kin-dyn (created if missing)")
    args = parser.parse_args(argv)
    name = "smoke" if args.smoke else "quick" if args.quick else "full"
    if args.smoke and args.out is None:
        parser.error("--smoke needs --out DIR (it must not overwrite the published page)")
    cfg = dict(MODES[name], mode=name)
    only = [] if args.render_only else [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(only) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)} (known: {', '.join(SECTIONS)})")
    if args.out is not None:
        results = page_dir = args.out
    elif name == "quick":
        results = page_dir = RESULTS / "quick"
    else:
        results, page_dir = RESULTS, ROOT / "docs"
    results.mkdir(parents=True, exist_ok=True)
    page_dir.mkdir(parents=True, exist_ok=True)
    page = page_dir / "benchmarks.md"
    png = page_dir / ("generation-vs-sympy.png" if page_dir != ROOT / "docs"
                      else "img/generation-vs-sympy.png")
    png.parent.mkdir(parents=True, exist_ok=True)
    casadi_venv = None if args.no_casadi or name == "smoke" else args.casadi_venv

    started = time.perf_counter()
    if "kernel_speed" in only:
        run_kernel_speed(cfg, results / "kernel_speed.json", casadi_venv)
    if "generation" in only:
        run_generation(cfg, results / "generation.json")
    if "sympy_generation" in only:
        run_sympy(cfg, results / "sympy_generation.json", png)
    if "embedded" in only:
        run_embedded(cfg, results / "embedded.json")
    if "batch" in only:
        run_batch(cfg, results / "batch.json")
    if "python_calls" in only:
        run_python_calls(cfg, results / "python_calls.json")
    if "natural_accuracy" in only:
        run_natural_accuracy(cfg, results / "natural_accuracy.json")
    if "loop_dynamics" in only:
        run_loop_dynamics(cfg, results / "loop_dynamics.json")
    if "derivatives" in only:
        run_derivatives(cfg, results / "derivatives.json", casadi_venv)
    res = load_results(results)
    sg = res.get("sympy_generation")
    link = report.relative_link(png, page) if sg and sg.get("png") else None
    command = "python -m bench" + {"full": "", "quick": " --quick", "smoke": " --smoke"}[name]
    page.write_text(report.render(res, link, command))
    log(f"wrote {page} ({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
