"""symgen alone: generation time of the Franka Panda's kernels, and the operation counts of
every kernel for the Panda, the PUMA 560 and the Talos humanoid (the figures the published
anchors are compared with in the report)."""

from __future__ import annotations

import gc
import statistics
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import symgen
from symgen.io.robots import robot_urdf
from symgen.kernels import DEFAULT_KERNELS, KERNELS

from .common import ROOT, table

PANDA_RUNS = 3
PANDA_TARGET_S = 10.0
OP_KINDS = ("add", "mul", "div", "sqrt", "trig", "other", "total")
#: (label, model source, floating base) of the robots whose every kernel is counted.
ROBOTS = (
    ("Panda", "panda", False),
    ("PUMA 560", "examples/models/puma560.yaml", False),
    ("Talos", "talos", True),
)


def _load(source: str, floating_base: bool) -> symgen.Model:
    path = ROOT / source if "/" in source else robot_urdf(source)
    return symgen.load(path, floating_base=floating_base, couplings=False)  # as the peers


def timed_generate(model: symgen.Model, kernels=None) -> tuple[float, symgen.KernelSet]:
    """Wall time of ``symgen.generate`` (after a garbage collection) and its result."""
    gc.collect()
    start = time.perf_counter()
    ks = symgen.generate(model, kernels=kernels)
    return time.perf_counter() - start, ks


def model_info(model: symgen.Model) -> dict[str, Any]:
    return {"name": model.name, "nq": model.nq, "nv": model.nv, "bodies": len(model.bodies),
            "joints": len(model.joints), "frames": len(model.frames),
            "joint_types": dict(Counter(j.type.value for j in model.joints))}


def run(log: Callable[[str], None], robots=ROBOTS, panda_runs: int = PANDA_RUNS) -> dict[str, Any]:
    """Panda generation time (every default kernel, ``panda_runs`` runs) and every kernel's
    op counts for ``robots``."""
    panda = _load("panda", False)
    times = []
    for i in range(panda_runs):
        t, ks = timed_generate(panda)
        times.append(t)
        log(f"  panda, every default kernel, run {i + 1}: {t:.2f} s")
    out: dict[str, Any] = {
        "panda": {"model": model_info(panda), "programs": len(ks.programs), "times_s": times,
                  "median_s": statistics.median(times), "target_s": PANDA_TARGET_S},
        "robots": [],
    }
    for label, source, floating in robots:
        model = _load(source, floating)
        t, ks = timed_generate(model, kernels=list(KERNELS))
        log(f"  {label}: every kernel ({len(ks.programs)} programs) in {t:.1f} s")
        out["robots"].append({
            "label": label, "source": source, "floating_base": floating,
            "model": model_info(model), "generate_s": t, "ops": ks.op_counts(),
            "kernel_of": dict(ks.kernel_of), "frame_of": dict(ks.frame_of),
            "alternatives": dict(ks.alternatives), "choices": dict(ks.choices),
        })
    return out


def kernel_rows(r: dict[str, Any]) -> list[tuple[str, dict[str, int], str]]:
    """One row per kernel of KERNELS; per-frame kernels show their most expensive frame."""
    rows = []
    for kernel, spec in KERNELS.items():
        programs = [p for p, k in r["kernel_of"].items() if k == kernel]
        if not programs:
            continue
        if spec.per_frame:
            worst = max(programs, key=lambda p: r["ops"][p]["total"])
            rows.append((kernel, r["ops"][worst],
                         f"frame `{r['frame_of'][worst]}`, costliest of {len(programs)}"))
        else:
            alts = r["alternatives"].get(kernel, {})
            note = ""
            if kernel in r["choices"] and len(set(alts.values())) > 1:
                note = f"chosen: {r['choices'][kernel]} (" + ", ".join(
                    f"{a} {t:,}" for a, t in alts.items()) + ")"
            rows.append((kernel, r["ops"][kernel], note))
    return rows


def section(res: dict[str, Any]) -> str:
    """Markdown: Panda generation time and the robots' per-kernel op counts."""
    p = res["panda"]
    verdict = "met" if max(p["times_s"]) < p["target_s"] else "**missed**"
    parts = [
        f"Wall time of `symgen.generate(model)` for the Franka Panda (nv = "
        f"{p['model']['nv']}, {p['programs']} programs: every default kernel "
        f"`{'`, `'.join(k for k in DEFAULT_KERNELS if not KERNELS[k].loops)}`, per-frame "
        "kernels once per frame; the loop kernels need loop joints), "
        f"{len(p['times_s'])} run{'s' if len(p['times_s']) > 1 else ''}: "
        + ", ".join(f"{t:.2f} s" for t in p["times_s"])
        + f" (median {p['median_s']:.2f} s; the 10 s target is {verdict}).",
        "",
        "Every kernel of `symgen.kernels.KERNELS` (default options; `forward_dynamics` is the "
        "cheaper of the two methods, per-frame kernels show their costliest frame):",
    ]
    for r in res["robots"]:
        m = r["model"]
        joints = ", ".join(f"{n} {t}" for t, n in m["joint_types"].items())
        base = "floating base" if r["floating_base"] else "fixed base"
        parts += ["", f"**{r['label']}** (`{r['source']}`, {base}, nv = {m['nv']}, joints: "
                  f"{joints}; generated in {r['generate_s']:.1f} s)", ""]
        parts.append(table(["kernel", *OP_KINDS, "note"],
                           [[f"`{k}`", *(f"{ops[x]:,}" for x in OP_KINDS), note]
                            for k, ops, note in kernel_rows(r)], "l" + "r" * 7 + "l"))
    return "\n".join(parts)


def robot(res: dict[str, Any], label: str) -> dict[str, Any] | None:
    """The robot entry called ``label``, if measured."""
    return next((r for r in res.get("robots", []) if r["label"] == label), None)
