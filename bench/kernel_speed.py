# ruff: noqa: E501  (the C++ driver source below has long lines)
"""Kernel speed: symgen's generated C against Pinocchio's C++ (the PyPI ``pin`` wheel), timed
in one C++ loop over the same pre-generated random states, pair by pair in the same run.

    python bench/kernel_speed.py [--quick] [--states 1000] [--repeats 7]

For each model: symgen generates inverse_dynamics, mass_matrix, forward_dynamics (ABA and
LTDL) and mass_matrix_inverse; Pinocchio's model is built from the same symgen model
(``pin_model_from_symgen``) and saved with its binary serialization; the states are
converted with the Bridge (joint order, quaternion and velocity layouts). A C++ driver links
the generated C and Pinocchio, checks that both give the same results on the first state,
and times each kernel: ``repeats`` passes over all states, the median pass divided by the
number of states (ns per call). Two builds: ``-O3`` and ``-O3 -march=native``.
Writes bench/results/kernel_speed.json and prints a table of peer/symgen ratios.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pinocchio as pin  # noqa: E402

import symgen  # noqa: E402
from symgen import reference as ref  # noqa: E402
from symgen.peers.pinocchio import Bridge, pin_model_from_symgen  # noqa: E402
from symgen.robots import robot_urdf, spatial_chain  # noqa: E402

KERNELS = {  # symgen program -> (pinocchio call, output kind)
    "inverse_dynamics": "rnea",
    "mass_matrix": "crba",
    "forward_dynamics_aba": "aba",
    "forward_dynamics_ltdl": "aba",
    "mass_matrix_inverse": "computeMinverse",
}
ROBOTS = [("ur5", False), ("panda", False), ("xarm7", False), ("solo12", True), ("talos", True)]
CHAINS = (2, 5, 10, 20, 50)

DRIVER = r"""
#include <chrono>
#include <cstdio>
#include <fstream>
#include <vector>
#include <algorithm>
#include <cstdlib>
#include <pinocchio/multibody.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/serialization.hpp>
extern "C" {  // the generated kernels (prefix m), linked per model
void m_inverse_dynamics(const double *q, const double *v, const double *a, double *tau);
void m_mass_matrix(const double *q, double *M);
void m_forward_dynamics_aba(const double *q, const double *v, const double *tau, double *a);
void m_forward_dynamics_ltdl(const double *q, const double *v, const double *tau, double *a);
void m_mass_matrix_inverse(const double *q, double *Minv);
}
static std::vector<double> load(const char *path, size_t n) {
    std::vector<double> v(n);
    std::ifstream f(path, std::ios::binary);
    f.read(reinterpret_cast<char *>(v.data()), static_cast<std::streamsize>(n * sizeof(double)));
    return v;
}
template <class F> static double time_ns(F f, int states, int repeats) {
    std::vector<double> passes;
    for (int r = 0; r < repeats; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < states; ++k) f(k);
        auto t1 = std::chrono::steady_clock::now();
        passes.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / states);
    }
    std::sort(passes.begin(), passes.end());
    return passes[passes.size() / 2];
}
int main(int argc, char **argv) {
    const int S = std::atoi(argv[1]), R = std::atoi(argv[2]);
    const int PNQ = std::atoi(argv[3]), NQ = std::atoi(argv[4]), NV = std::atoi(argv[5]);
    pinocchio::Model model;
    model.loadFromBinary("model.bin");
    pinocchio::Data data(model);
    auto q = load("q.bin", size_t(S) * NQ), v = load("v.bin", size_t(S) * NV);
    auto a = load("a.bin", size_t(S) * NV), tau = load("tau.bin", size_t(S) * NV);
    auto pq = load("pq.bin", size_t(S) * PNQ), pv = load("pv.bin", size_t(S) * NV);
    auto pa = load("pa.bin", size_t(S) * NV), ptau = load("ptau.bin", size_t(S) * NV);
    std::vector<double> out(size_t(NV) * NV);
    volatile double sink = 0;
    using Vec = Eigen::Map<const Eigen::VectorXd>;
    // one result of each, for the consistency check in Python
    m_inverse_dynamics(&q[0], &v[0], &a[0], out.data());
    printf("{\"check_id\": [");
    for (int i = 0; i < NV; ++i) printf("%s%.17g", i ? "," : "", out[i]);
    Eigen::VectorXd tid = pinocchio::rnea(model, data, Vec(&pq[0], PNQ), Vec(&pv[0], NV), Vec(&pa[0], NV));
    printf("], \"check_pin_id\": [");
    for (int i = 0; i < NV; ++i) printf("%s%.17g", i ? "," : "", tid[i]);
    printf("], \"ns\": {");
    double t;
    t = time_ns([&](int k) { m_inverse_dynamics(&q[k * NQ], &v[k * NV], &a[k * NV], out.data()); sink = sink + out[0]; }, S, R);
    printf("\"symgen inverse_dynamics\": %.3f,", t);
    t = time_ns([&](int k) { m_mass_matrix(&q[k * NQ], out.data()); sink = sink + out[0]; }, S, R);
    printf("\"symgen mass_matrix\": %.3f,", t);
    t = time_ns([&](int k) { m_forward_dynamics_aba(&q[k * NQ], &v[k * NV], &tau[k * NV], out.data()); sink = sink + out[0]; }, S, R);
    printf("\"symgen forward_dynamics_aba\": %.3f,", t);
    t = time_ns([&](int k) { m_forward_dynamics_ltdl(&q[k * NQ], &v[k * NV], &tau[k * NV], out.data()); sink = sink + out[0]; }, S, R);
    printf("\"symgen forward_dynamics_ltdl\": %.3f,", t);
    t = time_ns([&](int k) { m_mass_matrix_inverse(&q[k * NQ], out.data()); sink = sink + out[0]; }, S, R);
    printf("\"symgen mass_matrix_inverse\": %.3f,", t);
    t = time_ns([&](int k) { pinocchio::rnea(model, data, Vec(&pq[k * PNQ], PNQ), Vec(&pv[k * NV], NV), Vec(&pa[k * NV], NV)); sink = sink + data.tau[0]; }, S, R);
    printf("\"pinocchio rnea\": %.3f,", t);
    t = time_ns([&](int k) { pinocchio::crba(model, data, Vec(&pq[k * PNQ], PNQ)); sink = sink + data.M(0, 0); }, S, R);
    printf("\"pinocchio crba\": %.3f,", t);
    t = time_ns([&](int k) { pinocchio::aba(model, data, Vec(&pq[k * PNQ], PNQ), Vec(&pv[k * NV], NV), Vec(&ptau[k * NV], NV)); sink = sink + data.ddq[0]; }, S, R);
    printf("\"pinocchio aba\": %.3f,", t);
    t = time_ns([&](int k) { pinocchio::computeMinverse(model, data, Vec(&pq[k * PNQ], PNQ)); sink = sink + data.Minv(0, 0); }, S, R);
    printf("\"pinocchio computeMinverse\": %.3f", t);
    printf("}}\n");
    return sink == 12345.678 ? 1 : 0;
}
"""


def cmeel_prefix() -> Path:
    return Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix"


def pin_flags(native: bool) -> list[str]:
    p = cmeel_prefix()
    flags = [f"-I{p / 'include'}", f"-I{p / 'include' / 'eigen3'}", "-DNDEBUG",
             "-DBOOST_MPL_LIMIT_LIST_SIZE=30", "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
             "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_FUSION_INVOKE_MAX_ARITY=12"]
    if native:
        flags += ["-DEIGEN_MAX_ALIGN_BYTES=16", "-DEIGEN_MAX_STATIC_ALIGN_BYTES=16"]
    return flags


BUILDS = {"-O3": [], "-O3 -march=native": ["-march=native"]}


def build_drivers(work: Path) -> dict[str, Path]:
    """The C++ driver (Pinocchio side and timing loops) compiled once per flag set."""
    (work / "driver.cpp").write_text(DRIVER)
    out = {}
    for label, arch in BUILDS.items():
        obj = work / f"driver{len(out)}.o"
        subprocess.run(["g++", "-std=c++17", "-O3", *arch, *pin_flags(bool(arch)), "-c",
                        "driver.cpp", "-o", obj.name], cwd=work, check=True)
        out[label] = obj
    return out


def measure(name: str, model: symgen.Model, states: int, repeats: int, work: Path,
            drivers: dict[str, Path]) -> dict:
    ks = symgen.generate(model, list(KERNELS))
    ks.write(work, prefix="m")
    pm = pin_model_from_symgen(model)
    pm.saveToBinary(str(work / "model.bin"))
    br = Bridge(model, pm)
    rng = np.random.default_rng(0)
    cols: dict[str, list] = {k: [] for k in ("q", "v", "a", "tau", "pq", "pv", "pa", "ptau")}
    for _ in range(states):
        q = ref.random_configuration(model, rng)
        v, a, tau = (rng.normal(size=model.nv) for _ in range(3))
        for key, value in (("q", q), ("v", v), ("a", a), ("tau", tau), ("pq", br.q_to_pin(q)),
                           ("pv", br.v_to_pin(v)), ("pa", br.v_to_pin(a)),
                           ("ptau", br.v_to_pin(tau))):
            cols[key].append(value)
    for key, rows in cols.items():
        np.asarray(rows, dtype=np.float64).tofile(work / f"{key}.bin")
    results = {"model": name, "nq": model.nq, "nv": model.nv,
               "ops": {k: c["total"] for k, c in ks.op_counts().items()}}
    p = cmeel_prefix()
    for label, arch in BUILDS.items():
        subprocess.run(["gcc", "-O3", *arch, "-std=c99", "-c", "m.c", "-o", "m.o"], cwd=work,
                       check=True)
        subprocess.run(["g++", str(drivers[label]), "m.o", "-o", "driver", f"-L{p / 'lib'}",
                        f"-Wl,-rpath,{p / 'lib'}", "-lboost_serialization"], cwd=work,
                       check=True)
        run = subprocess.run(["./driver", str(states), str(repeats), str(pm.nq),
                              str(model.nq), str(model.nv)], cwd=work, check=True,
                             capture_output=True, text=True)
        out = json.loads(run.stdout)
        ours = np.array(out["check_id"])
        theirs = br.v_from_pin(np.array(out["check_pin_id"]))
        err = float(np.max(np.abs(ours - theirs)) / max(np.max(np.abs(theirs)), 1.0))
        if err > 1e-9:
            raise RuntimeError(f"{name}: symgen and Pinocchio disagree ({err:.1e})")
        results[label] = {"ns": out["ns"], "check_error": err}
    return results


def ratios(entry: dict, label: str) -> dict[str, float]:
    ns = entry[label]["ns"]
    return {k: ns[f"pinocchio {v}"] / ns[f"symgen {k}"] for k, v in KERNELS.items()}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def render(machine: dict, entries: list[dict]) -> str:
    """docs/kernel-speed.md: ns per call and Pinocchio/symgen ratios, pair by pair."""
    lines = [
        "# Kernel speed: symgen vs Pinocchio",
        "",
        "<!-- Written by bench/kernel_speed.py; re-run it to refresh. -->",
        "",
        "symgen's generated C against Pinocchio's C++ (the PyPI `pin` wheel's headers and",
        "libraries), timed in one C++ loop over the same pre-generated random states (no Python",
        "in the loop): nanoseconds per call, the median of the repeated passes, and the ratio",
        "Pinocchio / symgen computed pair by pair in the same run (> 1: symgen is faster).",
        "Both sides are checked to agree on the first state before timing.",
        "",
        f"Machine: {machine['cpu']}, {machine['cores']} cores; Python {machine['python']}, "
        f"Pinocchio {machine['pinocchio']}, symgen {machine['symgen']}, {machine['compiler']}; "
        f"{machine['states']} states, median of {machine['repeats']} passes; "
        f"{machine['date']}.",
        "",
    ]
    pairs = [("inverse_dynamics", "rnea"), ("mass_matrix", "crba"),
             ("forward_dynamics_aba", "aba"), ("forward_dynamics_ltdl", "aba"),
             ("mass_matrix_inverse", "computeMinverse")]
    for label in BUILDS:
        lines += [f"## `{label}`", "",
                  "| model | nv | " + " | ".join(f"{k} vs {v}" for k, v in pairs) + " |",
                  "|---|---:|" + "---:|" * len(pairs)]
        for e in entries:
            ns = e[label]["ns"]
            cells = [f"{ns[f'symgen {k}']:.0f} / {ns[f'pinocchio {v}']:.0f} ns "
                     f"(x{ns[f'pinocchio {v}'] / ns[f'symgen {k}']:.2f})" for k, v in pairs]
            lines.append(f"| {e['model']} | {e['nv']} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["Cells: symgen / Pinocchio ns per call (ratio). Raw numbers:",
              "`bench/results/kernel_speed.json`.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="UR5 only, 200 states")
    parser.add_argument("--states", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "results" /
                        "kernel_speed.json")
    args = parser.parse_args()
    if shutil.which("g++") is None:
        sys.exit("g++ is needed to build the Pinocchio side")
    models = [(f"{r}", symgen.load(robot_urdf(r), floating_base=f)) for r, f in ROBOTS]
    models += [(f"chain{n}", spatial_chain(n)) for n in CHAINS]
    states = args.states
    if args.quick:
        models, states = models[:1], 200
    entries = []
    build = Path(tempfile.mkdtemp(prefix="symgen-bench-"))
    print("building the Pinocchio driver (about a minute)", flush=True)
    drivers = build_drivers(build)
    for name, model in models:
        with tempfile.TemporaryDirectory() as tmp:
            entry = measure(name, model, states, args.repeats, Path(tmp), drivers)
        entries.append(entry)
        r = ratios(entry, "-O3")
        print(f"{name:8s} nv={entry['nv']:3d}  " + "  ".join(
            f"{k.replace('forward_dynamics', 'fd')} {entry['-O3']['ns'][f'symgen {k}']:8.1f} ns "
            f"(x{r[k]:.2f})" for k in KERNELS))
    gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout
    machine = {"cpu": cpu_model(), "cores": os.cpu_count(), "python": sys.version.split()[0],
               "pinocchio": pin.__version__, "symgen": symgen.__version__,
               "compiler": gxx.splitlines()[0], "states": states, "repeats": args.repeats,
               "date": datetime.date.today().isoformat()}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"machine": machine, "results": entries}, indent=1))
    if not args.quick:
        (ROOT / "docs" / "kernel-speed.md").write_text(render(machine, entries))
    shutil.rmtree(build, ignore_errors=True)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
