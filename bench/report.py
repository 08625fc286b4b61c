"""docs/benchmarks.md, rendered from the JSON results of ``python -m bench`` (every figure on
the page comes from those files; ratios are taken within one run of each section)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import embedded, generation
from .common import table
from .kernel_speed import KERNELS, PAIRS, ratios

PEER_NAMES = {"pinocchio": "Pinocchio (C++)", "casadi": "CasADi-generated Pinocchio",
              "mujoco": "MuJoCo"}
SHORT = {"inverse_dynamics": "ID", "mass_matrix": "M", "forward_dynamics_aba": "FD (ABA)",
         "forward_dynamics_ltdl": "FD (LTDL)", "mass_matrix_inverse": "M⁻¹"}
# Published anchors (other tools, other runs, their own counting rules).
SYMPYBOTICS_PUMA = {"mul": 503, "add": 454}
ROBOTRAN_HUMANOID = {"joints": 29, "inverse_dynamics": 4106, "mass_matrix_bias": 17414}


def _ns(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def _range(values: Sequence[float]) -> str:
    lo, hi = min(values), max(values)
    return f"×{lo:.1f}" if f"{lo:.1f}" == f"{hi:.1f}" else f"×{lo:.1f}–{hi:.1f}"


# ------------------------------------------------------------------------------ summary
def _losses(ks: Mapping[str, Any], label: str) -> list[str]:
    out = []
    for e in ks["results"]:
        for peer in PAIRS:
            for kernel, r in ratios(e, label, peer).items():
                if r < 1.0:
                    out.append(f"{SHORT[kernel]} on {e['model']} against {PEER_NAMES[peer]} "
                               f"(×{r:.2f})")
    return out


def summary(res: Mapping[str, Any]) -> str:
    """The honest summary: where symgen is ahead, behind, and the op counts behind it."""
    lines = []
    ks = res.get("kernel_speed")
    if ks and ks["results"]:
        label = next(iter(ks["builds"]))
        for peer, name in PEER_NAMES.items():
            per_kernel = {}
            for kernel in KERNELS:
                values = [ratios(e, label, peer).get(kernel) for e in ks["results"]]
                values = [v for v in values if v is not None]
                if values:
                    per_kernel[kernel] = values
            if per_kernel:
                wins = sum(v > 1 for vs in per_kernel.values() for v in vs)
                total = sum(len(vs) for vs in per_kernel.values())
                lines.append(f"- **Against {name}** (`{label}`): symgen is faster in {wins} of "
                             f"{total} model–kernel pairs; " + ", ".join(
                                 f"{SHORT[k]} {_range(v)}" for k, v in per_kernel.items())
                             + " (peer time / symgen time).")
        losses = _losses(ks, label)
        if losses:
            lines.append("- **Where symgen is behind** (`" + label + "`): " + "; ".join(losses)
                         + ".")
        op_lines = _op_ratio_lines(ks)
        if op_lines:
            lines.append("- **Why — op counts.** " + op_lines)
    sg = res.get("sympy_generation")
    if sg:
        lines.append("- **Generation speed:** " + _sympy_sentence(sg))
    gen = res.get("generation")
    if gen:
        lines.append("- **Published anchors:** " + _anchor_sentence(gen))
    lines.append(
        "- **Why symgen is ahead where it is:** its kernels are straight-line code for one "
        "model, with every structural zero and one folded away (axes, sparse inertias, local "
        "frames) and no loops, branches or joint-type dispatch; a numeric library pays for "
        "generality in every call.")
    if ks and ks["results"] and _losses(ks, next(iter(ks["builds"]))):
        lines.append(
            "- **Why it is behind where it is:** the LᵀDL forward dynamics and M⁻¹ programs "
            "have O(n²) operations (a chain's M is dense), while Pinocchio's ABA and "
            "computeMinverse are O(n) recursions, so long chains favour the recursive "
            "algorithms; against CasADi-generated code the speed ratios follow the op counts "
            "above (CasADi's SX graphs fold constants and share subexpressions too).")
    return "\n".join(lines)


def _op_ratio_lines(ks: Mapping[str, Any]) -> str:
    parts = []
    for e in ks["results"]:
        cas = e["ops"].get("casadi")
        if not cas:
            continue
        ours = e["ops"]["symgen"]
        pairs = (("inverse_dynamics", "rnea"), ("mass_matrix", "crba"))
        cells = [f"{SHORT[k]} {ours[k]['total']:,} vs {cas[c]['total']:,}" for k, c in pairs]
        fd = min(ours["forward_dynamics_aba"]["total"], ours["forward_dynamics_ltdl"]["total"])
        cells.append(f"FD {fd:,} vs {cas['aba']['total']:,}")
        parts.append(f"{e['model']}: " + ", ".join(cells))
    if not parts:
        return ""
    return ("symgen vs CasADi-generated Pinocchio operations per call (same counting rules): "
            + "; ".join(parts) + " (compare with the CasADi speed ratios in section 1).")


def _sympy_sentence(sg: Mapping[str, Any]) -> str:
    ok = [r for r in sg["sympy"] if r["status"] == "ok"]
    timed_out = [r for r in sg["sympy"] if r["status"].startswith("timeout")]
    ours = {r["n"]: r for r in sg["symgen_all"] if r["status"] == "ok"}
    if not ok:
        return "sympy produced no result."
    last = ok[-1]
    text = (f"sympy's KanesMethod needs {last['total_s']:.1f} s for M and forcing of the "
            f"{last['n']}-link chain, symgen {ours[last['n']]['total_s']:.2f} s for every "
            f"kernel" if last["n"] in ours else
            f"sympy's KanesMethod needs {last['total_s']:.1f} s at n = {last['n']}")
    if timed_out:
        text += f"; sympy passes {sg['timeout_s']:.0f} s at n = {timed_out[0]['n']}"
    big = max(ours)
    if big != last["n"]:
        text += (f"; symgen generates every kernel of the {big}-link chain in "
                 f"{ours[big]['total_s']:.2g} s")
    return text + "."


def _anchor_rows(gen: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    puma = generation.robot(gen, "PUMA 560")
    if puma:
        ops = puma["ops"]["inverse_dynamics"]
        rows.append(["PUMA 560 inverse dynamics", "SymPyBotics: 503 mul, 454 add (symbolic "
                     "inertial parameters)", f"{ops['mul']} mul, {ops['add']} add, "
                     f"{ops['trig']} sin/cos (numeric parameters)"])
    talos = generation.robot(gen, "Talos")
    if talos:
        nv = talos["model"]["nv"]
        idt = talos["ops"]["inverse_dynamics"]["total"]
        mb = talos["ops"]["mass_matrix"]["total"] + talos["ops"]["bias_forces"]["total"]
        j = ROBOTRAN_HUMANOID["joints"]
        rows.append(["humanoid inverse dynamics", f"ROBOTRAN, {j} joints: 4,106 flops "
                     f"({4106 / j:.0f} per joint)", f"Talos, nv = {nv}: {idt:,} ({idt / nv:.0f} "
                     "per DOF)"])
        rows.append(["humanoid mass matrix + bias", f"ROBOTRAN, {j} joints: 17,414 flops "
                     f"({17414 / j:.0f} per joint)", f"Talos, nv = {nv}: {mb:,} ({mb / nv:.0f} "
                     "per DOF)"])
    return rows


def _anchor_sentence(gen: Mapping[str, Any]) -> str:
    rows = _anchor_rows(gen)
    return "; ".join(f"{a}: {ours} against {theirs}" for a, theirs, ours in rows) + "."


# ------------------------------------------------------------------------------ sections
def kernel_speed_section(ks: Mapping[str, Any]) -> str:
    parts = [
        "symgen's generated C against each peer, timed by a small C/C++ program per tool "
        "(no Python in the loop) over the same pre-generated random states "
        f"({ks['settings']['states']} states, seed 0). Each program times "
        f"{ks['settings']['repeats']} passes over the states and reports the median pass; the "
        f"programs of all tools run {ks['settings']['rounds']} times, interleaved in rotating "
        "order, and a figure is the median over those rounds (ns per call; the min–max over "
        "the rounds is in the JSON under `spread`). Before any timing each program's results "
        "on the first state are checked against `symgen.reference` (relative error ≤ 1e-8; "
        "the worst errors are in the JSON). Cells: ns per call, and in brackets the ratio "
        "peer / symgen of that pair in this run (> 1: symgen is faster).",
        "",
        "What each peer call does:",
        "",
    ]
    versions = ks["versions"]
    if "pinocchio" in versions:
        parts.append(
            f"- **Pinocchio** {versions['pinocchio']}: `rnea`, `crba`, `aba`, "
            "`computeMinverse` from the pin wheel's headers, compiled with the same flags "
            "(with `-march=native` also `-DEIGEN_MAX_ALIGN_BYTES=16`, to match the wheel's "
            "libraries); `crba` and `computeMinverse` fill the upper triangle only.")
    if "casadi" in versions:
        parts.append(
            "- **CasADi-generated Pinocchio** (`cmeel-casadi-kin-dyn`; "
            + ", ".join(f"{k} {v}" for k, v in versions["casadi"].items())
            + "): RNEA, CRBA, ABA as CasADi SX functions, C generated by `Function.generate` "
            "and compiled with the same flags. Both FD columns are compared with its ABA.")
    if "mujoco" in versions:
        parts.append(
            f"- **MuJoCo** {versions['mujoco']}: "
            + " ".join(f"*{k.split()[1]}*: {v}" for k, v in ks.get("timed", {}).items())
            + " The library is the wheel's prebuilt binary, so the flags only reach the "
            "driver. MuJoCo's calls do more than a bare RNEA/CRBA/ABA (a full pipeline, dense "
            "copies): compare with care.")
    for peer, reason in ks.get("unavailable", {}).items():
        parts.append(f"- **{PEER_NAMES[peer]} not measured:** {reason}")
    skipped = [(e["model"], p, r) for e in ks["results"] for p, r in e["skipped"].items()]
    for model, peer, reason in skipped:
        parts.append(f"- {PEER_NAMES[peer]} skipped on {model}: {reason}")
    for label in ks["builds"]:
        parts += ["", f"### `{label}`"]
        for kernel in KERNELS:
            peers = [p for p in PAIRS if kernel in PAIRS[p] and any(
                PAIRS[p][kernel] in e["builds"][label]["ns"] for e in ks["results"])]
            rows = []
            for e in ks["results"]:
                ns = e["builds"][label]["ns"]
                row = [e["model"], e["nv"], _ns(ns[f"symgen {kernel}"])]
                for p in peers:
                    key = PAIRS[p][kernel]
                    row.append(f"{_ns(ns[key])} (×{ns[key] / ns[f'symgen {kernel}']:.2f})"
                               if key in ns else "–")
                rows.append(row)
            header = ["model", "nv", "symgen"] + [
                f"{PEER_NAMES[p]} `{PAIRS[p][kernel].split()[1]}`" for p in peers]
            parts += ["", f"**`{kernel}`** (ns per call)", "", table(header, rows)]
    return "\n".join(parts)


def casadi_section(ks: Mapping[str, Any]) -> str:
    rows = []
    label = next(iter(ks["builds"]))
    for e in ks["results"]:
        cas = e["ops"].get("casadi")
        if not cas:
            continue
        ours, ns = e["ops"]["symgen"], e["builds"][label]["ns"]
        row = [e["model"], e["nv"]]
        for kernel, fn in (("inverse_dynamics", "rnea"), ("mass_matrix", "crba"),
                           ("forward_dynamics_aba", "aba"), ("forward_dynamics_ltdl", "aba")):
            row.append(f"{ours[kernel]['total']:,} / {cas[fn]['total']:,} · "
                       f"×{ns[f'casadi {fn}'] / ns[f'symgen {kernel}']:.2f}")
        rows.append(row)
    if not rows:
        reason = ks.get("unavailable", {}).get("casadi", "not run")
        return f"CasADi-generated Pinocchio was not measured: {reason}."
    return "\n".join([
        "The strongest peer: Pinocchio's algorithms traced into CasADi SX graphs and emitted "
        "as C. Operation counts use symgen's rules for both (an n-term sum is n−1 add, "
        "negation and ±1 are free, sin/cos one `trig` each; CasADi's counts walk its "
        "instruction list). Cells: symgen ops / CasADi ops · speed ratio CasADi / symgen "
        f"(`{label}`, same run as above).",
        "",
        table(["model", "nv", "ID vs rnea", "M vs crba", "FD (ABA) vs aba", "FD (LTDL) vs aba"],
              rows),
    ])


def ops_section(ks: Mapping[str, Any] | None, gen: Mapping[str, Any] | None) -> str:
    parts = []
    if ks:
        rows = [[e["model"], e["nv"]] + [f"{e['ops']['symgen'][k]['total']:,}" for k in KERNELS]
                for e in ks["results"]]
        parts += ["Total operations per call of symgen's kernels (after CSE; counting rules as "
                  "above):", "", table(["model", "nv"] + [f"`{k}`" for k in KERNELS], rows)]
    if gen:
        parts += ["", "Next to the published anchors (their tools, their counting rules, "
                  "their models: context, not a like-for-like race):", "",
                  table(["kernel", "published", "symgen"], _anchor_rows(gen), "lll"), "",
                  "SymPyBotics keeps the inertial parameters symbolic, so each product with "
                  "one is a real multiplication; symgen bakes numeric parameters in. "
                  "ROBOTRAN's humanoid is not Talos (example-robot-data's `talos_reduced`, "
                  "floating base): only the per-joint figures say anything, and only roughly.",
                  "", "### Every kernel, robots", "", generation.section(gen)]
    return "\n".join(parts)


def sympy_section(sg: Mapping[str, Any], png: str | None) -> str:
    ok_check = "passed" if sg["check_ok"] else "**FAILED**"
    worst = max(max(c["rel_err"].values()) for c in sg["check"])
    rows = []
    by_n: dict[int, dict[str, Any]] = {}
    for key in ("sympy", "symgen_all", "symgen_mass_matrix_bias_forces"):
        for r in sg[key]:
            by_n.setdefault(r["n"], {})[key] = r

    def cell(r: Mapping[str, Any] | None) -> str:
        if r is None:
            return "–"
        if r["status"] != "ok":
            return r["status"]
        return f"{r['total_s']:.2f} s · {r['ops']['total']:,} ops"

    for n in sorted(by_n):
        d = by_n[n]
        rows.append([n, cell(d.get("sympy")), cell(d.get("symgen_mass_matrix_bias_forces")),
                     cell(d.get("symgen_all"))])
    parts = [
        "Wall time from the model to C source, and operations after CSE, on the n-link "
        "spatial chain (`symgen.robots.spatial_chain(n)`), each size in a fresh process. "
        "sympy: `KanesMethod.kanes_equations`, then `cse` and `ccode` of the mass matrix and "
        "forcing. symgen: `generate` + C emission, for M and bias forces alone (like for "
        "like) and for every default kernel. sympy " + sg["versions"]["sympy"] + f"; a size "
        f"that passes {sg['timeout_s']:.0f} s stops the sympy series. Consistency check "
        f"(sympy's M and forcing vs `symgen.reference` at n = 1 and 3): {ok_check}, worst "
        f"relative error {worst:.1e}.",
        "",
        table(["n", "sympy KanesMethod (M + forcing)", "symgen M + bias", "symgen every kernel"],
              rows),
    ]
    if png:
        parts += ["", f"![Generation time vs n]({png})"]
    return "\n".join(parts)


def machine_section(res: Mapping[str, Any]) -> str:
    m = next((r["machine"] for r in res.values() if r and "machine" in r), {})
    ks = res.get("kernel_speed") or {}
    versions = dict(ks.get("versions", {}))
    casadi = versions.pop("casadi", {})
    sg = res.get("sympy_generation")
    if sg:
        versions["sympy"] = sg["versions"]["sympy"]
    lines = [
        f"- **Machine:** {m.get('cpu', '?')}, {m.get('cores', '?')} cores; "
        f"{m.get('platform', '')}.",
        f"- **Date:** {m.get('date', '?')}; Python {m.get('python', '?')}, symgen "
        f"{m.get('symgen', '?')}.",
        f"- **Compilers:** {m.get('gcc', '?')}; {m.get('g++', '?')}. Flag sets: "
        + ", ".join(f"`{b}`" for b in ks.get("builds", {})) + ": symgen's C, CasADi's C "
        "and the MuJoCo driver with `gcc -std=c99 FLAGS`, Pinocchio with `g++ -std=c++17 "
        "FLAGS -DNDEBUG` and the wheel's compile definitions (MuJoCo's own library is the "
        "wheel's prebuilt binary).",
        "- **Peers:** " + ", ".join(f"{k} {v}" for k, v in versions.items())
        + ("; CasADi route: " + ", ".join(f"{k} {v}" for k, v in casadi.items()) if casadi
           else "") + ".",
    ]
    for name, r in res.items():
        if r and r.get("machine", {}).get("date") != m.get("date"):
            lines.append(f"- Section `{name}` was measured on {r['machine'].get('date')}.")
    return "\n".join(lines)


def render(res: Mapping[str, Any], png: str | None, command: str) -> str:
    """The whole page from the results of each section (``None``: section not run)."""
    ks, gen, sg, emb = (res.get(k) for k in ("kernel_speed", "generation", "sympy_generation",
                                             "embedded"))
    parts = [
        "# Benchmarks",
        "",
        "<!-- Written by `python -m bench`; do not edit by hand. -->",
        "",
        f"Reproduce with `{command}` (see `bench/README.md`; the `bench` extra and a C/C++ "
        "compiler are needed). Raw results: `bench/results/*.json`.",
        "",
        machine_section(res),
        "",
        "## Summary",
        "",
        summary(res),
    ]
    if ks:
        parts += ["", "## 1. Kernel speed", "", kernel_speed_section(ks),
                  "", "## 2. Generated-code peer: CasADi-generated Pinocchio", "",
                  casadi_section(ks)]
    if sg:
        parts += ["", "## 3. Generation speed: symgen vs sympy.physics.mechanics", "",
                  sympy_section(sg, png)]
    if ks or gen:
        parts += ["", "## 4. Operation counts", "", ops_section(ks, gen)]
    if emb:
        parts += ["", "## 5. Embedded: Cortex-M4", "", embedded.section(emb)]
    return "\n".join(parts) + "\n"


def relative_link(target: Path, page: Path) -> str:
    """``target`` relative to the page's folder (for the image link)."""
    import os

    return os.path.relpath(target, page.parent)
