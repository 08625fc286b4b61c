# ruff: noqa: E501  (the C and C++ driver sources below have long lines)
"""Kernel speed: symgen's generated C against Pinocchio's C++ (the PyPI ``pin`` wheel), MuJoCo's
C API, Pinocchio-through-CasADi generated C and Pinocchio's own generated C (CppADCodeGen,
:mod:`bench.peers.pinocchio_codegen`: wherever Pinocchio's C++ side is timed), on the same
models and the same random states.

Every tool is timed by its own small C/C++ program (no Python in the loop) over the same
pre-generated states, written to binary files: ``repeats`` passes over all states, the median
pass divided by the number of states = ns per call. Each program first prints its results for
the first state, which are checked against :mod:`symgen.reference` (an independent
implementation) before any figure is kept. Everything is built once per flag set
(``BUILDS``); ratios peer/symgen are taken pair by pair within the same run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import symgen
from symgen import reference as ref
from symgen.peers.pinocchio import Bridge, pin_model_from_symgen

from .common import CACHE, CHECK_TOLERANCE, TIMING_DIR, relative_error, source_hash

#: symgen kernels timed, in report order.
KERNELS = ("inverse_dynamics", "mass_matrix", "forward_dynamics_aba", "forward_dynamics_ltdl",
           "mass_matrix_inverse")
#: The peer call each symgen kernel is compared with, per peer (None: no counterpart).
PAIRS: dict[str, dict[str, str]] = {
    "pinocchio": {"inverse_dynamics": "pinocchio rnea", "mass_matrix": "pinocchio crba",
                  "forward_dynamics_aba": "pinocchio aba", "forward_dynamics_ltdl": "pinocchio aba",
                  "mass_matrix_inverse": "pinocchio computeMinverse"},
    "casadi": {"inverse_dynamics": "casadi rnea", "mass_matrix": "casadi crba",
               "forward_dynamics_aba": "casadi aba", "forward_dynamics_ltdl": "casadi aba"},
    "mujoco": {"inverse_dynamics": "mujoco rne", "mass_matrix": "mujoco crb",
               "forward_dynamics_aba": "mujoco forward", "forward_dynamics_ltdl": "mujoco forward"},
    **{tool: {"inverse_dynamics": f"{key} rnea", "mass_matrix": f"{key} crba",
              "forward_dynamics_aba": f"{key} aba", "forward_dynamics_ltdl": f"{key} aba",
              "mass_matrix_inverse": f"{key} minv"}
       for tool, key in (("pinocchio_codegen", "pinocchio-codegen"),
                         ("pinocchio_codegen_ofast", "pinocchio-codegen-Ofast"))},
}
#: Pinocchio's code generation (peers/pinocchio_codegen.py): its generated functions timed
#: here, the tool name of each build variant ("": the build's flags; "-Ofast") and the
#: agreement with symgen.reference it must reach before its timings are kept.
PCG_KERNELS = ("rnea", "crba", "aba", "minv")
PCG_TOOLS = {"": "pinocchio_codegen", "-Ofast": "pinocchio_codegen_ofast"}
PCG_RTOL = 1e-11
#: A prepared tool: ``run(repeats)`` -> {"ns": {key: ns per call}, "check_error": {...}, ...}.
Runner = Callable[[int], dict[str, Any]]
#: Flag sets: label -> flags for gcc/g++ (symgen's C, the drivers, CasADi's C).
BUILDS: dict[str, list[str]] = {"-O3": ["-O3"], "-O3 -march=native": ["-O3", "-march=native"]}

SYMGEN_DRIVER = r"""
#include "timing.h"
#include "m.h"

int main(int argc, char **argv) {
    if (argc != 5) return 2;
    const int S = atoi(argv[1]), R = atoi(argv[2]), NQ = atoi(argv[3]), NV = atoi(argv[4]);
    const size_t nq = (size_t)NQ, nv = (size_t)NV;
    double *q = bench_load("q.bin", (size_t)S * nq), *v = bench_load("v.bin", (size_t)S * nv);
    double *a = bench_load("a.bin", (size_t)S * nv), *tau = bench_load("tau.bin", (size_t)S * nv);
    double *out = malloc(nv * nv * sizeof(double)), *pass = malloc((size_t)R * sizeof(double));
    double t[5];
    volatile double sink = 0;
    printf("{\"check\": {");
    m_inverse_dynamics(q, v, a, out); bench_print("inverse_dynamics", out, NV);
    m_mass_matrix(q, out); bench_print("mass_matrix", out, NV * NV);
    m_forward_dynamics_aba(q, v, tau, out); bench_print("forward_dynamics_aba", out, NV);
    m_forward_dynamics_ltdl(q, v, tau, out); bench_print("forward_dynamics_ltdl", out, NV);
    m_mass_matrix_inverse(q, out); bench_print("mass_matrix_inverse", out, NV * NV);
    BENCH_TIME(t[0], S, R, pass, m_inverse_dynamics(q + k * nq, v + k * nv, a + k * nv, out); sink = sink + out[0];);
    BENCH_TIME(t[1], S, R, pass, m_mass_matrix(q + k * nq, out); sink = sink + out[0];);
    BENCH_TIME(t[2], S, R, pass, m_forward_dynamics_aba(q + k * nq, v + k * nv, tau + k * nv, out); sink = sink + out[0];);
    BENCH_TIME(t[3], S, R, pass, m_forward_dynamics_ltdl(q + k * nq, v + k * nv, tau + k * nv, out); sink = sink + out[0];);
    BENCH_TIME(t[4], S, R, pass, m_mass_matrix_inverse(q + k * nq, out); sink = sink + out[0];);
    printf("\"done\": []}, \"ns\": {\"symgen inverse_dynamics\": %.3f, \"symgen mass_matrix\": %.3f, "
           "\"symgen forward_dynamics_aba\": %.3f, \"symgen forward_dynamics_ltdl\": %.3f, "
           "\"symgen mass_matrix_inverse\": %.3f}}\n", t[0], t[1], t[2], t[3], t[4]);
    return sink == 12345.678 ? 1 : 0;
}
"""

#: The C++ timing programs' standard headers and helpers (reading the state files, the
#: timing loop, printing results as JSON), around each program's Pinocchio headers.
CPP_INCLUDES = r"""
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>
"""
CPP_HELPERS = r"""
static std::vector<double> load(const char *path, size_t n) {
    std::vector<double> v(n);
    std::ifstream f(path, std::ios::binary);
    f.read(reinterpret_cast<char *>(v.data()), static_cast<std::streamsize>(n * sizeof(double)));
    if (!f) { std::fprintf(stderr, "cannot read %s\n", path); std::exit(2); }
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
template <class V> static void print(const char *name, const V &x) {
    std::printf("\"%s\": [", name);
    for (Eigen::Index i = 0; i < x.size(); ++i) std::printf("%s%.17g", i ? ", " : "", x.data()[i]);
    std::printf("], ");
}
"""
PINOCCHIO_DRIVER = CPP_INCLUDES + r"""#include <pinocchio/multibody.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/serialization.hpp>
""" + CPP_HELPERS + r"""int main(int argc, char **argv) {
    if (argc != 3) return 2;
    const int S = std::atoi(argv[1]), R = std::atoi(argv[2]);
    pinocchio::Model model;
    model.loadFromBinary("model.bin");
    pinocchio::Data data(model);
    const int NQ = model.nq, NV = model.nv;
    auto q = load("pq.bin", size_t(S) * NQ), v = load("pv.bin", size_t(S) * NV);
    auto a = load("pa.bin", size_t(S) * NV), tau = load("ptau.bin", size_t(S) * NV);
    using Vec = Eigen::Map<const Eigen::VectorXd>;
    volatile double sink = 0;
    std::printf("{\"check\": {");
    print("rnea", pinocchio::rnea(model, data, Vec(&q[0], NQ), Vec(&v[0], NV), Vec(&a[0], NV)));
    Eigen::MatrixXd M = pinocchio::crba(model, data, Vec(&q[0], NQ));
    print("crba", M);
    print("aba", pinocchio::aba(model, data, Vec(&q[0], NQ), Vec(&v[0], NV), Vec(&tau[0], NV)));
    Eigen::MatrixXd Minv = pinocchio::computeMinverse(model, data, Vec(&q[0], NQ));
    print("computeMinverse", Minv);
    std::printf("\"done\": []}, \"ns\": {");
    double t;
    t = time_ns([&](int k) { pinocchio::rnea(model, data, Vec(&q[k * NQ], NQ), Vec(&v[k * NV], NV), Vec(&a[k * NV], NV)); sink = sink + data.tau[0]; }, S, R);
    std::printf("\"pinocchio rnea\": %.3f, ", t);
    t = time_ns([&](int k) { pinocchio::crba(model, data, Vec(&q[k * NQ], NQ)); sink = sink + data.M(0, 0); }, S, R);
    std::printf("\"pinocchio crba\": %.3f, ", t);
    t = time_ns([&](int k) { pinocchio::aba(model, data, Vec(&q[k * NQ], NQ), Vec(&v[k * NV], NV), Vec(&tau[k * NV], NV)); sink = sink + data.ddq[0]; }, S, R);
    std::printf("\"pinocchio aba\": %.3f, ", t);
    t = time_ns([&](int k) { pinocchio::computeMinverse(model, data, Vec(&q[k * NQ], NQ)); sink = sink + data.Minv(0, 0); }, S, R);
    std::printf("\"pinocchio computeMinverse\": %.3f}}\n", t);
    return sink == 12345.678 ? 1 : 0;
}
"""


# ------------------------------------------------------------------------------ helpers
def _run(cmd: Sequence[str], cwd: Path, what: str) -> str:
    run = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True)
    if run.returncode:
        tail = "\n".join((run.stderr or run.stdout).strip().splitlines()[-15:])
        raise RuntimeError(f"{what} failed ({run.returncode}):\n{tail}")
    return run.stdout


def _checked(what: str, errors: Mapping[str, float], tolerance: float = CHECK_TOLERANCE
             ) -> dict[str, float]:
    bad = {k: e for k, e in errors.items() if not e <= tolerance}
    if bad:
        listed = ", ".join(f"{k} {e:.1e}" for k, e in bad.items())
        raise RuntimeError(f"{what} disagrees with symgen.reference: {listed}")
    return dict(errors)


def _expected(model: symgen.Model, states: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """symgen.reference's results for the first state (what every tool is checked against)."""
    q, v, a, tau = (states[k][0] for k in ("q", "v", "a", "tau"))
    m = ref.mass_matrix(model, q)
    return {"inverse_dynamics": ref.inverse_dynamics(model, q, v, a), "mass_matrix": m,
            "forward_dynamics": ref.forward_dynamics(model, q, v, tau),
            "mass_matrix_inverse": np.linalg.inv(m)}


# ------------------------------------------------------------------------------ Pinocchio
def cmeel_prefix() -> Path:
    """The pin wheel's cmeel prefix (Pinocchio's headers and libraries)."""
    return Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix"


def pinocchio_unavailable() -> str | None:
    """Why Pinocchio's C++ side cannot be built here, or None."""
    p = cmeel_prefix()
    if not (p / "include" / "pinocchio").is_dir():
        return "the pin wheel's C++ headers (cmeel.prefix/include/pinocchio) are missing"
    if not (p / "include" / "eigen3" / "Eigen").is_dir():
        return "Eigen's headers are missing (pip install cmeel-eigen, or the bench extra)"
    if shutil.which("g++") is None:
        return "g++ is not installed"
    return None


def pinocchio_flags(flags: Sequence[str]) -> list[str]:
    """g++ flags for Pinocchio's headers (peers.md: the wheel's compile definitions; with
    -march=native, Eigen's alignment pinned to the wheel's 16 bytes)."""
    p = cmeel_prefix()
    out = [f"-I{p / 'include'}", f"-I{p / 'include' / 'eigen3'}", "-DNDEBUG",
           "-DBOOST_MPL_LIMIT_LIST_SIZE=30", "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
           "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_FUSION_INVOKE_MAX_ARITY=12", "-w"]
    if any(f.startswith("-march") for f in flags):
        out += ["-DEIGEN_MAX_ALIGN_BYTES=16", "-DEIGEN_MAX_STATIC_ALIGN_BYTES=16"]
    return out


def build_pinocchio_program(source: str, flags: Sequence[str], label: str, what: str,
                            log: Callable[[str], None]) -> Path:
    """The C++ program ``source`` built against the pin wheel's headers with ``flags``,
    cached under bench/.cache as ``<label>-<hash>`` (a few minutes to build: Pinocchio is
    header-only templates)."""
    import pinocchio

    gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout
    key = source_hash(source, " ".join(flags), gxx, pinocchio.__version__, str(cmeel_prefix()))
    target = CACHE / f"{label}-{key}"
    if target.exists():
        return target
    log(f"  building {what} ({' '.join(flags)}; a few minutes, cached)")
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        work = Path(tmp)
        (work / "driver.cpp").write_text(source)
        lib = cmeel_prefix() / "lib"
        _run(["g++", "-std=c++17", *flags, *pinocchio_flags(flags), "driver.cpp", "-o", "driver",
              f"-L{lib}", f"-Wl,-rpath,{lib}", "-lboost_serialization"], work, f"building {what}")
        (work / "driver").replace(target)
    return target


def pinocchio_driver(flags: Sequence[str], log: Callable[[str], None]) -> Path:
    """The Pinocchio timing program built with ``flags`` (:func:`build_pinocchio_program`)."""
    return build_pinocchio_program(PINOCCHIO_DRIVER, flags, "pinocchio-driver",
                                   "Pinocchio's timing program", log)


def prepare_pinocchio(model: symgen.Model, states: Mapping[str, np.ndarray], driver: Path,
                      work: Path) -> Runner:
    """Pinocchio's rnea, crba, aba, computeMinverse on ``states`` (converted with the Bridge):
    writes the model and states to ``work``; ``run(repeats)`` times and checks them."""
    pm = pin_model_from_symgen(model)
    pm.saveToBinary(str(work / "model.bin"))
    br = Bridge(model, pm)
    n = len(states["q"])
    np.array([br.q_to_pin(q) for q in states["q"]]).tofile(work / "pq.bin")
    for key in ("v", "a", "tau"):
        np.ascontiguousarray(states[key][:, br.perm]).tofile(work / f"p{key}.bin")
    exp, nv = _expected(model, states), model.nv

    def sym(x: list) -> np.ndarray:  # Eigen is column-major; crba/Minv fill the upper triangle
        m = np.array(x).reshape(nv, nv).T
        return np.triu(m) + np.triu(m, 1).T

    def run(repeats: int) -> dict[str, Any]:
        out = json.loads(_run([str(driver), str(n), str(repeats)], work,
                              "Pinocchio's timing program"))
        c = out["check"]
        errors = {
            "rnea": relative_error(br.v_from_pin(np.array(c["rnea"])), exp["inverse_dynamics"]),
            "crba": relative_error(br.matrix_from_pin(sym(c["crba"])), exp["mass_matrix"]),
            "aba": relative_error(br.v_from_pin(np.array(c["aba"])), exp["forward_dynamics"]),
            "computeMinverse": relative_error(br.matrix_from_pin(sym(c["computeMinverse"])),
                                              exp["mass_matrix_inverse"]),
        }
        return {"ns": out["ns"], "check_error": _checked(f"Pinocchio on {model.name}", errors)}

    return run


# ------------------------------------------------------------------------------ Pinocchio codegen
def prepare_pinocchio_codegen(model: symgen.Model, states: Mapping[str, np.ndarray],
                              flags: Sequence[str], work: Path, log: Callable[[str], None]
                              ) -> tuple[dict[str, Runner], dict[str, Any]]:
    """Pinocchio's CppADCodeGen C of rnea, crba, aba, computeMinverse
    (:mod:`bench.peers.pinocchio_codegen`), compiled with ``flags`` and with -Ofast: a
    runner per variant (checked against symgen.reference to PCG_RTOL) and the op counts /
    code sizes."""
    from .peers import pinocchio_codegen as pcg

    runs, info = pcg.prepare(model, states, PCG_KERNELS, flags, work, log)
    exp = _expected(model, states)
    names = {"rnea": "inverse_dynamics", "crba": "mass_matrix", "aba": "forward_dynamics",
             "minv": "mass_matrix_inverse"}

    def wrap(tool: str, run: Callable[[int], dict[str, Any]]) -> Runner:
        key = PAIRS[tool]["inverse_dynamics"].split()[0]

        def runner(repeats: int) -> dict[str, Any]:
            out = run(repeats)
            errors = {k: relative_error(out["outputs"][k], exp[names[k]]) for k in PCG_KERNELS}
            return {"ns": {f"{key} {k}": v for k, v in out["ns"].items()},
                    "check_error": _checked(f"{tool} on {model.name}", errors, PCG_RTOL)}

        return runner

    return {PCG_TOOLS[s]: wrap(PCG_TOOLS[s], run) for s, run in runs.items()}, info


# ------------------------------------------------------------------------------ symgen
def prepare_symgen(model: symgen.Model, ks: symgen.KernelSet, states: Mapping[str, np.ndarray],
                   flags: Sequence[str], work: Path) -> Runner:
    """symgen's kernels (``ks``, written with prefix ``m``) compiled with ``gcc flags`` in
    ``work``; ``run(repeats)`` times them and checks the first state."""
    symgen.write_c(ks, work, prefix="m")
    for key in ("q", "v", "a", "tau"):
        np.ascontiguousarray(states[key], dtype=np.float64).tofile(work / f"{key}.bin")
    (work / "driver.c").write_text(SYMGEN_DRIVER)
    _run(["gcc", "-std=c99", *flags, "-c", "m.c", "-o", "m.o"], work, "compiling symgen's C")
    _run(["gcc", "-std=c99", *flags, f"-I{TIMING_DIR}", "driver.c", "m.o", "-o", "driver",
          "-lm"], work,
         "building symgen's timing program")
    n, nv = len(states["q"]), model.nv
    exp = _expected(model, states)

    def run(repeats: int) -> dict[str, Any]:
        out = json.loads(_run(["./driver", str(n), str(repeats), str(model.nq), str(nv)], work,
                              "symgen's timing program"))
        c = out["check"]
        errors = {
            "inverse_dynamics": relative_error(c["inverse_dynamics"], exp["inverse_dynamics"]),
            "mass_matrix": relative_error(np.reshape(c["mass_matrix"], (nv, nv)),
                                          exp["mass_matrix"]),
            "forward_dynamics_aba": relative_error(c["forward_dynamics_aba"],
                                                   exp["forward_dynamics"]),
            "forward_dynamics_ltdl": relative_error(c["forward_dynamics_ltdl"],
                                                    exp["forward_dynamics"]),
            "mass_matrix_inverse": relative_error(np.reshape(c["mass_matrix_inverse"], (nv, nv)),
                                                  exp["mass_matrix_inverse"]),
        }
        return {"ns": out["ns"], "check_error": _checked(f"symgen on {model.name}", errors)}

    return run


# ------------------------------------------------------------------------------ one model
def measure_model(name: str, model: symgen.Model, states: Mapping[str, np.ndarray],
                  repeats: int, rounds: int, builds: Mapping[str, list[str]],
                  peers: Mapping[str, Any], log: Callable[[str], None]) -> dict[str, Any]:
    """Every tool on one model, every build; ``peers`` maps a peer name to what it needs
    (Pinocchio: {flag label: driver}, CasADi: its venv, MuJoCo: True). A peer that cannot
    express the model is recorded under ``skipped`` with the reason.

    Per build, every tool's program is built first and then run ``rounds`` times, the tools
    interleaved (the order rotating each round), each run timing ``repeats`` passes; a
    figure is the median over the rounds. Interleaving keeps slow drifts of the machine
    (frequency, neighbours on a shared host) from landing on one tool only."""
    from .peers import casadi_peer, mujoco_peer

    ks = symgen.generate(model, list(KERNELS))
    entry: dict[str, Any] = {
        "model": name, "nq": model.nq, "nv": model.nv,
        "floating_base": any(j.type.value == "free" for j in model.joints),
        "states": len(states["q"]), "repeats": repeats, "rounds": rounds,
        "ops": {"symgen": {k: c for k, c in ks.op_counts().items() if k in KERNELS}},
        "builds": {}, "check_error": {}, "skipped": {}, "timed": {},
    }
    for label, flags in builds.items():
        with tempfile.TemporaryDirectory() as tmp:
            runners: dict[str, Runner] = {}
            code: dict[str, Any] = {}  # machine-code bytes, when Pinocchio's codegen runs

            def folder(tool: str) -> Path:
                (Path(tmp) / tool).mkdir()
                return Path(tmp) / tool

            runners["symgen"] = prepare_symgen(model, ks, states, flags, folder("symgen"))
            if "pinocchio" in peers:
                runners["pinocchio"] = prepare_pinocchio(model, states, peers["pinocchio"][label],
                                                         folder("pinocchio"))
            if "mujoco" in peers:
                runners["mujoco"] = mujoco_peer.prepare(model, states, flags, folder("mujoco"))
            if "pinocchio" in peers and "pinocchio_codegen" not in entry["skipped"]:
                from .peers import pinocchio_codegen as pcg

                reason = pcg.unavailable()
                if reason:
                    entry["skipped"]["pinocchio_codegen"] = reason
                else:
                    pcg_runners, info = prepare_pinocchio_codegen(
                        model, states, flags, folder("pinocchio_codegen"), log)
                    runners.update(pcg_runners)
                    entry["ops"]["pinocchio_codegen"] = info["ops"]
                    entry["generation_pinocchio_codegen"] = info["generation"]
                    entry["pinocchio_codegen_versions"] = dict(pcg.PACKAGES)
                    code = {PCG_TOOLS[s]: c for s, c in info["code_bytes"].items()}
                    code["symgen"] = symgen_code_bytes(Path(tmp) / "symgen" / "m.o")
                    entry["ops"]["symgen_c"] = pcg.symgen_c_ops(Path(tmp) / "symgen" / "m.c",
                                                                KERNELS)
            if "casadi" in peers and "casadi" not in entry["skipped"]:
                try:
                    runners["casadi"] = casadi_peer.prepare(model, states, flags,
                                                            folder("casadi"), peers["casadi"])
                except NotImplementedError as exc:
                    entry["skipped"]["casadi"] = str(exc)
            samples: dict[str, list[float]] = {}
            tools = list(runners)
            for r in range(rounds):
                for tool in tools[r % len(tools):] + tools[:r % len(tools)]:
                    result = runners[tool](repeats)
                    entry["check_error"][tool] = result["check_error"]
                    for key, value in result["ns"].items():
                        samples.setdefault(key, []).append(value)
                    if tool == "mujoco":
                        entry["timed"].update(result["timed"])
                    if tool == "casadi":
                        entry["ops"]["casadi"] = result["ops"]
        entry["builds"][label] = {
            "ns": {k: float(np.median(v)) for k, v in samples.items()},
            "spread": {k: [min(v), max(v)] for k, v in samples.items()},
        }
        if code:
            entry["builds"][label]["code_bytes"] = code
        log(f"  {name} {label}: " + "; ".join(
            f"{peer} " + " ".join(f"x{ratio:.2f}" for ratio in ratios(entry, label, peer).values())
            for peer in PAIRS if ratios(entry, label, peer)))
    return entry


def symgen_code_bytes(obj: Path) -> dict[str, int | None]:
    """Machine-code bytes of each symgen kernel in ``obj`` (its function and its parts)."""
    from .peers.pinocchio_codegen import code_bytes

    return {k: code_bytes([obj], lambda s, k=k: s == f"m_{k}" or s.startswith(f"m_{k}_part"))
            for k in KERNELS}


def ratios(entry: Mapping[str, Any], label: str, peer: str) -> dict[str, float]:
    """peer / symgen ns per call for each symgen kernel with a counterpart (> 1: symgen faster)."""
    ns = entry["builds"][label]["ns"]
    return {k: ns[p] / ns[f"symgen {k}"] for k, p in PAIRS[peer].items()
            if p in ns and f"symgen {k}" in ns}
