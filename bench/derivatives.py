# ruff: noqa: E501  (the C and C++ driver sources below have long lines)
"""Derivatives: symgen's ``inverse_dynamics_derivatives`` and ``forward_dynamics_derivatives``
against Pinocchio's C++ ``computeRNEADerivatives`` / ``computeABADerivatives`` (Carpentier &
Mansard 2018), against the same derivatives as straight-line C from Pinocchio's own code
generation (CppADCodeGen: ``CodeGenRNEADerivatives`` / ``CodeGenABADerivatives``,
:mod:`bench.peers.pinocchio_codegen`, at -O3 and -Ofast) and against CasADi-generated C of the
Jacobians of Pinocchio's RNEA and ABA (cmeel-casadi-kin-dyn), on the UR5, Panda, Solo12 and
Talos, in one run; and the generation time of symgen's two derivative kernels.

    python -m bench.derivatives                    # the four robots, 1000 states
    python -m bench.derivatives --quick            # UR5 and Panda, 200 states
    python -m bench.derivatives --robots ur5 --states 50 --out /tmp/x

``python -m bench`` runs it as its ``derivatives`` section (section 10 of
docs/benchmarks.md). A run of chosen robots writes ``derivatives.json`` only where ``--out``
says, so that it never replaces the full results.

Every derivative is in the tangent space (columns along q ⊕ δ, docs/derivatives.md), which
is Pinocchio's convention; the CasADi route differentiates RNEA(integrate(q, δ), v, a) in δ
at δ = 0 (:mod:`bench.peers.casadi_derivatives`). What each call computes:

- symgen ∂ID: ∂τ/∂q, ∂τ/∂v. symgen ∂FD: ∂q̈/∂q, ∂q̈/∂v and ∂q̈/∂τ = M⁻¹.
- Pinocchio ``computeRNEADerivatives(model, data, q, v, a)``: ∂τ/∂q, ∂τ/∂v and M (= ∂τ/∂a);
  ``computeABADerivatives(model, data, q, v, τ)``: ∂q̈/∂q, ∂q̈/∂v and M⁻¹. Its generated C
  (``drnea_forward_zero``, ``daba_forward_zero``) returns the same three matrices; it must
  also agree with symgen's to PCG_AGREEMENT.
- CasADi: ∂τ/∂q, ∂τ/∂v; ∂q̈/∂q, ∂q̈/∂v (no M⁻¹: it does a little less than the others).

States: :func:`bench.common.random_states` (seed 0). Timing as :mod:`bench.kernel_speed`:
one C/C++ program per tool (``-O3``), ``repeats`` passes over the states, the median pass
per state; the programs run ``rounds`` times interleaved (rotating order) on one pinned
core; a figure is the median over the rounds. Before any timing, every tool's first-state
matrices are checked against central differences of :mod:`symgen.reference` (numpy, step
1e-6: relative error ≤ 1e-6 required) and compared with each other.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import symgen
from symgen.apps.verify.reference_queries import REFERENCES, ReferenceQuery
from symgen.formulations.tree.context import TreeContext
from symgen.io.robots import robot_urdf
from symgen.peers.pinocchio import Bridge, pin_model_from_symgen

from .common import (
    RESULTS,
    TIMING_DIR,
    log,
    machine_info,
    pin_to_one_cpu,
    random_states,
    relative_error,
    table,
    write_json,
)
from .kernel_speed import CPP_HELPERS, CPP_INCLUDES
from .user_build import time_user_build

ROBOTS = (("ur5", False), ("panda", False), ("solo12", True), ("talos", True))
MODES: dict[str, dict[str, Any]] = {
    "full": {"robots": ROBOTS, "states": 1000, "repeats": 7, "rounds": 5},
    "quick": {"robots": ROBOTS[:2], "states": 200, "repeats": 5, "rounds": 3},
    "smoke": {"robots": ROBOTS[:1], "states": 50, "repeats": 3, "rounds": 2},
}
FLAGS = ("-O3",)
ID, FD = "inverse_dynamics_derivatives", "forward_dynamics_derivatives"
#: Outputs compared across tools: (symgen kernel, output, the tools' key for it).
MATRICES = ((ID, "dtau_dq", "did_dq"), (ID, "dtau_dv", "did_dv"),
            (FD, "dqdd_dq", "dfd_dq"), (FD, "dqdd_dv", "dfd_dv"))
#: Agreement with central differences of symgen.reference required before timing.
CHECK_RTOL = 1e-6
#: The goal of the issue: symgen at least this many times faster than Pinocchio.
GOAL = 2.0
#: Pinocchio's generated C (peers/pinocchio_codegen.py): the tool of each build variant of
#: it ("": FLAGS; "-Ofast", Pinocchio's default) and the agreement with symgen's matrices it
#: must reach (besides the central differences).
PCG_TOOLS = {"": "pinocchio_codegen", "-Ofast": "pinocchio_codegen_ofast"}
PCG_AGREEMENT = 1e-9
Runner = Callable[[int], dict[str, Any]]

SYMGEN_DRIVER = r"""
#include "timing.h"
#include "m.h"

int main(int argc, char **argv) {
    if (argc != 5) return 2;
    const int S = atoi(argv[1]), R = atoi(argv[2]), NQ = atoi(argv[3]), NV = atoi(argv[4]);
    const size_t nq = (size_t)NQ, nv = (size_t)NV;
    double *q = bench_load("q.bin", (size_t)S * nq), *v = bench_load("v.bin", (size_t)S * nv);
    double *a = bench_load("a.bin", (size_t)S * nv), *tau = bench_load("tau.bin", (size_t)S * nv);
    double *o1 = malloc(nv * nv * sizeof(double)), *o2 = malloc(nv * nv * sizeof(double));
    double *o3 = malloc(nv * nv * sizeof(double)), *pass = malloc((size_t)R * sizeof(double));
    double t_id, t_fd;
    volatile double sink = 0;
    printf("{\"check\": {");
    m_inverse_dynamics_derivatives(q, v, a, o1, o2);
    bench_print("did_dq", o1, NV * NV); bench_print("did_dv", o2, NV * NV);
    m_forward_dynamics_derivatives(q, v, tau, o1, o2, o3);
    bench_print("dfd_dq", o1, NV * NV); bench_print("dfd_dv", o2, NV * NV);
    printf("\"done\": []}, ");
    BENCH_TIME(t_id, S, R, pass, m_inverse_dynamics_derivatives(q + k * nq, v + k * nv, a + k * nv, o1, o2); sink = sink + o1[0];);
    BENCH_TIME(t_fd, S, R, pass, m_forward_dynamics_derivatives(q + k * nq, v + k * nv, tau + k * nv, o1, o2, o3); sink = sink + o1[0];);
    printf("\"ns\": {\"id\": %.3f, \"fd\": %.3f}}\n", t_id, t_fd);
    return sink == 12345.678 ? 1 : 0;
}
"""

PINOCCHIO_DRIVER = CPP_INCLUDES + r"""#include <pinocchio/multibody.hpp>
#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/rnea-derivatives.hpp>
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
    pinocchio::computeRNEADerivatives(model, data, Vec(&q[0], NQ), Vec(&v[0], NV), Vec(&a[0], NV));
    print("did_dq", data.dtau_dq); print("did_dv", data.dtau_dv);
    pinocchio::computeABADerivatives(model, data, Vec(&q[0], NQ), Vec(&v[0], NV), Vec(&tau[0], NV));
    print("dfd_dq", data.ddq_dq); print("dfd_dv", data.ddq_dv);
    std::printf("\"done\": []}, \"ns\": {");
    double t;
    t = time_ns([&](int k) { pinocchio::computeRNEADerivatives(model, data, Vec(&q[k * NQ], NQ), Vec(&v[k * NV], NV), Vec(&a[k * NV], NV)); sink = sink + data.dtau_dq(0, 0); }, S, R);
    std::printf("\"id\": %.3f, ", t);
    t = time_ns([&](int k) { pinocchio::computeABADerivatives(model, data, Vec(&q[k * NQ], NQ), Vec(&v[k * NV], NV), Vec(&tau[k * NV], NV)); sink = sink + data.ddq_dq(0, 0); }, S, R);
    std::printf("\"fd\": %.3f}}\n", t);
    return sink == 12345.678 ? 1 : 0;
}
"""

CASADI_DRIVER = r"""
#include "timing.h"

typedef double casadi_real;
typedef long long int casadi_int;  /* the generator's casadi_int */
int cas_drnea(const casadi_real **arg, casadi_real **res, casadi_int *iw, casadi_real *w, int mem);
int cas_daba(const casadi_real **arg, casadi_real **res, casadi_int *iw, casadi_real *w, int mem);

enum { NQ = @NQ@, NV = @NV@, SZ_ARG = @SZ_ARG@, SZ_RES = @SZ_RES@, SZ_IW = @SZ_IW@,
       SZ_W = @SZ_W@ };
static const casadi_real *arg[SZ_ARG];
static casadi_real *res[SZ_RES];
static casadi_int iw[SZ_IW];
static casadi_real w[SZ_W];
static casadi_real o1[NV * NV], o2[NV * NV];
static volatile double sink = 0;

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    const int S = atoi(argv[1]), R = atoi(argv[2]);
    double *q = bench_load("q.bin", (size_t)S * NQ), *v = bench_load("v.bin", (size_t)S * NV);
    double *a = bench_load("a.bin", (size_t)S * NV), *tau = bench_load("tau.bin", (size_t)S * NV);
    double *pass = malloc((size_t)R * sizeof(double)), t_id, t_fd;
    res[0] = o1; res[1] = o2;
    printf("{\"check\": {");
    arg[0] = q; arg[1] = v; arg[2] = a; cas_drnea(arg, res, iw, w, 0);
    bench_print("did_dq", o1, NV * NV); bench_print("did_dv", o2, NV * NV);
    arg[2] = tau; cas_daba(arg, res, iw, w, 0);
    bench_print("dfd_dq", o1, NV * NV); bench_print("dfd_dv", o2, NV * NV);
    printf("\"done\": []}, ");
    BENCH_TIME(t_id, S, R, pass, arg[0] = q + (size_t)k * NQ; arg[1] = v + (size_t)k * NV; arg[2] = a + (size_t)k * NV; cas_drnea(arg, res, iw, w, 0); sink = sink + o1[0];);
    BENCH_TIME(t_fd, S, R, pass, arg[0] = q + (size_t)k * NQ; arg[1] = v + (size_t)k * NV; arg[2] = tau + (size_t)k * NV; cas_daba(arg, res, iw, w, 0); sink = sink + o1[0];);
    printf("\"ns\": {\"id\": %.3f, \"fd\": %.3f}}\n", t_id, t_fd);
    return sink == 12345.678 ? 1 : 0;
}
"""


def _run(cmd: Sequence[str], cwd: Path, what: str, timeout: float = 7200) -> str:
    run = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if run.returncode:
        tail = "\n".join((run.stderr or run.stdout).strip().splitlines()[-15:])
        raise RuntimeError(f"{what} failed ({run.returncode}):\n{tail}")
    return run.stdout


def load_robot(name: str, floating: bool) -> symgen.Model:
    """The robot as the peers read it (gripper mimic joints as independent joints)."""
    return symgen.load(robot_urdf(name), floating_base=floating, couplings=False)


def reference_matrices(model: symgen.Model, states: Mapping[str, np.ndarray]
                       ) -> dict[str, np.ndarray]:
    """The first state's four matrices from central differences of symgen.reference (the
    numpy references the registry gives the derivative kernels)."""
    state = {k: states[k][0] for k in ("q", "v", "a", "tau")}
    query = ReferenceQuery(model, state, None, TreeContext(model))
    out = {**REFERENCES[ID](query), **REFERENCES[FD](query)}
    return {key: np.asarray(out[name]) for _, name, key in MATRICES}


def _checked(tool: str, got: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray]
             ) -> dict[str, float]:
    errors = {key: relative_error(got[key], expected[key]) for key in expected}
    bad = {k: e for k, e in errors.items() if not e <= CHECK_RTOL}
    if bad:
        raise RuntimeError(f"{tool} disagrees with central differences of symgen.reference: "
                           + ", ".join(f"{k} {e:.1e}" for k, e in bad.items()))
    return errors


# ------------------------------------------------------------------------------ symgen
def prepare_symgen(model: symgen.Model, ks: symgen.KernelSet, states: Mapping[str, np.ndarray],
                   work: Path) -> Runner:
    symgen.write_c(ks, work, prefix="m")
    for key in ("q", "v", "a", "tau"):
        np.ascontiguousarray(states[key], dtype=np.float64).tofile(work / f"{key}.bin")
    (work / "driver.c").write_text(SYMGEN_DRIVER)
    _run(["gcc", "-std=c99", *FLAGS, "-c", "m.c", "-o", "m.o"], work, "compiling symgen's C")
    _run(["gcc", "-std=c99", *FLAGS, f"-I{TIMING_DIR}", "driver.c", "m.o", "-o", "driver",
          "-lm"], work, "building symgen's timing program")
    n, nv = len(states["q"]), model.nv
    code = code_bytes(work / "m.o")

    def run(repeats: int) -> dict[str, Any]:
        out = json.loads(_run(["./driver", str(n), str(repeats), str(model.nq), str(nv)],
                              work, "symgen's timing program"))
        got = {k: np.reshape(x, (nv, nv)) for k, x in out["check"].items() if k != "done"}
        return {"ns": out["ns"], "matrices": got, "code_bytes": code}

    return run


def code_bytes(obj: Path) -> dict[str, int]:
    """Machine-code bytes of each kernel in ``obj`` (its function and its parts; ``nm -S``),
    empty where nm is missing."""
    try:
        listing = _run(["nm", "-S", str(obj)], obj.parent, "nm")
    except (OSError, RuntimeError):
        return {}
    out = {"id": 0, "fd": 0}
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] in "Tt":
            for kind, kernel in (("id", ID), ("fd", FD)):
                if fields[3] == f"m_{kernel}" or fields[3].startswith(f"m_{kernel}_part"):
                    out[kind] += int(fields[1], 16)
    return out


# ------------------------------------------------------------------------------ Pinocchio
def pinocchio_unavailable() -> str | None:
    from .kernel_speed import pinocchio_unavailable as reason

    return reason()


def pinocchio_driver() -> Path:
    """The derivatives timing program (``-O3``), cached under bench/.cache."""
    from .kernel_speed import build_pinocchio_program

    return build_pinocchio_program(PINOCCHIO_DRIVER, FLAGS, "pinocchio-derivatives-driver",
                                   "Pinocchio's derivatives program", log)


def prepare_pinocchio(model: symgen.Model, states: Mapping[str, np.ndarray], driver: Path,
                      work: Path) -> Runner:
    pm = pin_model_from_symgen(model)
    pm.saveToBinary(str(work / "model.bin"))
    br = Bridge(model, pm)
    n, nv = len(states["q"]), model.nv
    np.array([br.q_to_pin(q) for q in states["q"]]).tofile(work / "pq.bin")
    for key in ("v", "a", "tau"):
        np.ascontiguousarray(states[key][:, br.perm]).tofile(work / f"p{key}.bin")

    def run(repeats: int) -> dict[str, Any]:
        out = json.loads(_run([str(driver), str(n), str(repeats)], work,
                              "Pinocchio's derivatives program"))
        got = {k: br.matrix_from_pin(np.reshape(x, (nv, nv)))  # Data's RowMatrixXs
               for k, x in out["check"].items() if k != "done"}
        return {"ns": out["ns"], "matrices": got}

    return run


# ------------------------------------------------------------------------------ Pinocchio codegen
def prepare_pinocchio_codegen(model: symgen.Model, states: Mapping[str, np.ndarray],
                              work: Path) -> tuple[dict[str, Runner], dict[str, Any]]:
    """CppADCodeGen's C of Pinocchio's ``computeRNEADerivatives`` / ``computeABADerivatives``
    (``CodeGenRNEADerivatives``, ``CodeGenABADerivatives``; :mod:`bench.peers.pinocchio_codegen`)
    at FLAGS and at -Ofast: ({tool: runner}, info with op counts and code sizes)."""
    from .peers import pinocchio_codegen as pcg

    runs, info = pcg.prepare(model, states, ("drnea", "daba"), FLAGS, work, log)

    def wrap(run: Callable[[int], dict[str, Any]]) -> Runner:
        def runner(repeats: int) -> dict[str, Any]:
            out = run(repeats)
            o = out["outputs"]
            return {"ns": {"id": out["ns"]["drnea"], "fd": out["ns"]["daba"]},
                    "matrices": {"did_dq": o["drnea"]["dq"], "did_dv": o["drnea"]["dv"],
                                 "dfd_dq": o["daba"]["dq"], "dfd_dv": o["daba"]["dv"]}}

        return runner

    return {PCG_TOOLS[s]: wrap(run) for s, run in runs.items()}, info


# ------------------------------------------------------------------------------ CasADi
def prepare_casadi(model: symgen.Model, states: Mapping[str, np.ndarray], venv: Path,
                   work: Path) -> tuple[Runner, dict[str, Any]]:
    """CasADi's C of the Jacobians (generated in ``venv``), compiled; (runner, info)."""
    from .peers.casadi_peer import Layout, _python
    from .peers.urdf_writer import floating_base, urdf_from_model

    (work / "model.urdf").write_text(urdf_from_model(model))
    script = Path(__file__).with_name("peers") / "casadi_derivatives.py"
    cmd = [str(_python(venv)), str(script), str(work / "model.urdf"), str(work)]
    if floating_base(model):
        cmd.append("--floating")
    started = time.perf_counter()
    _run(cmd, work, "CasADi's derivative codegen")
    info = json.loads((work / "layout.json").read_text())
    info["seconds"]["codegen_wall"] = time.perf_counter() - started
    lay = Layout(model, info)
    for key, perm in (("q", lay.qperm), ("v", lay.vperm), ("a", lay.vperm),
                      ("tau", lay.vperm)):
        np.ascontiguousarray(states[key][:, perm]).tofile(work / f"{key}.bin")
    fns = info["functions"]
    sizes = {key: max(max(int(f[key]) for f in fns.values()), 1)
             for key in ("sz_arg", "sz_res", "sz_iw", "sz_w")}
    sizes["sz_arg"], sizes["sz_res"] = max(sizes["sz_arg"], 3), max(sizes["sz_res"], 2)
    driver = CASADI_DRIVER.replace("@NQ@", str(model.nq)).replace("@NV@", str(model.nv))
    for key, value in sizes.items():
        driver = driver.replace(f"@{key.upper()}@", str(value))
    (work / "driver.c").write_text(driver)
    started = time.perf_counter()
    objects = []
    for source in (*(f["file"] for f in fns.values()), "driver.c"):
        _run(["gcc", "-std=c99", *FLAGS, f"-I{TIMING_DIR}", "-c", source, "-o",
              source[:-2] + ".o"], work, f"gcc {source}")
        objects.append(source[:-2] + ".o")
    _run(["gcc", "-std=c99", *FLAGS, *objects, "-o", "driver", "-lm"], work, "linking")
    info["seconds"]["compile"] = time.perf_counter() - started
    n, nv = len(states["q"]), model.nv

    def run(repeats: int) -> dict[str, Any]:
        out = json.loads(_run(["./driver", str(n), str(repeats)], work,
                              "CasADi's derivatives program"))
        got = {k: lay.matrix_from_pin(np.reshape(x, (nv, nv)).T)  # CasADi: column-major
               for k, x in out["check"].items() if k != "done"}
        return {"ns": out["ns"], "matrices": got}

    return run, info


# ------------------------------------------------------------------------------ one robot
def measure_robot(name: str, floating: bool, count: int, repeats: int, rounds: int,
                  peers: Mapping[str, Any], user_build: bool = False) -> dict[str, Any]:
    """Every tool on one robot (module docstring); with ``user_build``, also a user's own
    build of ∂FD (:mod:`bench.user_build`), after the interleaved rounds."""
    model = load_robot(name, floating)
    states = random_states(model, count, seed=0)
    started = time.perf_counter()
    ks = symgen.generate(model, [ID, FD])
    generation_s = time.perf_counter() - started
    ops = ks.op_counts()
    entry: dict[str, Any] = {
        "model": name, "nq": model.nq, "nv": model.nv, "states": count, "repeats": repeats,
        "rounds": rounds, "generation_s": generation_s,
        "ops": {"symgen": {"id": ops[ID], "fd": ops[FD]}},
        "fd_method": ks.choices.get(FD, ""), "fd_methods": ks.alternatives.get(FD, {}),
        "id_method": ks.choices.get(ID, ""), "id_methods": ks.alternatives.get(ID, {}),
        "ns": {}, "spread": {}, "check_error": {}, "agreement": {}, "seconds": {},
    }
    log(f"  {name}: symgen generated both kernels in {generation_s:.1f} s "
        f"(∂ID {ops[ID]['total']:,} ops, ∂FD {ops[FD]['total']:,} ops, {entry['fd_method']})")
    expected = reference_matrices(model, states)
    with tempfile.TemporaryDirectory() as tmp:
        def folder(tool: str) -> Path:
            (Path(tmp) / tool).mkdir()
            return Path(tmp) / tool

        started = time.perf_counter()
        runners: dict[str, Runner] = {"symgen": prepare_symgen(model, ks, states,
                                                               folder("symgen"))}
        entry["seconds"]["symgen_compile"] = time.perf_counter() - started
        if "pinocchio" in peers:
            runners["pinocchio"] = prepare_pinocchio(model, states, peers["pinocchio"],
                                                     folder("pinocchio"))
        if "pinocchio_codegen" in peers:
            from .peers import pinocchio_codegen as pcg

            started = time.perf_counter()
            pcg_runners, info = prepare_pinocchio_codegen(model, states,
                                                          folder("pinocchio_codegen"))
            runners.update(pcg_runners)
            entry["seconds"]["pinocchio_codegen"] = time.perf_counter() - started
            entry["ops"]["pinocchio_codegen"] = {"id": info["ops"]["drnea"],
                                                 "fd": info["ops"]["daba"]}
            counted = pcg.symgen_c_ops(Path(tmp) / "symgen" / "m.c", (ID, FD))
            entry["ops"]["symgen_c"] = {"id": counted[ID], "fd": counted[FD]}
            entry["generation_pinocchio_codegen"] = info["generation"]
            entry["code_bytes_peers"] = {
                PCG_TOOLS[s]: {"id": c["drnea"], "fd": c["daba"]}
                for s, c in info["code_bytes"].items()}
        if "casadi" in peers:
            runners["casadi"], info = prepare_casadi(model, states, peers["casadi"],
                                                     folder("casadi"))
            entry["ops"]["casadi"] = {"id": info["functions"]["drnea"]["ops"],
                                      "fd": info["functions"]["daba"]["ops"]}
            entry["seconds"]["casadi"] = info["seconds"]
        samples: dict[str, list[dict[str, float]]] = {}
        matrices: dict[str, dict[str, np.ndarray]] = {}
        tools = list(runners)
        for r in range(rounds):
            for tool in tools[r % len(tools):] + tools[:r % len(tools)]:
                out = runners[tool](repeats)
                samples.setdefault(tool, []).append(out["ns"])
                if tool not in matrices:
                    matrices[tool] = out["matrices"]
                    if "code_bytes" in out:
                        entry["code_bytes"] = out["code_bytes"]
                    entry["check_error"][tool] = _checked(f"{tool} on {name}", out["matrices"],
                                                          expected)
    for tool in matrices:
        if tool != "symgen":
            entry["agreement"][tool] = max(relative_error(matrices[tool][k],
                                                          matrices["symgen"][k])
                                           for k in expected)
            if tool in PCG_TOOLS.values() and not entry["agreement"][tool] <= PCG_AGREEMENT:
                raise RuntimeError(f"{tool} on {name} differs from symgen by "
                                   f"{entry['agreement'][tool]:.1e} (> {PCG_AGREEMENT:g})")
    for kind in ("id", "fd"):
        entry["ns"][kind] = {t: float(np.median([s[kind] for s in v]))
                             for t, v in samples.items()}
        entry["spread"][kind] = {t: [min(s[kind] for s in v), max(s[kind] for s in v)]
                                 for t, v in samples.items()}
    log(f"  {name}: " + "; ".join(
        f"{kind} " + ", ".join(f"{t} {ns:,.0f} ns" for t, ns in entry["ns"][kind].items())
        for kind in ("id", "fd")))
    if user_build:
        started = time.perf_counter()
        entry["user_build"] = {"fd": time_user_build(name, floating, FD, states, repeats)}
        log(f"  {name}: a user's build of ∂FD (symgen generate + gcc -O3, own harness): "
            f"{entry['user_build']['fd']['ns']:,.0f} ns "
            f"({time.perf_counter() - started:.0f} s to build and time)")
    return entry


def ratio(entry: Mapping[str, Any], kind: str, tool: str) -> float | None:
    """tool / symgen ns per call (> 1: symgen faster), or None when not measured."""
    ns = entry["ns"][kind]
    return ns[tool] / ns["symgen"] if tool in ns else None


def measure(robots: Sequence[tuple[str, bool]], count: int, repeats: int, rounds: int,
            mode: str = "full", out: Path | None = None, casadi_venv: Path | None = None
            ) -> dict[str, Any]:
    """Every robot, the content of ``derivatives.json`` (written to ``out`` as it goes)."""
    log(f"derivatives: ∂ID and ∂FD, {', '.join(n for n, _ in robots)}")
    started = time.perf_counter()
    unavailable: dict[str, str] = {}
    peers: dict[str, Any] = {}
    reason = ("skipped by --smoke (building Pinocchio's C++ program takes minutes)"
              if mode == "smoke" else pinocchio_unavailable())
    if reason:
        unavailable["pinocchio"] = reason
    else:
        peers["pinocchio"] = pinocchio_driver()
    from .peers import pinocchio_codegen as pcg

    reason = ("skipped by --smoke (building Pinocchio's code generator takes 6-15 min, once)"
              if mode == "smoke" else pcg.unavailable())
    if reason:
        unavailable["pinocchio_codegen"] = reason
    else:
        pcg.generator(log)
        peers["pinocchio_codegen"] = True
    if casadi_venv is None:
        unavailable["casadi"] = "not requested (--no-casadi or --smoke)"
    else:
        from .peers import casadi_peer

        reason = casadi_peer.setup(casadi_venv)
        if reason:
            unavailable["casadi"] = reason
        else:
            peers["casadi"] = casadi_venv
    versions: dict[str, Any] = {}
    if "pinocchio" in peers:
        import pinocchio

        versions["pinocchio"] = pinocchio.__version__
    if "pinocchio_codegen" in peers:
        versions["pinocchio codegen"] = dict(pcg.PACKAGES)
    if "casadi" in peers:
        from .peers import casadi_peer

        versions["casadi route"] = casadi_peer.versions(casadi_venv)
    res: dict[str, Any] = {
        "machine": machine_info(), "versions": versions, "unavailable": unavailable,
        "settings": {"states": count, "repeats": repeats, "rounds": rounds, "seed": 0,
                     "flags": list(FLAGS), "check_rtol": CHECK_RTOL, "goal": GOAL},
        "results": [], "complete": False,
    }
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    res["settings"]["pinned_cpu"] = pin_to_one_cpu()
    try:
        for name, floating in robots:
            res["results"].append(measure_robot(name, floating, count, repeats, rounds, peers,
                                                user_build=mode != "smoke"))
            if out is not None:
                write_json(out, res)
    finally:
        if cpus is not None:
            os.sched_setaffinity(0, cpus)
    res["complete"] = True
    res["seconds"] = time.perf_counter() - started
    if out is not None:
        write_json(out, res)
    return res


# ------------------------------------------------------------------------------ page
KINDS = {"id": "∂ID (∂τ/∂q, ∂τ/∂v)", "fd": "∂FD (∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ)"}
TOOLS = {"pinocchio": "Pinocchio (C++)", "pinocchio_codegen": "Pinocchio codegen",
         "pinocchio_codegen_ofast": "Pinocchio codegen -Ofast", "casadi": "CasADi-generated"}


#: What the figures show (the page's explanation of where symgen loses).
WHY = (
    "**Why.** symgen's derivatives are Carpentier & Mansard's analytical recursions written "
    "out as a straight-line program (`symgen.formulations.analytical_derivatives`, "
    "docs/derivatives.md): every quantity in the frame of the tree's root hinge (a floating "
    "base's own frame, where its six columns cost almost nothing), the subtree sums of the "
    "inertia's variation reduced to six symmetric entries plus the momentum, and ∂FD as "
    "−M⁻¹∂ID through the sparse LᵀDL factor: the one part of the kernel printed as loops "
    "(each row operation of the two triangular sweeps one loop over the columns, which the "
    "compiler vectorises; `symgen.ir.solve.Solve`), M⁻¹ = L⁻¹D⁻¹L⁻ᵀ itself straight-line, "
    "one triangle. Pinocchio's code generation writes out the same recursions in the world "
    "frame, with dense 6×6 blocks and dense M⁻¹ products: more operations (the table "
    "above), and on Talos ∂FD more machine code than the L2 cache holds. Where symgen is "
    "behind the ×2 against Pinocchio's C++, the last table's operations per ns show how "
    "much faster its present programs would have to run.")

#: The goals of the code-generation comparison: symgen at least this many times faster than
#: Pinocchio's generated C at both flag sets, on ∂ID and ∂FD.
PCG_GOAL = 1.2
#: The page's symgen figure and a user's own build of the same kernel must agree within this
#: (bench/user_build.py: `symgen generate` + gcc -O3, its own timing harness).
USER_BUILD_AGREEMENT = 0.15


def _ns(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def goal_rate(entry: Mapping[str, Any], kind: str, goal: float) -> float | None:
    """Operations per ns symgen's ``kind`` program must run at to meet the goal (×``goal``
    against Pinocchio, faster than CasADi), or None when no peer was measured."""
    ns = entry["ns"][kind]
    limits = [ns[t] / g for t, g in (("pinocchio", goal), ("casadi", 1.0)) if t in ns]
    return entry["ops"]["symgen"][kind]["total"] / min(limits) if limits else None


def _cell(entry: Mapping[str, Any], kind: str, tool: str) -> str:
    r = ratio(entry, kind, tool)
    return "—" if r is None else f"{_ns(entry['ns'][kind][tool])} (×{r:.2f})"


def _ops(entry: Mapping[str, Any], kind: str, tool: str) -> str:
    counts = entry["ops"].get(tool)
    return "—" if counts is None else f"{counts[kind]['total']:,}"


def _behind(res: Mapping[str, Any]) -> list[str]:
    """Every robot–kernel–peer where symgen misses the goal (Pinocchio: ×GOAL; its generated
    C: ×PCG_GOAL at both flag sets; CasADi: ×1)."""
    out = []
    goals = (("pinocchio", res["settings"]["goal"]), ("casadi", 1.0),
             *((t, PCG_GOAL) for t in PCG_TOOLS.values()))
    for e in res["results"]:
        for kind in ("id", "fd"):
            for tool, goal in goals:
                r = ratio(e, kind, tool)
                if r is not None and r < goal:
                    out.append(f"{kind.upper()} derivatives on {e['model']} against "
                               f"{TOOLS[tool]} (×{r:.2f}, goal ×{goal:g})")
    return out


def summary(res: Mapping[str, Any]) -> str:
    parts = []
    for tool in ("pinocchio", "pinocchio_codegen", "casadi"):
        cells = [f"{e['model']} ∂ID ×{ratio(e, 'id', tool):.2f}, ∂FD ×{ratio(e, 'fd', tool):.2f}"
                 for e in res["results"] if ratio(e, "id", tool) is not None]
        if cells:
            parts.append(f"against {TOOLS[tool]}: " + "; ".join(cells))
    talos = [e for e in res["results"] if e["model"] == "talos"]
    text = "symgen's derivative kernels, " + (" — ".join(parts) or "no peer measured") + \
        " (peer time / symgen time)."
    if talos:
        text += f" Both Talos derivative kernels generate in {talos[0]['generation_s']:.0f} s."
    behind = _behind(res)
    text += (" **Goal missed:** " + "; ".join(behind) + "." if behind else
             f" The goal (×{res['settings']['goal']:g} against Pinocchio, faster than CasADi) "
             "is met on every robot.")
    return text


def section(res: Mapping[str, Any]) -> str:
    s = res["settings"]
    lines = [
        f"symgen's `inverse_dynamics_derivatives` and `forward_dynamics_derivatives` against "
        "Pinocchio's C++ `computeRNEADerivatives` / `computeABADerivatives` and CasADi-generated "
        "C of the Jacobians of Pinocchio's RNEA / ABA (`bench/derivatives.py`; derivatives in "
        f"the tangent space, as Pinocchio's). {s['states']} random states (seed {s['seed']}), "
        f"`{' '.join(s['flags'])}`, median of {s['rounds']} interleaved rounds of "
        f"{s['repeats']} passes, one pinned core. Before timing, every tool's first-state "
        f"matrices agree with central differences of `symgen.reference` to {s['check_rtol']:g}. "
        "Cells: ns per call (peer time / symgen time: > 1, symgen is faster).",
        "",
        "What each call computes: symgen's ∂FD also returns ∂q̈/∂τ = M⁻¹, as Pinocchio's "
        "`computeABADerivatives` does; the CasADi functions return only the q and v "
        "Jacobians. Pinocchio's `computeRNEADerivatives` also returns M.",
        "",
    ]
    pcg_tools = [t for t in PCG_TOOLS.values()
                 if any(t in e["ns"].get("id", {}) for e in res["results"])]
    if pcg_tools:
        lines += [
            "*Pinocchio codegen* is Pinocchio's own code generation "
            "(`pinocchio/codegen/cppadcg-algo.hpp`: `CodeGenRNEADerivatives`, "
            "`CodeGenABADerivatives`): its analytical derivatives (Carpentier & Mansard 2018, "
            "RSS) taped with CppAD and written out as straight-line C by CppADCodeGen "
            "(`bench/peers/pinocchio_codegen.py`); the same outputs as the C++ calls (∂/∂q, "
            "∂/∂v and M, resp. M⁻¹), timed by calling the generated `*_forward_zero` "
            f"functions directly, compiled at `{' '.join(s['flags'])}` and at `-Ofast` "
            "(Pinocchio's default); checked like the others and against symgen's matrices "
            f"to {PCG_AGREEMENT:g}.",
            "",
        ]
    for name, why in res.get("unavailable", {}).items():
        lines.append(f"- {TOOLS.get(name, name)} not measured: {why}.")
    for kind, title in KINDS.items():
        rows = []
        for e in res["results"]:
            rows.append([e["model"], e["nv"], _ns(e["ns"][kind]["symgen"]),
                         _cell(e, kind, "pinocchio"),
                         *[_cell(e, kind, t) for t in pcg_tools], _cell(e, kind, "casadi"),
                         _ops(e, kind, "symgen"), _ops(e, kind, "casadi")])
        lines += ["", f"**{title}** (ns per call)", "",
                  table(["robot", "nv", "symgen", "Pinocchio (C++)",
                         *[TOOLS[t] for t in pcg_tools], "CasADi-generated",
                         "symgen ops", "CasADi ops"], rows)]
    if pcg_tools:
        lines += ["", pcg_table(res)]
    def methods(e: Mapping[str, Any], kind: str) -> str:
        listed = ", ".join(f"{k} {v:,}" for k, v in e.get(f"{kind}_methods", {}).items())
        return f"{e.get(f'{kind}_method') or '—'} ({listed})" if listed else "—"

    def code(e: Mapping[str, Any]) -> str:
        c = e.get("code_bytes") or {}
        return f"{c['id'] / 1e3:,.0f} / {c['fd'] / 1e3:,.0f}" if c else "—"

    def rates(e: Mapping[str, Any]) -> str:
        return " / ".join(f"{e['ops']['symgen'][k]['total'] / e['ns'][k]['symgen']:.1f}"
                          for k in KINDS)

    def needed(e: Mapping[str, Any]) -> str:
        return " / ".join("—" if (r := goal_rate(e, k, s["goal"])) is None else f"{r:.1f}"
                          for k in KINDS)

    rows = [[e["model"], f"{e['generation_s']:.1f}", f"{e['seconds']['symgen_compile']:.1f}",
             code(e), rates(e), needed(e), methods(e, "id"), methods(e, "fd"),
             f"{max(e['check_error']['symgen'].values()):.1e}",
             ", ".join(f"{TOOLS[t]} {x:.1e}" for t, x in e["agreement"].items()) or "—"]
            for e in res["results"]]
    lines += ["", "**Generation and checks**", "",
              table(["robot", "generation (s)", "gcc -O3 (s)", "machine code ∂ID / ∂FD (kB)",
                     "symgen ops per ns ∂ID / ∂FD", "ops per ns the goal needs ∂ID / ∂FD",
                     "∂ID derivation (ops)", "∂FD derivation (ops)", "symgen vs differences",
                     "largest difference from symgen"], rows, "lrrrrrllll"),
              "", "*ops per ns the goal needs*: symgen's operation count divided by the "
              f"slower time that meets the goal (Pinocchio's / {s['goal']:g}, CasADi's): the "
              "rate symgen's program would have to run at with its present operation count."]
    lines += ["", user_build_text(res), "", WHY]
    behind = _behind(res)
    lines += ["", "**Where symgen is behind the goal:** " + ("; ".join(behind) + "."
                                                          if behind else "nowhere.")]
    return "\n".join(lines)


def user_build_text(res: Mapping[str, Any]) -> str:
    """The page's ∂FD figures beside a user's own build of the same kernel
    (:mod:`bench.user_build`), with their agreement against USER_BUILD_AGREEMENT."""
    built = [e for e in res["results"] if "user_build" in e]
    if not built:
        return "*A user's build*: not measured in this run."
    difference = {e["model"]: e["user_build"]["fd"]["ns"] / e["ns"]["fd"]["symgen"] - 1
                  for e in built}
    rows = [[e["model"], _ns(e["ns"]["fd"]["symgen"]), _ns(e["user_build"]["fd"]["ns"]),
             f"{difference[e['model']]:+.0%}"] for e in built]
    off = [m for m, d in difference.items() if abs(d) > USER_BUILD_AGREEMENT]
    command = built[0]["user_build"]["fd"]["command"]
    return "\n".join([
        "**The figure against a user's own build** (∂FD, ns per call): the same kernel "
        f"generated by the command line and compiled as a user would (`{command}`, the robot "
        "named as in the table), timed by its own small harness (`bench/user_build.py`: "
        "`clock_gettime` around passes over the same states, no code shared with the "
        f"section's drivers), after the section's rounds: the median of {_runs(built)} runs "
        "of the harness, as this page's figures are medians of their rounds (the first run "
        "after a build of a kernel larger than the caches can be far slower: the runs of "
        "each robot are in `bench/results/derivatives.json`). Agreement required: within "
        f"{USER_BUILD_AGREEMENT:.0%}; "
        + (f"**missed on {', '.join(off)}**." if off else "met on every robot."),
        "",
        table(["robot", "this page", "a user's build", "difference"], rows, "lrrr")])


def _runs(built: Sequence[Mapping[str, Any]]) -> str:
    """How many runs of the user's harness each figure is the median of."""
    counts = sorted({len(e["user_build"]["fd"].get("runs", [0])) for e in built})
    return " or ".join(str(c) for c in counts)


def kilobytes(x: int | None) -> str:
    """Bytes as kB with one decimal ("—" where unknown)."""
    return "—" if x is None else f"{x / 1e3:,.1f}"


def pcg_ops(c: Mapping[str, int]) -> str:
    """An op count on the C text, with how many of them are by a literal ±1 or 0."""
    return f"{c['total']:,}" + (f" ({c['trivial']:,} by ±1 / 0)" if c.get("trivial") else "")


def pcg_table(res: Mapping[str, Any]) -> str:
    """symgen's and Pinocchio's generated C side by side: operations counted on the C text
    by the same rules (:func:`bench.peers.pinocchio_codegen.count_ops`), symgen's own count,
    machine code, Pinocchio's generation time."""
    kb = kilobytes
    rows = []
    for e in res["results"]:
        if "pinocchio_codegen" not in e["ops"]:
            continue
        gen = e.get("generation_pinocchio_codegen", {})
        for kind, fn in (("id", "drnea"), ("fd", "daba")):
            code = e.get("code_bytes_peers", {})
            rows.append([
                e["model"], KINDS[kind].split()[0], f"{e['ops']['symgen'][kind]['total']:,}",
                f"{e['ops']['symgen_c'][kind]['total']:,}",
                pcg_ops(e['ops']['pinocchio_codegen'][kind]),
                kb((e.get("code_bytes") or {}).get(kind)),
                " / ".join(kb(code.get(t, {}).get(kind)) for t in PCG_TOOLS.values()),
                f"{gen[fn]['wall_s'] * 1e3:,.0f}" if fn in gen else "—"])
    return "\n".join([
        "**Generated C: symgen against Pinocchio's code generation** (operations counted on "
        "the C text by the same rules for both: binary + − × ÷ one each, a sign free, a call "
        "of sqrt/sin/cos/… one; machine code of the kernel's functions, `nm -S`; Pinocchio's "
        "generation time is taping + CppADCodeGen, once per robot, cached)",
        "",
        table(["robot", "kernel", "symgen ops (own count)", "symgen ops (C text)",
               "Pinocchio codegen ops (C text)", "symgen code (kB)",
               "Pinocchio codegen code -O3 / -Ofast (kB)", "Pinocchio generation (ms)"],
              rows, "llrrrrrr")])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.derivatives",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="UR5 and Panda, 200 states")
    parser.add_argument("--robots", default=None, help="comma-separated, of "
                        + ", ".join(n for n, _ in ROBOTS))
    parser.add_argument("--states", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None, help="folder for derivatives.json")
    parser.add_argument("--no-casadi", action="store_true")
    args = parser.parse_args(argv)
    cfg = MODES["quick" if args.quick else "full"]
    robots = cfg["robots"]
    if args.robots:
        known = dict(ROBOTS)
        unknown = [r for r in args.robots.split(",") if r not in known]
        if unknown:
            parser.error(f"unknown robot(s) {', '.join(unknown)}")
        robots = tuple((r, known[r]) for r in args.robots.split(","))
    out = args.out / "derivatives.json" if args.out else (
        RESULTS / "derivatives.json" if not (args.robots or args.states or args.quick)
        else None)
    from . import __main__ as entry

    venv = None if args.no_casadi else entry.CASADI_VENV
    res = measure(robots, args.states or cfg["states"], cfg["repeats"], cfg["rounds"],
                  out=out, casadi_venv=venv)
    print(section(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
