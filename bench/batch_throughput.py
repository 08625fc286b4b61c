# ruff: noqa: E501  (the C driver below has long lines)
"""Batch throughput: the vectorised ``*_simd_batch`` (symgen.backends.simd.emit) against the scalar
``*_batch`` loop, states per second on one core, in the same run.

For each robot (Panda, UR5, Talos) the kernels inverse dynamics (ID), mass matrix (M) and
forward dynamics (FD) are generated once; the scalar source is compiled with the builder's
default flags (``-O2 -std=c99``), the simd source once per target (``native``, ``x86-64-v3``,
``portable``: :func:`symgen.backends.simd.target.simd_target`), and one C program per target times
both batch functions on the same random states (bench.common.random_states), at each batch
size, alternating scalar and simd passes; a figure is the median pass. The program also
reports the largest difference between the two outputs over all states, max|simd − scalar| /
max(max|scalar|, 1) per state (bench.common.relative_error's measure).

``python -m bench.batch_throughput [--quick] [--json PATH]`` prints a table;
:func:`measure` returns the results as a dict. Through numpy: see :data:`NUMPY_HOOK`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import symgen
from symgen.backends import C99_FLAGS, emit_simd, simd_target
from symgen.backends.c99.emit import CFunction, emit_c
from symgen.io.robots import robot_urdf

from .common import TIMING_DIR, log, machine_info, pin_to_one_cpu, random_states, table

ROBOTS = ("panda", "ur5", "talos")
#: Kernel label -> symgen kernel name.
KERNELS = {"ID": "inverse_dynamics", "M": "mass_matrix", "FD": "forward_dynamics"}
TARGETS = ("native", "x86-64-v3", "portable")
SIZES = (1_000, 100_000)
#: Timed passes per batch size (median kept): about 0.1-2 s per kernel and size.
REPEATS = {1_000: 41, 100_000: 9}

#: The numpy-wrapper measurement, once build.py compiles the simd backend: a function
#: ``(ks, states, target, sizes, repeats) -> {kernel label: {size: {"scalar": states/s,
#: "simd": states/s, "max_rel_diff": float}}}`` calling the compiled kernels' batch wrappers
#: (scalar and simd) on numpy arrays of ``size`` states. None: not measured.
NUMPY_HOOK: Callable[..., dict[str, Any]] | None = None

DRIVER_HEAD = r"""
#include "timing.h"
#include <string.h>
#include <math.h>
#include "m_simd.h"

/* median of R passes of the statement, in ns */
#define PASS(T0, T1, ...) do { T0 = bench_now_ns(); __VA_ARGS__; T1 = bench_now_ns(); } while (0)

static double worst(const double *s, const double *v, size_t states, size_t n) {
    double w = 0;
    for (size_t k = 0; k < states; ++k) {
        double d = 0, m = 1;
        for (size_t i = 0; i < n; ++i) {
            double x = s[k * n + i], e = v[k * n + i] - x;
            if (fabs(x) > m) m = fabs(x);
            if (fabs(e) > d || e != e) d = e != e ? 1e300 : fabs(e);
        }
        if (d / m > w) w = d / m;
    }
    return w;
}

static double median(double *x, int n) {
    qsort(x, (size_t)n, sizeof(double), bench_by_value);
    return x[n / 2];
}

int main(int argc, char **argv) {
    if (argc != 6) return 2;
    const size_t N = (size_t)atol(argv[1]), S1 = (size_t)atol(argv[2]), S2 = (size_t)atol(argv[3]);
    const int R1 = atoi(argv[4]), R2 = atoi(argv[5]);
    const size_t sizes[2] = {S1, S2};
    const int repeats[2] = {R1, R2};
    double ps[64], pv[64], t0, t1;
    printf("{\"width\": %lu, \"kernels\": {", (unsigned long)m_simd_width());
"""

KERNEL_BLOCK = r"""
    {
        double *os = malloc(N * {size} * sizeof(double)), *ov = malloc(N * {size} * sizeof(double));
        if (!os || !ov) return 3;
        memset(ov, 0xff, N * {size} * sizeof(double));
        printf("%s\"{label}\": {{", {first} ? "" : ", ");
        for (int z = 0; z < 2; ++z) {{
            const size_t S = sizes[z];
            for (int r = 0; r < repeats[z]; ++r) {{
                if (r % 2) {{
                    PASS(t0, t1, {scalar}(S, {args}, os)); ps[r] = t1 - t0;
                    PASS(t0, t1, {simd}(S, {args}, ov)); pv[r] = t1 - t0;
                }} else {{
                    PASS(t0, t1, {simd}(S, {args}, ov)); pv[r] = t1 - t0;
                    PASS(t0, t1, {scalar}(S, {args}, os)); ps[r] = t1 - t0;
                }}
            }}
            printf("%s\"%lu\": {{\"scalar_ns\": %.1f, \"simd_ns\": %.1f, \"max_rel_diff\": %.3g}}",
                   z ? ", " : "", (unsigned long)S, median(ps, repeats[z]), median(pv, repeats[z]),
                   worst(os, ov, S, {size}));
        }}
        printf("}}");
        free(os); free(ov);
    }}
"""


def driver_source(functions: Sequence[tuple[str, CFunction]]) -> str:
    """The timing program of the simd functions (prefix ``m``), each with its table label:
    every input array ``<name>`` is read from ``<name>.bin`` (N states)."""
    sizes = {s.name: s.size for _, f in functions for s in f.inputs}
    lines = [DRIVER_HEAD]
    lines += [f"    double *{n} = bench_load(\"{n}.bin\", N * {size});"
              for n, size in sorted(sizes.items())]
    for i, (label, f) in enumerate(functions):
        body = KERNEL_BLOCK.replace("{size}", str(f.outputs[0].size))
        body = body.replace("{label}", label).replace("{first}", "1" if i == 0 else "0")
        body = body.replace("{scalar}", f.name + "_batch").replace("{simd}", f.batch_name)
        body = body.replace("{args}", ", ".join(s.name for s in f.inputs))
        lines.append(body.replace("{{", "{").replace("}}", "}"))
    lines += ["    printf(\"}}\\n\");", "    return 0;", "}"]
    return "\n".join(lines)


def _run(cmd: Sequence[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(list(cmd), cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _wait(*procs: subprocess.Popen) -> None:
    for p in procs:
        out, _ = p.communicate()
        if p.returncode:
            raise RuntimeError(f"{' '.join(p.args)} failed:\n{out[-2000:]}")


def measure_robot(robot: str, targets: Sequence[str], sizes: Sequence[int],
                  repeats: dict[int, int], work: Path) -> dict[str, Any]:
    """Every target on one robot: {target: {"width", "flags", "kernels": {label: {size:
    {"scalar", "simd" (states/s), "ratio", "max_rel_diff"}}}}}."""
    model = symgen.load(robot_urdf(robot), couplings=False)  # as the peers
    ks = symgen.generate(model, list(KERNELS.values()))
    states = random_states(model, max(sizes), seed=0)
    scalar = emit_c(ks, "m")
    simd = emit_simd(ks, "m", scalar=scalar)
    scalar.write(work)
    simd.write(work)
    for key in ("q", "v", "a", "tau"):
        np.ascontiguousarray(states[key], dtype=np.float64).tofile(work / f"{key}.bin")
    labels = {f"m_{name}": label for label, name in KERNELS.items()}
    functions = [(labels[f.name], f) for f in simd.functions]
    (work / "driver.c").write_text(driver_source(functions))
    built = {t: simd_target(t) for t in targets}
    procs = [_run(["gcc", *C99_FLAGS, "-c", "m.c", "-o", "m.o"], work)]
    for t, tg in built.items():
        procs.append(_run(["gcc", *tg.flags, "-c", "m_simd.c", "-o", f"simd-{t}.o"], work))
    _wait(*procs)
    _wait(*(_run(["gcc", "-O2", "-std=c99", f"-I{TIMING_DIR}", "driver.c", "m.o",
                  f"simd-{t}.o", "-o", f"driver-{t}", *(f"-l{x}" for x in tg.libraries)], work)
            for t, tg in built.items()))
    s1, s2 = (sizes[0], sizes[-1])
    out: dict[str, Any] = {"nq": model.nq, "nv": model.nv, "targets": {}}
    for t, tg in built.items():
        run = subprocess.run([f"./driver-{t}", str(max(sizes)), str(s1), str(s2),
                              str(repeats[s1]), str(repeats[s2])], cwd=work,
                             capture_output=True, text=True, check=True)
        raw = json.loads(run.stdout)
        kernels = {}
        for label, per in raw["kernels"].items():
            kernels[label] = {}
            for size, r in per.items():
                n = int(size)
                scalar_rate, simd_rate = n / r["scalar_ns"] * 1e9, n / r["simd_ns"] * 1e9
                kernels[label][n] = {"scalar": scalar_rate, "simd": simd_rate,
                                     "ratio": simd_rate / scalar_rate,
                                     "max_rel_diff": r["max_rel_diff"]}
        out["targets"][t] = {"width": raw["width"], "flags": list(tg.flags),
                             "libraries": list(tg.libraries), "kernels": kernels}
        log(f"  {robot} {t} (W={raw['width']}): " + "; ".join(
            f"{label} " + " ".join(f"x{v['ratio']:.2f}" for v in per.values())
            for label, per in kernels.items()))
    if NUMPY_HOOK is not None:
        out["numpy"] = {t: NUMPY_HOOK(ks, states, t, sizes, repeats) for t in targets}
    return out


def measure(robots: Sequence[str] = ROBOTS, targets: Sequence[str] = TARGETS,
            sizes: Sequence[int] = SIZES, repeats: dict[int, int] | None = None
            ) -> dict[str, Any]:
    """States per second of the scalar and simd batch for every robot, target, kernel and
    batch size, on one pinned core; see the module documentation."""
    repeats = repeats or REPEATS
    cpu = pin_to_one_cpu()
    result: dict[str, Any] = {"machine": machine_info(), "cpu_pinned": cpu,
                              "sizes": list(sizes), "robots": {}}
    for robot in robots:
        log(f"{robot}:")
        with tempfile.TemporaryDirectory() as tmp:
            result["robots"][robot] = measure_robot(robot, targets, sizes, repeats, Path(tmp))
    return result


def report(result: dict[str, Any]) -> str:
    """A Markdown table: states/s (millions) scalar and simd, ratio, max relative diff."""
    rows = []
    for robot, r in result["robots"].items():
        for target, t in r["targets"].items():
            for label, per in t["kernels"].items():
                for size, v in per.items():
                    rows.append([robot, f"{target} (W={t['width']})", label, f"{int(size):,}",
                                 f"{v['scalar'] / 1e6:.3f}", f"{v['simd'] / 1e6:.3f}",
                                 f"{v['ratio']:.2f}", f"{v['max_rel_diff']:.1e}"])
    return table(["robot", "target", "kernel", "states", "scalar Mstates/s",
                  "simd Mstates/s", "simd/scalar", "max rel diff"], rows, "lllrrrrr")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Panda only, fewer passes")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    if args.quick:
        result = measure(("panda",), sizes=(1_000, 10_000), repeats={1_000: 11, 10_000: 5})
    else:
        result = measure()
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
