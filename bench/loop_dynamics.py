# ruff: noqa: E501  (the C and C++ driver sources below have long lines)
"""Closed loops: symgen's compiled ``constrained_forward_dynamics`` against Pinocchio's C++
loop-constrained articulated-body algorithm ``lcaba`` and its code-generated
``CodeGenConstraintDynamics`` (the headline: symgen against the faster of the two, the target
:data:`TARGET` = 2× on each model), Pinocchio's iterative ``constraintDynamics`` and MuJoCo's
``mj_forward`` with equality constraints, on the five-bar, the Delta robot and the four-bar
knee (examples/models), in one run.

    python -m bench.loop_dynamics              # the three models, 200 states (~5 min)
    python -m bench.loop_dynamics --quick      # 50 states, fewer passes
    python -m bench.loop_dynamics --models five_bar --states 20 --out /tmp/x

``python -m bench`` runs it as its ``loop_dynamics`` section and renders the table on
docs/benchmarks.md (section 9). A run of chosen models or states writes
``loop_dynamics.json`` only where ``--out`` says, so that it never replaces the full results.

States (seed 0): q closed by ``LoopClosure(model).assemble`` from the zero configuration moved
by 0.2 N(0, 1) per velocity coordinate (rejected, and drawn again, where the loop Jacobian
loses rank: near a singular position), v = N x with N an orthonormal basis of the null space
of the full loop Jacobian H (every raw row of ``LoopClosure.jacobians``, numpy SVD), x and τ
standard normal. At such a state the accelerations are unique whatever the redundancy of
either side's constraint rows, so every tool must return the same q̈.

Each tool is timed by its own small C/C++ program over the same states (binary files), built
with ``-O3``: ``repeats`` passes over all states, the median pass divided by the number of
states = ns per call; the programs run ``rounds`` times, interleaved (the order rotating each
round), on one pinned core, and a figure is the median over the rounds.

- symgen: ``m_constrained_forward_dynamics(q, v, tau, a, lam)`` (``symgen.generate(model,
  ["constrained_forward_dynamics"])``, gcc -std=c99 -O3: the derivation with fewer
  operations); beside it each of its two derivations forced (:data:`METHODS`:
  ``Options(forward_dynamics="multipliers" | "embedded")``) and, as a floor, the open
  tree's own forward dynamics (the loop joints removed: :data:`OPEN_TREE`, checked against
  ``symgen.reference``).
- Pinocchio (the pin wheel's headers, g++ -std=c++17 -O3 with the wheel's compile
  definitions, as ``bench.kernel_speed``): the model serialised with ``saveToBinary``, the
  ``RigidConstraintModel``s of :mod:`symgen.peers.pinocchio_constraints` (a revolute loop: two
  ``CONTACT_3D`` points on its axis, 6 rows for 5 independent ones) passed as numbers (type,
  joints, placements: :func:`constraint_spec`) and rebuilt in C++. Three timings on them:

  - ``lcaba`` (Pinocchio 4's loop-constrained ABA, :data:`LCABA_DRIVER`):
    ``computeJointMinimalOrdering`` once, then ``lcaba`` per call. It accepts only
    ``RigidConstraintModel``s (``CONTACT_3D``, ``CONTACT_6D``), so it gets exactly the models
    ``constraintDynamics`` gets, redundant rows included. It is an augmented Lagrangian on the
    articulated-body recursion: the rows enter the articulated inertias with the penalty
    1/mu, each further iteration (max_iter − 1 of them) corrects λ by a reduced backward and
    forward sweep, and it stops early only on its absolute accuracy (0 here: never; it reads
    no relative accuracy). With the shared mu 1e-8 its q̈ stays 1e-6 or more off (rounding
    in the penalised inertias; recorded as ``lcaba.shared_error``; :data:`LCABA_MU`), so
    it is timed with :func:`tuned_lcaba`'s settings: the fewest max_iter of ``TUNED_ITERATIONS`` at which some
    mu of ``LCABA_MU`` gives q̈ within ``TUNED_RTOL`` of the independent numpy solution at
    every state (the most accurate such mu); where none does, the most accurate pair tried,
    and the page says so.
  - ``CodeGenConstraintDynamics`` (optional): the C that Pinocchio's CppADCodeGen writes of
    ``constraintDynamics`` on the same constraint models, from
    ``bench.peers.pinocchio_codegen.constraint_dynamics_sources`` when that module and
    function exist (:func:`codegen_peer`; else "not measured: <reason>" and the headline is
    lcaba alone), taped with the fewest-iterations ``constraintDynamics`` settings below,
    compiled with FLAGS and timed by :data:`CODEGEN_DRIVER` (:func:`prepare_codegen`).
  - ``constraintDynamics``: ``initConstraintDynamics`` once, then ``constraintDynamics`` per
    call with :func:`~symgen.peers.pinocchio_constraints.default_settings` (absolute accuracy
    0, relative 1e-12, mu 1e-8, max_iter 100). With redundant rows the relative criterion
    rarely fires (λ's null-space part moves by rounding), so most calls run all 100 proximal
    iterations; the same program is also timed with the fewest iterations (of
    ``TUNED_ITERATIONS``) whose accelerations agree with the independent numpy solution
    (below) to ``TUNED_RTOL``.
- MuJoCo: the MJCF of :func:`bench.peers.mujoco_peer.mjcf_from_symgen` with the constraint and
  equality stages enabled and the loop joints as ``<equality>`` site constraints (a revolute
  loop: two ``connect``s on its axis, ``AXIS_OFFSET`` apart, as Pinocchio's points; spherical:
  one ``connect``; fixed: a ``weld``), as stiff as MuJoCo allows: ``solimp`` at its upper clamp
  0.9999 (the regularisation R = (1 − d)/d · diag(A) ≈ 1e-4 of the constraint's inertia is
  what remains soft: the accuracy column shows it) and ``solref`` at 2 × timestep (its
  "refsafe" lower clamp; at a consistent state the reference acceleration's position and
  velocity terms vanish anyway). Timed: copy qpos, qvel, qfrc_applied (= τ) into mjData, then
  ``mj_forward`` (the whole pipeline: kinematics, M and its factor, the equality constraints'
  Jacobians, the bias forces and the Newton constraint solver; contacts disabled); qacc.

Accuracy, at every timed state: each peer's q̈ against symgen's, max|q̈ − q̈_symgen| / max(1,
|q̈_symgen|) (the worst state), and every tool's constraint residual |H q̈ + γ| on the raw
rows of the numeric loop closure (``LoopClosure.jacobians``/``biases``, no generated code)
relative to max(1, |H| |q̈|, |γ|); every tool's q̈ is also compared with an independent numpy
solution (M, C of ``symgen.reference``, the null space of H; symgen's must agree to
CHECK_RTOL before any figure is kept). symgen's kernel solves on the loop rows its analysis
kept at generation (an independent subset of H's rows, chosen once): where that subset is
worse conditioned than H (the Delta's state 87 of seed 0: cond 1.5e3 against H's 38), its
error grows accordingly, and the peers' "accuracy against symgen" shows symgen's error.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import symgen
from symgen import reference as ref
from symgen.loops import LoopClosure, analyse_loops
from symgen.model import JointType, Model
from symgen.reference.integrate import integrate

from .common import (
    CHECK_TOLERANCE,
    RESULTS,
    ROOT,
    TIMING_DIR,
    log,
    machine_info,
    pin_to_one_cpu,
    relative_error,
    table,
    write_json,
)
from .peers import mujoco_peer
from .peers.mujoco_peer import DRIVER_MAIN
from .peers.pinocchio_codegen import CONSTRAINT_MODELS_READER

KERNEL = "constrained_forward_dynamics"
CALL = "m_constrained_forward_dynamics(q, v, tau, a, lam)"
#: The two derivations of constrained_forward_dynamics, each timed on its own (forced by
#: Options.forward_dynamics) beside the default, which keeps the one with fewer operations:
#: issue 15's comparison of the constraint embedding with the multipliers.
METHODS = ("multipliers", "embedded")
#: The open tree's forward dynamics (the loop joints removed), timed as a floor for issue
#: 15's goal: both loop formulations compute its M and bias forces and the loop terms on top.
#: The cheaper of these by operation count.
OPEN_TREE = ("forward_dynamics_ltdl", "forward_dynamics_aba")
#: Issue 15's goal: the embedding this many times faster than the multipliers on the
#: four-bar knee.
EMBEDDED_TARGET = 1.5
MODELS = ("five_bar", "delta_robot", "four_bar_knee")
EXAMPLES = ROOT / "examples" / "models"
FLAGS = ("-O3",)
#: The acceptance goal: symgen at least this many times faster than the faster of Pinocchio's
#: lcaba and its code-generated CodeGenConstraintDynamics, on each model.
TARGET = 2.0
#: Perturbation of the zero configuration before assembly (rad per velocity coordinate).
PERTURBATION = 0.2
#: max_iter candidates for Pinocchio's "fewest iterations" timing, and the agreement with
#: symgen they must reach (the bound of tests/peers/test_constraint_dynamics_pinocchio.py).
TUNED_ITERATIONS = (1, 2, 3, 5, 10, 20, 50)
TUNED_RTOL = 1e-9
#: lcaba's proximal mu candidates (its penalty is 1/mu), tried with each max_iter of
#: TUNED_ITERATIONS. A small mu converges in few iterations but to a q̈ spoilt by rounding in
#: the penalised articulated inertias (the shared 1e-8: ~1e-6 to 1e-2 off); a large one
#: converges more slowly but further (the Delta reaches 1e-9 at every one of its 200 states
#: only with mu 0.1 and 50 iterations; with mu ≤ 1e-2 it stalls near 1e-8 at two states).
LCABA_MU = (3e-1, 1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6)
#: The optional peer: Pinocchio's CppADCodeGen C of CodeGenConstraintDynamics, from this
#: module's function (:func:`codegen_peer`, :func:`prepare_codegen`).
CODEGEN_MODULE = "pinocchio_codegen"
CODEGEN_FUNCTION = "constraint_dynamics_sources"
#: symgen against the independent numpy solution: the tolerance before timings are kept
#: (the benchmarks' common consistency limit).
CHECK_RTOL = CHECK_TOLERANCE
#: Distance (m) between a revolute loop's two connect points on its axis (= Pinocchio's).
AXIS_OFFSET = 0.1
#: MuJoCo's stiffest equality settings: solimp's width clamps at 0.9999; solref's time
#: constant at 2 × timestep ("refsafe"), MJCF's default timestep 0.002 s.
SOLIMP = (0.9999, 0.9999, 0.001, 0.5, 2.0)
SOLREF = (0.004, 1.0)

MODES: dict[str, dict[str, Any]] = {
    "full": {"models": MODELS, "states": 200, "repeats": 21, "rounds": 5},
    "quick": {"models": MODELS, "states": 50, "repeats": 11, "rounds": 3},
    "smoke": {"models": ("five_bar",), "states": 10, "repeats": 3, "rounds": 2},
}

TIMED = {
    "symgen": "m_constrained_forward_dynamics(q, v, tau, a, lam) (gcc -std=c99 -O3): the "
    "derivation with fewer operations.",
    "multipliers": "the same kernel derived with multipliers "
    "(Options(forward_dynamics='multipliers')).",
    "embedded": "the same kernel derived by constraint embedding "
    "(Options(forward_dynamics='embedded')).",
    "pinocchio": "pinocchio::constraintDynamics(model, data, q, v, tau, constraint models, "
    "datas, ProximalSettings(0, 1e-12, 1e-8, 100)) after one initConstraintDynamics "
    "(g++ -std=c++17 -O3); the constraint models of symgen.peers.pinocchio_constraints "
    "rebuilt in C++.",
    "pinocchio_tuned": "the same call with max_iter lowered to the fewest proximal "
    "iterations whose accelerations still agree with the independent numpy solution to "
    "1e-9.",
    "lcaba": "pinocchio::lcaba(model, data, q, v, tau, constraint models, datas, "
    "ProximalSettings(0, 1e-12, mu, max_iter)) after one computeJointMinimalOrdering "
    "(g++ -std=c++17 -O3); the same constraint models; mu and max_iter the fewest "
    "iterations (and the most accurate mu) whose accelerations agree with the independent "
    "numpy solution to 1e-9.",
    "codegen": "<name>_forward_zero(in, out, atomic): CppADCodeGen's C of Pinocchio's "
    "CodeGenConstraintDynamics, taped with the fewest-iterations constraintDynamics "
    "settings (gcc -O3).",
    "mujoco": "copy qpos, qvel, qfrc_applied into mjData, then mj_forward (contacts off, "
    "equality constraints on; Newton solver); qacc.",
}

SYMGEN_DRIVER = r"""
#include "timing.h"
#include "m.h"
#define CALL(q, v, tau, a, lam) @CALL@

int main(int argc, char **argv) {
    if (argc != 6) return 2;
    const int S = atoi(argv[1]), R = atoi(argv[2]), NQ = atoi(argv[3]), NV = atoi(argv[4]), NL = atoi(argv[5]);
    const size_t nq = (size_t)NQ, nv = (size_t)NV;
    double *q = bench_load("q.bin", (size_t)S * nq), *v = bench_load("v.bin", (size_t)S * nv);
    double *tau = bench_load("tau.bin", (size_t)S * nv);
    double *a = malloc(nv * sizeof(double)), *lam = malloc(((size_t)NL + 1) * sizeof(double));
    double *pass = malloc((size_t)R * sizeof(double)), t;
    volatile double sink = 0;
    printf("{\"a\": [");
    for (int k = 0; k < S; ++k) {
        CALL(q + k * nq, v + k * nv, tau + k * nv, a, lam);
        for (int i = 0; i < NV; ++i) printf("%s%.17g", k || i ? ", " : "", a[i]);
    }
    BENCH_TIME(t, S, R, pass, CALL(q + k * nq, v + k * nv, tau + k * nv, a, lam); sink = sink + a[0];);
    printf("], \"ns\": %.3f}\n", t);
    return sink == 12345.678 ? 1 : 0;
}
"""

PINOCCHIO_DRIVER = r"""
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>
#include <pinocchio/multibody.hpp>
#include <pinocchio/algorithm/constrained-dynamics.hpp>
#include <pinocchio/serialization.hpp>

typedef std::vector<pinocchio::RigidConstraintModel, Eigen::aligned_allocator<pinocchio::RigidConstraintModel>> Models;
typedef std::vector<pinocchio::RigidConstraintData, Eigen::aligned_allocator<pinocchio::RigidConstraintData>> Datas;

static std::vector<double> load(const char *path, size_t n) {
    std::vector<double> v(n);
    std::ifstream f(path, std::ios::binary);
    f.read(reinterpret_cast<char *>(v.data()), static_cast<std::streamsize>(n * sizeof(double)));
    if (!f) { std::fprintf(stderr, "cannot read %s\n", path); std::exit(2); }
    return v;
}
/* driver S R [max_iter]: S states, R timed passes (0: none), max_iter overriding the file's */
int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) return 2;
    const int S = std::atoi(argv[1]), R = std::atoi(argv[2]);
    pinocchio::Model model;
    model.loadFromBinary("model.bin");
    pinocchio::Data data(model);
    /* constraints.txt: absolute_accuracy relative_accuracy mu max_iter count, then per
       constraint: kind (3 or 6), then joint index, rotation (row-major), translation, twice */
    std::ifstream spec("constraints.txt");
    double abs_acc, rel_acc, mu;
    int max_iter, count;
    spec >> abs_acc >> rel_acc >> mu >> max_iter >> count;
    if (argc == 4) max_iter = std::atoi(argv[3]);
    Models models;
""" + CONSTRAINT_MODELS_READER + r"""    if (!spec) { std::fprintf(stderr, "cannot read constraints.txt\n"); return 2; }
    Datas datas;
    for (const auto &cm : models) datas.push_back(pinocchio::RigidConstraintData(cm));
    pinocchio::ProximalSettings settings(abs_acc, rel_acc, mu, max_iter);
    const int NQ = model.nq, NV = model.nv;
    auto q = load("pq.bin", size_t(S) * NQ), v = load("pv.bin", size_t(S) * NV);
    auto tau = load("ptau.bin", size_t(S) * NV);
    using Vec = Eigen::Map<const Eigen::VectorXd>;
    pinocchio::initConstraintDynamics(model, data, models, datas);
    /* every state once: the accelerations (checked in Python) and the iterations done */
    std::printf("{\"a\": [");
    int iter_max = 0;
    double iter_sum = 0;
    for (int k = 0; k < S; ++k) {
        const Eigen::VectorXd &a = pinocchio::constraintDynamics(
            model, data, Vec(&q[k * NQ], NQ), Vec(&v[k * NV], NV), Vec(&tau[k * NV], NV),
            models, datas, settings);
        for (int i = 0; i < NV; ++i) std::printf("%s%.17g", k || i ? ", " : "", a[i]);
        iter_max = std::max(iter_max, settings.iter);
        iter_sum += settings.iter;
    }
    std::printf("], \"max_iter\": %d, \"iterations_max\": %d, \"iterations_mean\": %.3f, \"rows\": %d", max_iter,
                iter_max, iter_sum / S, (int)data.lambda_c.size());
    volatile double sink = 0;
    std::vector<double> passes;
    for (int r = 0; r < R; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < S; ++k) {
            pinocchio::constraintDynamics(model, data, Vec(&q[k * NQ], NQ), Vec(&v[k * NV], NV),
                                          Vec(&tau[k * NV], NV), models, datas, settings);
            sink = sink + data.ddq[0];
        }
        auto t1 = std::chrono::steady_clock::now();
        passes.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / S);
    }
    std::sort(passes.begin(), passes.end());
    if (R > 0) std::printf(", \"ns\": %.3f", passes[passes.size() / 2]);
    std::printf("}\n");
    return sink == 12345.678 ? 1 : 0;
}
"""

#: Pinocchio's loop-constrained ABA (``lcaba``, pinocchio/algorithm/loop-constrained-aba.hpp),
#: the same program as :data:`PINOCCHIO_DRIVER` but for these edits (each must apply once):
#: the header; ``computeJointMinimalOrdering`` (the joint elimination order and the coupling
#: terms lcaba needs) in place of ``initConstraintDynamics``; ``lcaba`` in place of
#: ``constraintDynamics``; mu from the command line after max_iter; the rows from the
#: constraint models (lcaba fills no ``data.lambda_c``) and mu in the output.
LCABA_EDITS = (
    ("#include <pinocchio/algorithm/constrained-dynamics.hpp>\n",
     "#include <pinocchio/algorithm/constrained-dynamics.hpp>\n"
     "#include <pinocchio/algorithm/loop-constrained-aba.hpp>\n"),
    ("/* driver S R [max_iter]: S states, R timed passes (0: none), max_iter overriding the file's */",
     "/* driver S R [max_iter [mu]]: S states, R timed passes (0: none), max_iter and mu overriding the file's */"),
    ("if (argc != 3 && argc != 4) return 2;", "if (argc < 3 || argc > 5) return 2;"),
    ("if (argc == 4) max_iter = std::atoi(argv[3]);",
     "if (argc >= 4) max_iter = std::atoi(argv[3]);\n    if (argc == 5) mu = std::atof(argv[4]);"),
    ("pinocchio::initConstraintDynamics(model, data, models, datas);",
     "pinocchio::computeJointMinimalOrdering(model, data, models);\n"
     "    int rows = 0;\n    for (const auto &cm : models) rows += cm.residualSize();"),
    ("const Eigen::VectorXd &a = pinocchio::constraintDynamics(",
     "const Eigen::VectorXd &a = pinocchio::lcaba("),
    ("pinocchio::constraintDynamics(model, data, Vec(&q[k * NQ], NQ)",
     "pinocchio::lcaba(model, data, Vec(&q[k * NQ], NQ)"),
    ('std::printf("], \\"max_iter\\": %d, ', 'std::printf("], \\"mu\\": %.17g, \\"max_iter\\": %d, '),
    ('\\"rows\\": %d", max_iter,', '\\"rows\\": %d", mu, max_iter,'),
    ("iter_max, iter_sum / S, (int)data.lambda_c.size());",
     "iter_max, iter_sum / S, rows);"),
)


def _edited(source: str, edits: Sequence[tuple[str, str]]) -> str:
    """``source`` with each (old, new) of ``edits`` replaced; each ``old`` must occur."""
    for old, new in edits:
        if old not in source:
            raise ValueError(f"driver source: {old!r} not found")
        source = source.replace(old, new)
    return source


LCABA_DRIVER = _edited(PINOCCHIO_DRIVER, LCABA_EDITS)

MUJOCO_DRIVER = r"""
#include "timing.h"
#include <string.h>
#include <mujoco/mujoco.h>

""" + DRIVER_MAIN + r"""    double *qfrc = bench_load("qfrc.bin", (size_t)S * NV);
    double *passes = (double *)malloc((size_t)R * sizeof(double)), t;
    volatile double sink = 0;
    int iter_max = 0, nefc = -1;
    printf("{\"a\": [");
    for (int k = 0; k < S; ++k) {
        memcpy(d->qpos, qpos + (size_t)k * NQ, bq); memcpy(d->qvel, qvel + (size_t)k * NV, bv);
        memcpy(d->qfrc_applied, qfrc + (size_t)k * NV, bv);
        mj_forward(m, d);
        for (int i = 0; i < NV; ++i) printf("%s%.17g", k || i ? ", " : "", d->qacc[i]);
        if (d->solver_niter[0] > iter_max) iter_max = d->solver_niter[0];
        nefc = d->nefc;
    }
    BENCH_TIME(t, S, R, passes,
         memcpy(d->qpos, qpos + (size_t)k * NQ, bq);
         memcpy(d->qvel, qvel + (size_t)k * NV, bv);
         memcpy(d->qfrc_applied, qfrc + (size_t)k * NV, bv);
         mj_forward(m, d);
         sink = sink + d->qacc[0];);
    printf("], \"rows\": %d, \"iterations_max\": %d, \"ns\": %.3f}\n", nefc, iter_max, t);
    mj_deleteData(d);
    mj_deleteModel(m);
    return sink == 12345.678 ? 1 : 0;
}
"""

#: The timing program of Pinocchio's generated constraint dynamics (:func:`prepare_codegen`):
#: CppADCodeGen's argument types (cppad/cg/lang/c/language_c.hpp) declared here.
CODEGEN_DRIVER = r"""
#include "timing.h"
typedef struct Array { void *data; unsigned long size; int sparse; const unsigned long *idx; unsigned long nnz; } Array;
struct LangCAtomicFun {
    void *libModel;
    int (*forward)(void *libModel, int atomicIndex, int q, int p, const Array tx[], Array *ty);
    int (*reverse)(void *libModel, int atomicIndex, int p, const Array tx[], Array *px, const Array py[]);
};
void @ENTRY@(double const *const *in, double *const *out, struct LangCAtomicFun atomicFun);

int main(int argc, char **argv) {
    if (argc != 6) return 2;
    const int S = atoi(argv[1]), R = atoi(argv[2]), NQ = atoi(argv[3]), NV = atoi(argv[4]), NC = atoi(argv[5]);
    const size_t nx = (size_t)(NQ + 2 * NV);
    double *x = bench_load("px.bin", (size_t)S * nx), *y = malloc((size_t)(NV + NC + 1) * sizeof(double));
    double *pass = malloc(((size_t)R + 1) * sizeof(double)), t = 0;
    const double *in[1];
    double *out[1] = {y};
    struct LangCAtomicFun atomic = {0, 0, 0};
    volatile double sink = 0;
    printf("{\"a\": [");
    for (int k = 0; k < S; ++k) {
        in[0] = x + k * nx;
        @ENTRY@(in, out, atomic);
        for (int i = 0; i < NV; ++i) printf("%s%.17g", k || i ? ", " : "", y[i]);
    }
    if (R > 0) BENCH_TIME(t, S, R, pass, in[0] = x + k * nx; @ENTRY@(in, out, atomic); sink = sink + y[0];);
    printf("], \"ns\": %.3f}\n", t);
    return sink == 12345.678 ? 1 : 0;
}
"""

Array = np.ndarray
#: A prepared tool: ``run(repeats)`` -> {"ns": ns per call, "a": (S, nv) accelerations in
#: symgen's layout, ...}.
Runner = Callable[[int], dict[str, Any]]


def _run(cmd: Sequence[str], cwd: Path, what: str) -> str:
    run = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True)
    if run.returncode:
        tail = "\n".join((run.stderr or run.stdout).strip().splitlines()[-15:])
        raise RuntimeError(f"{what} failed ({run.returncode}):\n{tail}")
    return run.stdout


# ------------------------------------------------------------------------------ states
def load_model(name: str) -> Model:
    return symgen.load(EXAMPLES / f"{name}.yaml")


def consistent_states(model: Model, count: int, seed: int = 0) -> dict[str, Array]:
    """``count`` assembled states (module docstring) with each one's loop Jacobian H (all raw
    rows) and bias γ = Ḣ q̇ of the numeric loop closure: keys q, v, tau, H, gamma."""
    closure = LoopClosure(model)
    rank = analyse_loops(model).rank
    rng = np.random.default_rng(seed)
    out: dict[str, list[Array]] = {"q": [], "v": [], "tau": [], "H": [], "gamma": []}
    tries = 0
    while len(out["q"]) < count:
        tries += 1
        if tries > 3 * count + 10:
            raise RuntimeError(f"{model.name}: too many singular or unassembled states")
        guess = integrate(model, np.zeros(model.nq),
                          PERTURBATION * rng.normal(size=model.nv), 1.0)
        try:
            q = closure.assemble(guess)
        except symgen.SymgenError:
            continue
        h = np.vstack(closure.jacobians(q))
        _, sigma, vt = np.linalg.svd(h)
        if int(np.sum(sigma > 1e-8 * sigma[0])) != rank:  # near a singular position
            continue
        basis = vt[rank:].T
        v = basis @ rng.normal(size=basis.shape[1])
        out["q"].append(q)
        out["v"].append(v)
        out["tau"].append(rng.normal(size=model.nv))
        out["H"].append(h)
        out["gamma"].append(np.concatenate(closure.biases(q, v)))
    return {k: np.array(x) for k, x in out.items()}


def reference_accelerations(model: Model, states: Mapping[str, Array]) -> Array:
    """q̈ of every state in numpy, independently of the generated code: the unique q̈ with
    H q̈ = −γ that satisfies the dynamics projected on the null space N of H,
    Nᵀ (M q̈ + C − τ) = 0 (M, C of symgen.reference; H, γ of the numeric loop closure)."""
    rank = analyse_loops(model).rank
    out = []
    for q, v, tau, h, gamma in zip(*(states[k] for k in ("q", "v", "tau", "H", "gamma")),
                                   strict=True):
        _, _, vt = np.linalg.svd(h)
        n = vt[rank:].T
        particular = -np.linalg.pinv(h) @ gamma
        m = ref.mass_matrix(model, q)
        rhs = n.T @ (tau - ref.bias_forces(model, q, v) - m @ particular)
        out.append(particular + n @ np.linalg.solve(n.T @ m @ n, rhs))
    return np.array(out)


def open_tree_accelerations(model: Model, states: Mapping[str, Array]) -> Array:
    """The open tree's q̈ (the loop joints removed) by symgen.reference's articulated-body
    algorithm, at every state."""
    return np.array([ref.forward_dynamics(model, q, v, tau) for q, v, tau in
                     zip(states["q"], states["v"], states["tau"], strict=True)])


def worst_error(a: Array, expected: Array) -> float:
    """The worst state's max|a − expected| / max(1, max|expected|)."""
    return max(relative_error(x, y) for x, y in zip(a, expected, strict=True))


def worst_residual(a: Array, states: Mapping[str, Array]) -> float:
    """The worst state's |H a + γ|∞ / max(1, |H|∞ |a|∞, |γ|∞) on every raw loop row."""
    worst = 0.0
    for x, h, gamma in zip(a, states["H"], states["gamma"], strict=True):
        scale = max(1.0, float(np.max(np.abs(h)) * np.max(np.abs(x))),
                    float(np.max(np.abs(gamma))))
        worst = max(worst, float(np.max(np.abs(h @ x + gamma))) / scale)
    return worst


# ------------------------------------------------------------------------------ symgen
def prepare_symgen(model: Model, ks: symgen.KernelSet, states: Mapping[str, Array],
                   work: Path, call: str = CALL) -> Runner:
    """symgen's timing program of the C call ``call`` (:data:`CALL`, or an open-tree
    kernel)."""
    symgen.write_c(ks, work, prefix="m")
    for key in ("q", "v", "tau"):
        np.ascontiguousarray(states[key], dtype=np.float64).tofile(work / f"{key}.bin")
    (work / "driver.c").write_text(SYMGEN_DRIVER.replace("@CALL@", call))
    _run(["gcc", "-std=c99", *FLAGS, "-c", "m.c", "-o", "m.o"], work, "compiling symgen's C")
    _run(["gcc", "-std=c99", *FLAGS, f"-I{TIMING_DIR}", "driver.c", "m.o", "-o", "driver",
          "-lm"], work, "building symgen's timing program")
    n, rank = len(states["q"]), analyse_loops(model).rank

    def run(repeats: int) -> dict[str, Any]:
        out = json.loads(_run(["./driver", str(n), str(repeats), str(model.nq),
                               str(model.nv), str(rank)], work, "symgen's timing program"))
        return {"ns": out["ns"], "a": np.reshape(out["a"], (n, model.nv))}

    return run


# ------------------------------------------------------------------------------ Pinocchio
def pinocchio_unavailable() -> str | None:
    from .kernel_speed import pinocchio_unavailable as reason

    why = reason()
    if why:
        return why
    try:
        import pinocchio  # noqa: F401
    except ImportError as exc:
        return f"Pinocchio's Python bindings are needed to build the model ({exc})"
    return None


def pinocchio_driver() -> Path:
    """The constraintDynamics timing program (``-O3``), cached under bench/.cache (a few
    minutes to build)."""
    from .kernel_speed import build_pinocchio_program

    return build_pinocchio_program(PINOCCHIO_DRIVER, FLAGS, "pinocchio-constraint-driver",
                                   "Pinocchio's constraintDynamics program", log)


def lcaba_unavailable() -> str | None:
    """Why Pinocchio's lcaba cannot be built here (a Pinocchio before 4.0), or None."""
    from .kernel_speed import cmeel_prefix

    header = cmeel_prefix() / "include" / "pinocchio" / "algorithm" / "loop-constrained-aba.hpp"
    if not header.is_file():
        return "the pin wheel has no pinocchio/algorithm/loop-constrained-aba.hpp (Pinocchio 4)"
    return None


def lcaba_driver() -> Path:
    """The lcaba timing program (:data:`LCABA_DRIVER`, ``-O3``), cached under bench/.cache
    (a few minutes to build)."""
    from .kernel_speed import build_pinocchio_program

    return build_pinocchio_program(LCABA_DRIVER, FLAGS, "pinocchio-lcaba-driver",
                                   "Pinocchio's lcaba program", log)


def constraint_spec(constraints: Sequence[Any], settings: Any) -> str:
    """constraints.txt for the driver: the proximal settings, then each constraint model's
    type, joints and placements (17 significant digits)."""
    lines = [f"{settings.absolute_accuracy!r} {settings.relative_accuracy!r} "
             f"{settings.mu!r} {settings.max_iter} {len(constraints)}"]
    for cm in constraints:
        kind = {"CONTACT_3D": "3", "CONTACT_6D": "6"}[cm.type.name]
        if str(cm.reference_frame) != "LOCAL":
            raise ValueError(f"constraint {cm.name}: reference frame {cm.reference_frame}")
        parts = [kind]
        for joint, placement in ((cm.joint1_id, cm.joint1_placement),
                                 (cm.joint2_id, cm.joint2_placement)):
            parts.append(str(int(joint)))
            parts += [repr(float(x)) for x in np.asarray(placement.rotation).ravel()]
            parts += [repr(float(x)) for x in np.asarray(placement.translation)]
        lines.append(" ".join(parts))
    return "\n".join(lines) + "\n"


def prepare_pinocchio(model: Model, states: Mapping[str, Array], driver: Path, work: Path,
                      max_iter: int | None = None, mu: float | None = None,
                      what: str = "Pinocchio's constraintDynamics program") -> Runner:
    """Pinocchio's constraintDynamics (or, ``driver`` the program of :func:`lcaba_driver`,
    its lcaba) on ``states``; ``max_iter`` and ``mu`` (lcaba's program only, with
    ``max_iter``) override the settings'."""
    from symgen.peers.pinocchio import Bridge
    from symgen.peers.pinocchio_constraints import default_settings, pin_model_with_loops

    if not (work / "model.bin").exists():
        pm, constraints = pin_model_with_loops(model)
        pm.saveToBinary(str(work / "model.bin"))
        (work / "constraints.txt").write_text(constraint_spec(constraints, default_settings()))
        br = Bridge(model, pm)
        np.array([br.q_to_pin(q) for q in states["q"]]).tofile(work / "pq.bin")
        for key in ("v", "tau"):
            np.array([br.v_to_pin(x) for x in states[key]]).tofile(work / f"p{key}.bin")
    else:
        pm, _ = pin_model_with_loops(model)
        br = Bridge(model, pm)
    n = len(states["q"])
    extra = [] if max_iter is None else [str(max_iter)]
    if mu is not None:
        if max_iter is None:
            raise ValueError("mu needs max_iter")
        extra.append(repr(float(mu)))

    def run(repeats: int) -> dict[str, Any]:
        out = json.loads(_run([str(driver), str(n), str(repeats), *extra], work, what))
        a = np.array([br.v_from_pin(x) for x in np.reshape(out["a"], (n, model.nv))])
        return {**{k: v for k, v in out.items() if k != "a"}, "a": a}

    return run


def tuned_iterations(model: Model, states: Mapping[str, Array], driver: Path, work: Path,
                     expected: Array) -> tuple[int | None, dict[str, float]]:
    """The fewest max_iter of TUNED_ITERATIONS whose accelerations agree with ``expected``
    (the independent numpy solution) to TUNED_RTOL at every state, and the error of each
    candidate tried."""
    tried: dict[str, float] = {}
    for k in TUNED_ITERATIONS:
        out = prepare_pinocchio(model, states, driver, work, k)(0)
        tried[str(k)] = err = worst_error(out["a"], expected)
        if err <= TUNED_RTOL:
            return k, tried
    return None, tried


def tuned_lcaba(model: Model, states: Mapping[str, Array], driver: Path, work: Path,
                expected: Array) -> tuple[dict[str, Any], dict[str, float]]:
    """lcaba's settings (module docstring): for each max_iter of TUNED_ITERATIONS in turn,
    every mu of LCABA_MU; the first max_iter at which some mu's accelerations agree with
    ``expected`` (the independent numpy solution) to TUNED_RTOL at every state, with the
    most accurate such mu. Where no pair does: the most accurate pair tried, ``meets``
    False. Returns {"mu", "max_iter", "error", "meets"} and the error of every pair tried
    (keys "mu/max_iter")."""
    tried: dict[str, float] = {}
    best: dict[str, Any] | None = None
    for k in TUNED_ITERATIONS:
        for mu in LCABA_MU:
            out = prepare_pinocchio(model, states, driver, work, k, mu,
                                    "Pinocchio's lcaba program")(0)
            tried[f"{mu:g}/{k}"] = err = worst_error(out["a"], expected)
            if best is None or err < best["error"]:
                best = {"mu": mu, "max_iter": k, "error": err}
        if best is not None and best["error"] <= TUNED_RTOL:
            break
    assert best is not None
    return {**best, "meets": best["error"] <= TUNED_RTOL}, tried


# ------------------------------------------------------------------------------ Pinocchio codegen
def codegen_peer() -> tuple[Callable[..., Any] | None, str]:
    """(``bench.peers.pinocchio_codegen.constraint_dynamics_sources``, "") where that module
    and function exist and the module's ``unavailable()`` (if any) gives no reason; else
    (None, why not). Looked up at run time: the module is optional."""
    name = f"{__package__ or 'bench'}.peers.{CODEGEN_MODULE}"
    try:
        mod = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return None, f"no module {name}"
        return None, f"{name} cannot be imported ({exc})"
    except Exception as exc:  # a module under construction: any error is a reason, not fatal
        return None, f"{name} cannot be imported ({type(exc).__name__}: {exc})"
    fn = getattr(mod, CODEGEN_FUNCTION, None)
    if not callable(fn):
        return None, f"{name} has no {CODEGEN_FUNCTION}()"
    why = mod.unavailable() if callable(getattr(mod, "unavailable", None)) else None
    return (None, why) if why else (fn, "")


class CodegenSourcesError(RuntimeError):
    """The code-generation module failed to give the C (not retried on later models)."""


def codegen_entry(folder: Path) -> str:
    """The zero-order forward function CppADCodeGen wrote into ``folder``'s C files
    (``<name>_forward_zero``; exactly one)."""
    names = {m.group(1) for path in sorted(folder.glob("*.c"))
             for m in re.finditer(r"^\s*void\s+(\w+_forward_zero)\s*\(", path.read_text(),
                                  re.MULTILINE)}
    if len(names) != 1:
        raise RuntimeError(f"{folder}: expected one *_forward_zero function, found "
                           f"{sorted(names) or 'none'}")
    return names.pop()


def codegen_files(folder: Path, entry: str) -> list[Path]:
    """The C files of ``folder`` that define ``entry`` or its split-off parts (``entry``
    followed by a suffix): CppADCodeGen also writes model-library files (info, thread pool,
    atomic functions) that the timing does not need."""
    head = re.compile(rf"^[ \t]*(?:static\s+)?(?:inline\s+)?void\s+{entry}\w*\s*\([^;]*?\)\s*\{{",
                      re.MULTILINE | re.DOTALL)
    return [p for p in sorted(folder.glob("*.c")) if head.search(p.read_text())]


def prepare_codegen(model: Model, states: Mapping[str, Array], work: Path,
                    sources: Callable[..., Any], spec: str) -> Runner:
    """The hook for Pinocchio's code-generated ``CodeGenConstraintDynamics``: ``sources``
    (:func:`codegen_peer`'s function) is called as ``sources(model_bin, spec,
    with_settings=True, log=log)`` with the model's ``saveToBinary`` file and the
    ``constraints.txt`` text ``spec`` (:func:`constraint_spec`: the proximal settings the C
    is generated with, then the constraint models) and returns the folder of CppADCodeGen's
    C files (or a tuple whose first item is that folder). The files defining the entry point
    (:func:`codegen_files`) are compiled with FLAGS and linked with :data:`CODEGEN_DRIVER`, which calls the one
    ``<name>_forward_zero(in, out, atomic)`` (:func:`codegen_entry`): in[0] = [q (nq), v (nv),
    τ (nv)] in Pinocchio's layout (packed per state in Python: nothing copied in the timed
    loop), out[0] = [q̈ (nv), λ (rows)], atomic an empty ``struct LangCAtomicFun`` (the
    generated code calls no atomic function)."""
    from symgen.peers.pinocchio import Bridge
    from symgen.peers.pinocchio_constraints import pin_model_with_loops

    pm, constraints = pin_model_with_loops(model)
    pm.saveToBinary(str(work / "model.bin"))
    (work / "constraints.txt").write_text(spec)
    try:
        found = sources(work / "model.bin", spec, with_settings=True, log=log)
    except Exception as exc:  # the optional module's failure: reported, not fatal
        raise CodegenSourcesError(f"{type(exc).__name__}: {exc}") from exc
    folder = Path(found[0] if isinstance(found, tuple) else found)
    entry = codegen_entry(folder)
    br = Bridge(model, pm)
    rows = sum(int(cm.residualSize()) for cm in constraints)
    x = np.array([np.concatenate([br.q_to_pin(q), br.v_to_pin(v), br.v_to_pin(tau)])
                  for q, v, tau in zip(states["q"], states["v"], states["tau"], strict=True)])
    x.tofile(work / "px.bin")
    objects = []
    for k, path in enumerate(codegen_files(folder, entry)):
        objects.append(f"g{k}.o")
        _run(["gcc", "-std=gnu99", *FLAGS, "-c", str(path), "-o", objects[-1]], work,
             f"compiling Pinocchio's generated {path.name}")
    (work / "driver.c").write_text(CODEGEN_DRIVER.replace("@ENTRY@", entry))
    _run(["gcc", "-std=c99", *FLAGS, f"-I{TIMING_DIR}", "driver.c", *objects, "-o", "driver",
          "-lm"], work, "building the timing program of Pinocchio's generated C")
    n = len(states["q"])

    def run(repeats: int) -> dict[str, Any]:
        out = json.loads(_run(["./driver", str(n), str(repeats), str(model.nq),
                               str(model.nv), str(rows)], work,
                              "the timing program of Pinocchio's generated C"))
        a = np.array([br.v_from_pin(x) for x in np.reshape(out["a"], (n, model.nv))])
        return {"ns": out["ns"], "a": a, "rows": rows}

    return run


# ------------------------------------------------------------------------------ MuJoCo
def _fmt(*values: float) -> str:
    return " ".join(repr(float(x)) for x in values)


def mjcf_with_loops(model: Model) -> str:
    """:func:`bench.peers.mujoco_peer.mjcf_from_symgen` plus the loop joints as equality
    constraints between sites (module docstring), the constraint stages enabled."""
    model = model.resolve()
    root = ET.fromstring(mujoco_peer.mjcf_from_symgen(model))
    flag = root.find("option/flag")
    for name in ("constraint", "equality"):
        flag.attrib.pop(name, None)
    bodies = {el.get("name"): el for el in root.iter("body")}
    world = root.find("worldbody")
    index = {b.name: i for i, b in enumerate(model.bodies)}
    equality = ET.SubElement(root, "equality")
    attrs = {"solref": _fmt(*SOLREF), "solimp": _fmt(*SOLIMP)}

    def site(body: str, name: str, placement: Any, shift: Array) -> str:
        rot = np.array(placement.rotation, dtype=float)
        pos = np.array(placement.translation, dtype=float) + rot @ shift
        parent = world if body == model.root else bodies[f"b{index[body]}"]
        ET.SubElement(parent, "site", name=name, pos=_fmt(*pos),
                      quat=_fmt(*mujoco_peer._quat_wxyz(rot)))
        return name

    for k, joint in enumerate(model.loop_joints):
        if joint.type in (JointType.REVOLUTE, JointType.CONTINUOUS):
            axis = np.array(joint.axis, dtype=float)
            shifts = [np.zeros(3), AXIS_OFFSET * axis / np.linalg.norm(axis)]
            kind = "connect"
        elif joint.type is JointType.SPHERICAL:
            shifts, kind = [np.zeros(3)], "connect"
        elif joint.type is JointType.FIXED:
            shifts, kind = [np.zeros(3)], "weld"
        else:
            raise ValueError(f"loop joint {joint.name!r}: no MuJoCo equality for type "
                             f"{joint.type.value!r}")
        for s, shift in enumerate(shifts):
            p = site(joint.parent, f"l{k}p{s}", joint.placement, shift)
            c = site(joint.child, f"l{k}c{s}", joint.child_placement, shift)
            ET.SubElement(equality, kind, site1=p, site2=c, **attrs)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"


def mujoco_unavailable() -> str | None:
    return mujoco_peer.unavailable()


def prepare_mujoco(model: Model, states: Mapping[str, Array], work: Path) -> Runner:
    model = model.resolve()
    xml = mjcf_with_loops(model)
    (work / "model.xml").write_text(xml)
    lay = mujoco_peer.layout(model, xml)
    n = len(states["q"])
    zeros = np.zeros((n, model.nv))
    arrays = mujoco_peer.to_mujoco(lay, {"q": states["q"], "v": states["v"], "a": zeros,
                                         "tau": states["tau"]})
    for key in ("qpos", "qvel", "qfrc"):
        arrays[key].tofile(work / f"{key}.bin")
    include, lib = mujoco_peer._paths()
    (work / "driver.c").write_text(MUJOCO_DRIVER)
    _run(["gcc", "-std=c99", *FLAGS, f"-I{include}", f"-I{TIMING_DIR}", "driver.c", "-o",
          "driver", str(lib), f"-Wl,-rpath,{lib.parent}", "-lm"], work,
         "building the MuJoCo driver")
    convert = []
    for q, v in zip(states["q"], states["v"], strict=True):
        _, t, c = mujoco_peer.transform(lay, q, v)
        convert.append((t, c))

    def run(repeats: int) -> dict[str, Any]:
        out = json.loads(_run(["./driver", str(n), str(repeats), str(model.nq),
                               str(model.nv)], work, "the MuJoCo driver"))
        qacc = np.reshape(out["a"], (n, model.nv))
        a = np.array([t.T @ (x - c) for x, (t, c) in zip(qacc, convert, strict=True)])
        return {**{k: v for k, v in out.items() if k != "a"}, "a": a}

    return run


# ------------------------------------------------------------------------------ one model
def measure_model(name: str, count: int, repeats: int, rounds: int,
                  peers: Mapping[str, Any]) -> dict[str, Any]:
    """Every tool on one model (module docstring); ``peers``: {"pinocchio": driver path,
    "lcaba": driver path, "codegen": :func:`codegen_peer`'s function, "mujoco": True} for
    those available."""
    model = load_model(name)
    started = time.perf_counter()
    states = consistent_states(model, count, seed=0)
    log(f"  {name}: {count} consistent states in {time.perf_counter() - started:.0f} s")
    ks = symgen.generate(model, [KERNEL, *OPEN_TREE])
    by_method = {}
    for method in METHODS:  # each derivation forced, where the model admits it
        try:
            by_method[method] = symgen.generate(model, [KERNEL],
                                                symgen.Options(forward_dynamics=method))
        except symgen.SymgenError as exc:
            log(f"  {name}: constrained_forward_dynamics by {method} not available: {exc}")
    loops = analyse_loops(model)
    tree_kernel = min(OPEN_TREE, key=lambda k: ks.op_counts()[k]["total"])
    entry: dict[str, Any] = {
        "model": name, "nq": model.nq, "nv": model.nv, "dof": model.nv - loops.rank,
        "loop_joints": [j.name for j in model.loop_joints], "states": count,
        "repeats": repeats, "rounds": rounds,
        "ops": ks.op_counts()[KERNEL], "rows": {"symgen": loops.rank},
        "method": ks.choices.get(KERNEL, next(iter(by_method), "")),
        "methods": {m: k.op_counts()[KERNEL] for m, k in by_method.items()},
        "open_tree": {"kernel": tree_kernel, "ops": ks.op_counts()[tree_kernel]},
        "ns": {}, "spread": {}, "accuracy": {}, "reference_error": {}, "residual": {},
        "iterations": {},
    }
    expected = reference_accelerations(model, states)
    with tempfile.TemporaryDirectory() as tmp:
        def folder(tool: str) -> Path:
            (Path(tmp) / tool).mkdir()
            return Path(tmp) / tool

        runners: dict[str, Runner] = {"symgen": prepare_symgen(model, ks, states,
                                                               folder("symgen"))}
        first = runners["symgen"](1)
        entry["check_error"] = worst_error(first["a"], expected)
        if not entry["check_error"] <= CHECK_RTOL:
            raise RuntimeError(f"symgen on {name} disagrees with the numpy solution: "
                               f"{entry['check_error']:.1e}")
        a_sym = first["a"]
        for method, method_ks in by_method.items():
            runners[method] = prepare_symgen(model, method_ks, states, folder(method))
            error = worst_error(runners[method](1)["a"], expected)
            if not error <= CHECK_RTOL:
                raise RuntimeError(f"symgen's {method} derivation on {name} disagrees with "
                                   f"the numpy solution: {error:.1e}")
        runners["open_tree"] = prepare_symgen(model, ks, states, folder("open_tree"),
                                              f"m_{tree_kernel}(q, v, tau, a)")
        entry["open_tree"]["check_error"] = worst_error(runners["open_tree"](1)["a"],
                                                        open_tree_accelerations(model, states))
        if not entry["open_tree"]["check_error"] <= CHECK_RTOL:
            raise RuntimeError(f"symgen's open-tree {tree_kernel} on {name} disagrees with "
                               f"symgen.reference: {entry['open_tree']['check_error']:.1e}")
        if "pinocchio" in peers:
            work = folder("pinocchio")
            runners["pinocchio"] = prepare_pinocchio(model, states, peers["pinocchio"], work)
            tuned, tried = tuned_iterations(model, states, peers["pinocchio"], work, expected)
            entry["iterations"]["pinocchio_tuned_tried"] = tried
            entry["iterations"]["pinocchio_tuned_max_iter"] = tuned
            if tuned is not None:
                runners["pinocchio_tuned"] = prepare_pinocchio(model, states,
                                                               peers["pinocchio"], work, tuned)
        if "lcaba" in peers:
            work = folder("lcaba")
            what = "Pinocchio's lcaba program"
            chosen, tried = tuned_lcaba(model, states, peers["lcaba"], work, expected)
            shared = prepare_pinocchio(model, states, peers["lcaba"], work, what=what)(0)
            entry["lcaba"] = {**chosen, "tried": tried,
                              "shared_error": worst_error(shared["a"], expected)}
            runners["lcaba"] = prepare_pinocchio(model, states, peers["lcaba"], work,
                                                 chosen["max_iter"], chosen["mu"], what)
        if "codegen" in peers:
            import pinocchio

            from symgen.peers.pinocchio_constraints import (
                default_settings,
                pin_model_with_loops,
            )

            settings = default_settings()
            tuned = entry["iterations"].get("pinocchio_tuned_max_iter")
            if tuned is not None:
                settings = pinocchio.ProximalSettings(settings.absolute_accuracy,
                                                      settings.relative_accuracy,
                                                      settings.mu, tuned)
            spec = constraint_spec(pin_model_with_loops(model)[1], settings)
            entry["codegen"] = {"max_iter": settings.max_iter, "mu": settings.mu,
                                "relative_accuracy": settings.relative_accuracy}
            try:
                runners["codegen"] = prepare_codegen(model, states, folder("codegen"),
                                                     peers["codegen"], spec)
            except (RuntimeError, OSError, ValueError, TypeError) as exc:
                entry["codegen"]["failed"] = " ".join(str(exc).split())[:300]
                entry["codegen"]["generation_failed"] = isinstance(exc, CodegenSourcesError)
                log(f"  {name}: Pinocchio's generated constraint dynamics not measured: "
                    f"{entry['codegen']['failed']}")
        if "mujoco" in peers:
            runners["mujoco"] = prepare_mujoco(model, states, folder("mujoco"))
        samples: dict[str, list[float]] = {}
        tools = list(runners)
        for r in range(rounds):
            for tool in tools[r % len(tools):] + tools[:r % len(tools)]:
                out = runners[tool](repeats)
                samples.setdefault(tool, []).append(out["ns"])
                if r or tool == "open_tree":  # its q̈ leaves the loops: no residual
                    continue
                entry["residual"][tool] = worst_residual(out["a"], states)
                entry["reference_error"][tool] = worst_error(out["a"], expected)
                if tool != "symgen":
                    entry["accuracy"][tool] = worst_error(out["a"], a_sym)
                if tool not in ("symgen", *METHODS):
                    entry["rows"].setdefault(tool.split("_")[0], out["rows"])
                if tool.startswith("pinocchio") or tool == "lcaba":
                    entry["iterations"][tool] = {"max_iter": out["max_iter"],
                                                 "mean": out["iterations_mean"],
                                                 "max": out["iterations_max"]}
                if tool == "mujoco":
                    entry["iterations"]["mujoco"] = {"max": out["iterations_max"]}
    entry["ns"] = {k: float(np.median(v)) for k, v in samples.items()}
    entry["spread"] = {k: [min(v), max(v)] for k, v in samples.items()}
    log(f"  {name}: symgen {entry['ns']['symgen']:.0f} ns; " + ", ".join(
        f"{tool} {entry['ns'][tool]:.0f} ns (×{ratio(entry, tool):.1f})"
        for tool in entry["ns"] if tool != "symgen"))
    return entry


def ratio(entry: Mapping[str, Any], tool: str) -> float | None:
    """tool / symgen ns per call (> 1: symgen faster), or None when not measured."""
    ns = entry["ns"]
    return ns[tool] / ns["symgen"] if tool in ns else None


def versions() -> dict[str, str]:
    out = {}
    for name in ("pinocchio", "mujoco"):
        with contextlib.suppress(ImportError):
            out[name] = __import__(name).__version__
    return out


def measure(models: Sequence[str], count: int, repeats: int, rounds: int, mode: str = "full",
            out: Path | None = None, codegen: bool = True) -> dict[str, Any]:
    """Every model, the content of ``loop_dynamics.json`` (written to ``out`` as it goes
    when given). ``mode == "smoke"`` skips Pinocchio (its program takes minutes to build);
    ``codegen=False`` skips Pinocchio's generated constraint dynamics (its generator takes
    ~15 minutes to build, once)."""
    from symgen.peers import pinocchio_constraints as pc

    log(f"closed loops: constrained forward dynamics, {', '.join(models)}")
    started = time.perf_counter()
    unavailable: dict[str, str] = {}
    peers: dict[str, Any] = {}
    reason = ("skipped by --smoke (building Pinocchio's C++ program takes minutes)"
              if mode == "smoke" else pinocchio_unavailable())
    if reason:
        unavailable["pinocchio"] = unavailable["lcaba"] = unavailable["codegen"] = reason
    else:
        peers["pinocchio"] = pinocchio_driver()
        reason = lcaba_unavailable()
        if reason:
            unavailable["lcaba"] = reason
        else:
            try:
                peers["lcaba"] = lcaba_driver()
            except RuntimeError as exc:
                unavailable["lcaba"] = " ".join(str(exc).split())[:300]
        sources, reason = codegen_peer() if codegen else (None, "skipped by --no-codegen")
        if sources is None:
            unavailable["codegen"] = reason
        else:
            peers["codegen"] = sources
    reason = mujoco_unavailable()
    if reason:
        unavailable["mujoco"] = reason
    else:
        peers["mujoco"] = True
    from .natural_accuracy import code_version

    res: dict[str, Any] = {
        "machine": machine_info(), "code": code_version(), "versions": versions(),
        "unavailable": unavailable,
        "settings": {"states": count, "repeats": repeats, "rounds": rounds, "seed": 0,
                     "flags": list(FLAGS), "perturbation": PERTURBATION, "target": TARGET,
                     "pinocchio": {"absolute_accuracy": 0.0, "relative_accuracy": pc.ACCURACY,
                                   "mu": pc.MU, "max_iter": pc.MAX_ITER,
                                   "axis_offset": pc.AXIS_OFFSET,
                                   "tuned_candidates": list(TUNED_ITERATIONS),
                                   "tuned_rtol": TUNED_RTOL},
                     "lcaba": {"absolute_accuracy": 0.0, "relative_accuracy": pc.ACCURACY,
                               "mu_candidates": list(LCABA_MU), "shared_mu": pc.MU,
                               "shared_max_iter": pc.MAX_ITER,
                               "tuned_candidates": list(TUNED_ITERATIONS),
                               "tuned_rtol": TUNED_RTOL},
                     "mujoco": {"solref": list(SOLREF), "solimp": list(SOLIMP),
                                "axis_offset": AXIS_OFFSET}},
        "timed": {k: v for k, v in TIMED.items()
                  if k in ("symgen", *METHODS) or k.split("_")[0] in peers},
        "results": [], "complete": False,
    }
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    res["settings"]["pinned_cpu"] = pin_to_one_cpu()
    try:
        for name in models:
            res["results"].append(measure_model(name, count, repeats, rounds, peers))
            failed = res["results"][-1].get("codegen") or {}
            if failed.get("generation_failed"):  # the generator itself: not retried
                peers.pop("codegen")
                unavailable["codegen"] = f"its generation failed on {name}: {failed['failed']}"
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
def _ns(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def _cell(entry: Mapping[str, Any], tool: str) -> str:
    r = ratio(entry, tool)
    return "—" if r is None else f"{_ns(entry['ns'][tool])} (×{r:.1f})"


def _e(x: float | None) -> str:
    return "—" if x is None else f"{x:.1e}"


def _iterations(entry: Mapping[str, Any], tool: str) -> str:
    it = entry["iterations"].get(tool)
    if not it:
        return ""
    mean = it["mean"]
    return f"{mean:.0f} it." if mean == int(mean) else f"{mean:.1f} it. (mean)"


def _iterations_text(results: Sequence[Mapping[str, Any]]) -> str:
    """How many proximal iterations the shared settings ran, over the models."""
    its = [e["iterations"]["pinocchio"] for e in results if "pinocchio" in e["iterations"]]
    if its and all(it["mean"] == it["max_iter"] for it in its):
        return f"every call ran all {its[0]['max_iter']} proximal iterations"
    return "proximal iterations per call: " + ", ".join(
        f"{e['model']} {e['iterations']['pinocchio']['mean']:.1f}" for e in results
        if "pinocchio" in e["iterations"])


def _judged(entry: Mapping[str, Any]) -> tuple[str, float] | None:
    """The constraintDynamics figure shown beside the headline: the fewest-iterations timing
    where there is one (the faster), else the shared settings'."""
    for tool in ("pinocchio_tuned", "pinocchio"):
        r = ratio(entry, tool)
        if r is not None:
            return tool, r
    return None


#: The headline's peers (the target is judged against the faster), with their page names.
HEADLINE = {"lcaba": "`lcaba`", "codegen": "`CodeGenConstraintDynamics`"}


def _headline(entry: Mapping[str, Any]) -> tuple[str, float] | None:
    """The peer the target is judged by on this model: the faster of lcaba and the
    generated CodeGenConstraintDynamics among those measured, and its ratio."""
    timed = [t for t in HEADLINE if t in entry["ns"]]
    if not timed:
        return None
    tool = min(timed, key=lambda t: entry["ns"][t])
    return tool, ratio(entry, tool)


def _floor_text(results: list[dict], judged: list[tuple[str, str, float]],
                target: float) -> str:
    """Where the target is missed: the open tree's own forward dynamics (a floor both
    formulations build on) against the time the target allows."""
    by_model = {e["model"]: e for e in results}
    parts = []
    for model, tool, r in judged:
        entry = by_model[model]
        floor = entry["ns"].get("open_tree")
        if r >= target or floor is None:
            continue
        allowed = entry["ns"][tool] / target
        parts.append(f"{model}: the target allows {allowed:.0f} ns, of which the loop-free "
                     f"tree's own forward dynamics already takes {floor:.0f} ns "
                     f"({entry['open_tree']['ops']['trig']} sin/cos calls among its "
                     f"{entry['open_tree']['ops']['total']} operations, which the peer "
                     f"computes too), leaving {allowed - floor:.0f} ns for the loop, which "
                     f"takes {entry['ns']['symgen'] - floor:.0f} ns")
    return (" Why: " + "; ".join(parts) + ".") if parts else ""


def _lcaba_settings(entry: Mapping[str, Any]) -> str:
    lc = entry.get("lcaba")
    return "" if not lc else f"mu {lc['mu']:g}, {lc['max_iter']} it."


def _not_measured(res: Mapping[str, Any], entry: Mapping[str, Any], tool: str) -> str:
    """Why ``tool`` has no figure on this model ("" when it has one)."""
    if tool in entry["ns"]:
        return ""
    why = (entry.get(tool) or {}).get("failed") or res.get("unavailable", {}).get(tool) \
        or "not run by this version of the benchmark"
    return f"not measured: {why}"


def summary(res: Mapping[str, Any]) -> str:
    """The page's summary: the 2× target against the faster of lcaba and the generated
    CodeGenConstraintDynamics, model by model; lcaba's settings and accuracy; the iterative
    constraintDynamics and MuJoCo beside it."""
    results = res["results"]
    target = res["settings"]["target"]
    unavailable = res.get("unavailable", {})
    judged = [(e["model"], *j) for e in results if (j := _headline(e))]
    if not judged:
        reasons = "; ".join(f"{HEADLINE[t]}: {_not_measured(res, results[0], t)}"
                            for t in HEADLINE) if results else "no models"
        text = (f"against the faster of Pinocchio's `lcaba` and its code-generated "
                f"`CodeGenConstraintDynamics`: not measured ({reasons}).")
    else:
        misses = [f"{m} (×{r:.1f})" for m, _, r in judged if r < target]
        text = ("symgen's `constrained_forward_dynamics` against the faster of Pinocchio's "
                "`lcaba` and its code-generated `CodeGenConstraintDynamics`: " + ", ".join(
                    f"{m} ×{r:.1f} ({HEADLINE[t]})" for m, t, r in judged) + ". ")
        if not any("codegen" in e["ns"] for e in results):
            why = unavailable.get("codegen") or next(
                (e["codegen"]["failed"] for e in results if (e.get("codegen") or {}).get(
                    "failed")), "not run")
            text += f"(`CodeGenConstraintDynamics` not measured: {why}; lcaba alone.) "
        if misses:
            text += f"**The {target:g}× target is missed on " + ", ".join(misses) + "**."
            text += _floor_text(results, judged, target)
        else:
            text += f"The {target:g}× target is met on all {len(judged)} models."
        lc = [e for e in results if e.get("lcaba") and "lcaba" in e["ns"]]
        if lc:
            rtol = res["settings"].get("lcaba", {}).get("tuned_rtol", TUNED_RTOL)
            text += (" lcaba (given the same `CONTACT_3D` constraint models as "
                     "`constraintDynamics`; timed with the fewest proximal iterations at which "
                     f"a mu gives q̈ within {rtol:g} of the independent numpy solution): "
                     + ", ".join(
                         f"{e['model']} {_lcaba_settings(e)}, within "
                         f"{e['reference_error']['lcaba']:.0e}" for e in lc) + ".")
            bad = [e["model"] for e in lc if not e["lcaba"]["meets"]]
            if bad:
                text += (" **lcaba does not reach that accuracy on " + ", ".join(bad)
                         + "** (timed with its most accurate settings tried).")
    shared = [f"{e['model']} ×{ratio(e, 'pinocchio'):.0f}" for e in results
              if ratio(e, "pinocchio") is not None]
    tuned = [f"{e['model']} ×{r:.1f}" for e in results if (j := _judged(e))
             and j[0] == "pinocchio_tuned" for r in [j[1]]]
    if shared or tuned:
        text += " Against Pinocchio's iterative `constraintDynamics`: "
        if shared:
            text += (", ".join(shared) + " with the shared proximal settings ("
                     + _iterations_text(results) + ")")
        if tuned:
            text += ("; " if shared else "") + ", ".join(tuned) + (
                " with the fewest iterations that keep its accuracy")
        text += "."
    worst = max(results, key=lambda e: e["check_error"])
    text += (f" symgen's q̈ is within {worst['check_error']:.0e} of an independent numpy "
             f"solution (worst model: {worst['model']}).")
    mj = [f"{e['model']} ×{ratio(e, 'mujoco'):.1f}" for e in results if "mujoco" in e["ns"]]
    if mj:
        error = max(e["accuracy"]["mujoco"] for e in results if "mujoco" in e["accuracy"])
        text += (" Against MuJoCo's `mj_forward` with equality constraints: " + ", ".join(mj)
                 + f" (MuJoCo's soft constraints: q̈ within {error:.0e} of symgen's).")
    return text


def embedded_summary(res: Mapping[str, Any]) -> str:
    """Issue 15's line: the embedding against the multipliers (both derivations of
    constrained_forward_dynamics), model by model, the 1.5× goal on the knee, and whether
    the kernel's choice (by operation count) is the faster in time (within the spread of
    the interleaved runs)."""
    results = [e for e in res["results"] if all(m in e["ns"] for m in METHODS)]
    if not results:
        return "the two derivations were not both measured."
    parts = []
    wrong = []
    for e in results:
        speedup = e["ns"]["multipliers"] / e["ns"]["embedded"]
        parts.append(f"{e['model']} ×{speedup:.2f}")
        chosen = e["method"]
        other = next(m for m in METHODS if m != chosen)
        low, _ = e["spread"][other]
        _, high = e["spread"][chosen]
        if e["ns"][chosen] > e["ns"][other] and high > low and \
                e["ns"][chosen] - e["ns"][other] > (high - low):
            wrong.append(f"{e['model']} (picked {chosen}, {e['ns'][chosen]:.0f} ns against "
                         f"{e['ns'][other]:.0f} ns)")
    text = ("constrained_forward_dynamics by constraint embedding against the same with "
            "multipliers (multipliers ns / embedding ns): " + ", ".join(parts) + ". ")
    knee = next((e for e in results if e["model"] == "four_bar_knee"), None)
    if knee is not None:
        speedup = knee["ns"]["multipliers"] / knee["ns"]["embedded"]
        verdict = "met" if speedup >= EMBEDDED_TARGET else "**missed**"
        text += (f"The {EMBEDDED_TARGET:g}× goal on the four-bar knee is {verdict} "
                 f"(×{speedup:.2f}; operations {knee['methods']['multipliers']['total']:,} "
                 f"against {knee['methods']['embedded']['total']:,}: both compute M, the "
                 "Newton-Euler bias, G and Ġq̇; the embedding saves the LᵀDL of the whole M "
                 "and the Schur complement, a fraction of a 5-DOF leg's cost). ")
        tree = knee.get("open_tree")
        if tree is not None and "open_tree" in knee["ns"]:
            needed = knee["ns"]["multipliers"] / EMBEDDED_TARGET
            text += (f"The goal asks for at most {_ns(needed)} ns; the knee's open tree, "
                     f"its loop joint removed, takes {_ns(knee['ns']['open_tree'])} ns for "
                     f"its own forward dynamics (`{tree['kernel']}`, "
                     f"{tree['ops']['total']:,} operations: M, the bias forces and "
                     "M's LᵀDL), while both derivations compute the same M and bias "
                     "forces and the loop's Jacobian and Ġq̇ on top. ")
    text += ("constrained_forward_dynamics picks by operation count: " + (
        "the faster of the two in time on every model, or within the spread of the runs."
        if not wrong else "slower than the other beyond the spread on " + ", ".join(wrong)
        + "."))
    return text


def _codegen_text(res: Mapping[str, Any]) -> str:
    """What the page says of the generated CodeGenConstraintDynamics's settings."""
    cg = [e["codegen"] for e in res["results"] if e.get("codegen")]
    if not cg:
        return ""
    its = sorted({c["max_iter"] for c in cg})
    return (f" (here max_iter {', '.join(map(str, its))}, mu {cg[0]['mu']:g}, relative "
            f"accuracy {cg[0]['relative_accuracy']:g})")


def _short(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def section(res: Mapping[str, Any]) -> str:
    """The benchmark page's section: what is timed, the tables, the target line."""
    st = res["settings"]
    p, mj = st["pinocchio"], st["mujoco"]
    lc = st.get("lcaba", {})
    vers = res.get("versions", {})
    unavailable = res.get("unavailable", {})
    parts = [
        "Forward dynamics of closed kinematic loops: symgen's compiled "
        "`constrained_forward_dynamics` (inputs q, v, τ; outputs q̈ and λ of the independent "
        f"loop rows) against Pinocchio {vers.get('pinocchio', '')}'s loop-constrained "
        "articulated-body algorithm `lcaba` and its code-generated "
        "`CodeGenConstraintDynamics` (the headline: the faster of the two), its iterative "
        f"`constraintDynamics`, and MuJoCo {vers.get('mujoco', '')}'s `mj_forward` with "
        "equality constraints, on the example models five-bar, Delta robot and four-bar knee "
        f"(`examples/models/`). States: {st['states']} per model (seed {st['seed']}), q "
        "closed by `LoopClosure(model).assemble` from the zero configuration moved by "
        f"{st['perturbation']:g} N(0, 1) rad per coordinate, v in the null space of the "
        "loop Jacobian (every raw row), τ standard normal: consistent states, where q̈ is "
        "unique however redundant a tool's constraint rows are. Each tool has its own "
        f"C/C++ program over the same states, built with `{' '.join(st['flags'])}`; a "
        f"figure is the median over {st['rounds']} interleaved runs of the median of "
        f"{st['repeats']} passes (ns per call, one pinned core). Code {res.get('code', '?')}; "
        f"{res.get('seconds', 0):.0f} s. Source: `bench/loop_dynamics.py` "
        "(`python -m bench.loop_dynamics`).",
        "",
        "What is timed:",
        "",
        "- **symgen**: `m_constrained_forward_dynamics(q, v, tau, a, lam)`: straight-line C, "
        "the derivation with fewer operations (*symgen picks*) of two, each also timed on "
        "its own (`Options(forward_dynamics=...)`, docs/loops.md): **multipliers** (LᵀDL of "
        "M, the Schur complement on the independent loop rows) and **embedding** (the "
        "reduced equations in the independent coordinates, λ from the dependent "
        "coordinates' rows).",
        "- **open tree**: the same model's tree with its loop joints removed, its own forward "
        "dynamics (`m_forward_dynamics_ltdl` or `m_forward_dynamics_aba`, the fewer "
        "operations; checked against `symgen.reference`'s articulated-body algorithm): not a "
        "peer but a floor in practice: both loop formulations compute the same M and bias "
        "forces and the loop's Jacobian and Ġq̇ on top (the embedding factors a smaller "
        "matrix than M).",
        "- Pinocchio's constraint models, shared by its three timings: the model written by "
        "`saveToBinary` and the `RigidConstraintModel`s of "
        "`symgen.peers.pinocchio_constraints`, rebuilt in C++ from their numbers: a "
        "revolute loop joint is two `CONTACT_3D` point constraints on its axis, "
        f"{p['axis_offset']:g} m apart (6 rows for its 5 independent ones), between the two "
        "joints carrying its bodies, LOCAL frame, no Baumgarte terms (a spherical loop would "
        "be one `CONTACT_3D`, a fixed one a `CONTACT_6D`; the three models have revolute "
        "loops only).",
        "- **lcaba**: `lcaba(model, data, q, v, tau, constraint_models, constraint_datas, "
        "settings)` per call, after one `computeJointMinimalOrdering(model, data, "
        "constraint_models)` (lcaba's set-up: the joint elimination order and the coupling "
        "terms of the loops). lcaba is an augmented Lagrangian on the articulated-body "
        "recursion: the loops' rows enter the articulated inertias with the penalty 1/mu, "
        "then each further proximal iteration corrects λ by a reduced backward and forward "
        "sweep; it stops on its absolute accuracy only (set to 0: every call runs max_iter "
        "− 1 corrections) and copes with redundant rows. The shared mu "
        f"{lc.get('shared_mu', p['mu']):g} leaves its q̈ far from the solution (rounding in "
        "the penalised inertias; the column *at shared mu*); a larger mu converges in more "
        "iterations but further. So lcaba is timed with the fewest max_iter of "
        f"{', '.join(map(str, lc.get('tuned_candidates', p['tuned_candidates'])))} at which "
        f"one of mu = {', '.join(f'{x:g}' for x in lc.get('mu_candidates', LCABA_MU))} "
        "gives q̈ within "
        f"{lc.get('tuned_rtol', p['tuned_rtol']):g} of the independent numpy solution "
        "(below) at every state, with the most accurate such mu.",
        "- **CodeGenConstraintDynamics**: Pinocchio's CppADCodeGen C of "
        "`constraintDynamics` on the same constraint models (`bench.peers.pinocchio_codegen`), "
        "taped with the fewest-iterations settings of `constraintDynamics` below"
        + _codegen_text(res) + ", compiled with gcc "
        f"`{' '.join(st['flags'])}` and called as `<name>_forward_zero(in, out, atomic)` "
        "from a C program (in = [q, v, τ] per state, packed beforehand).",
        "- **constraintDynamics**: `constraintDynamics(model, data, q, v, tau, "
        "contact_models, contact_datas, settings)` per call, after one "
        "`initConstraintDynamics`. *shared settings*: `ProximalSettings("
        f"{p['absolute_accuracy']:g}, {p['relative_accuracy']:g}, {p['mu']:g}, "
        f"{p['max_iter']})` as `pinocchio_constraints.constraint_dynamics` uses: with "
        "redundant rows the change of λ need not fall below the relative accuracy ("
        + _iterations_text(res["results"]) + "). *fewest iterations*: the same call with "
        f"max_iter lowered to the smallest of {', '.join(map(str, p['tuned_candidates']))} "
        f"whose q̈ agrees with the independent numpy solution to {p['tuned_rtol']:g} at "
        "every state.",
        "- **MuJoCo**: copy qpos, qvel, qfrc_applied into mjData, then `mj_forward` (the whole "
        "pipeline; contacts off, the equality constraints on, Newton solver). Loop joints as "
        f"site `connect` equalities (two per revolute loop on its axis, {mj['axis_offset']:g} "
        f"m apart), solimp = ({', '.join(f'{x:g}' for x in mj['solimp'])}) (the stiffest "
        f"MuJoCo allows), solref = ({', '.join(f'{x:g}' for x in mj['solref'])}). MuJoCo's "
        "constraints are soft: its regularisation (1 − d)/d ≈ 1e-4 of each row's inertia "
        "stays, which its accuracy shows.",
        "",
        "symgen's derivations (ns per call; constraint rows: symgen's independent ones, "
        "Pinocchio's, MuJoCo's):",
        "",
    ]
    rows = []
    for e in res["results"]:
        r = e["rows"]

        def derivation(method: str, e: Mapping[str, Any] = e) -> str:
            if method not in e["ns"]:
                return "—"
            return f"{e['methods'][method]['total']:,} / {_ns(e['ns'][method])}"

        rows.append([
            e["model"], e["nv"], e["dof"],
            " / ".join(str(r[k]) if k in r else "—" for k in ("symgen", "pinocchio", "mujoco")),
            e["method"], f"{e['ops']['total']:,}", _ns(e["ns"]["symgen"]),
            *(derivation(m) for m in METHODS),
            (f"{_ns(e['ns']['open_tree'])} ({e['open_tree']['ops']['total']:,} ops)"
             if "open_tree" in e["ns"] else "—"),
        ])
    parts.append(table(
        ["model", "nv", "DOF", "constraint rows (symgen / Pin. / MuJoCo)", "symgen picks",
         "symgen ops", "symgen ns", "multipliers ops / ns", "embedding ops / ns",
         "open tree ns (ops)"], rows, "lrrllrrrrr"))
    parts += ["", "Against the peers (ns per call, ratio = peer / symgen: > 1, symgen faster; "
              "*headline*: the faster of lcaba and CodeGenConstraintDynamics):", ""]
    below: dict[str, str] = {}
    rows = []
    for e in res["results"]:
        it = e["iterations"]
        tuned = it.get("pinocchio_tuned_max_iter")
        head = _headline(e)
        cells = []
        for tool in ("lcaba", "codegen"):
            why = _not_measured(res, e, tool)
            if why and len(why) > 60:
                below[tool] = why
                why = "not measured (below)"
            cells.append(why or _cell(e, tool) + (f", {_lcaba_settings(e)}"
                                                  if tool == "lcaba" else ""))
        rows.append([
            e["model"], _ns(e["ns"]["symgen"]), *cells,
            "—" if head is None else f"×{head[1]:.1f} ({HEADLINE[head[0]]})",
            _cell(e, "pinocchio_tuned") + (f", {tuned} it." if tuned else ""),
            _cell(e, "pinocchio") + (f", {_iterations(e, 'pinocchio')}"
                                     if "pinocchio" in e["ns"] else ""),
            _cell(e, "mujoco"),
        ])
    parts.append(table(
        ["model", "symgen ns", "lcaba ns (ratio), settings", "CodeGenConstraintDynamics ns "
         "(ratio)", "headline", "constraintDynamics ns, fewest iterations (ratio)",
         "constraintDynamics ns, shared settings (ratio)", "MuJoCo ns (ratio)"],
        rows, "lrrrlrrr"))
    for tool, why in below.items():
        parts += ["", f"{HEADLINE[tool]}: {why}."]
    tools = [("symgen", "symgen"), ("lcaba", "lcaba"), ("codegen", "CodeGen"),
             ("pinocchio_tuned", "constraintDynamics, fewest it."),
             ("pinocchio", "constraintDynamics, shared"), ("mujoco", "MuJoCo")]
    parts += ["", "Accuracy, the worst state of each model: *vs reference*: max|q̈ − q̈_ref| / "
              "max(1, |q̈_ref|) against an independent numpy solution (M and C of "
              "`symgen.reference`, the null space of H), which symgen's must meet to 1e-8 "
              "before any figure is kept; *residual*: |H q̈ + Ḣq̇| on every raw loop row "
              "(numeric loop closure, no generated code) relative to max(1, |H| |q̈|, |Ḣq̇|); "
              "*vs symgen*: max|q̈ − q̈_symgen| / max(1, |q̈_symgen|). symgen's kernel solves on "
              "the loop rows its analysis kept at generation (an independent subset of H's "
              "rows, chosen once); at a state where that subset is worse conditioned than H "
              "its error grows accordingly, and the peers' accuracy against symgen then shows "
              "symgen's error, not theirs (compare *vs reference*). *lcaba at shared mu*: "
              "lcaba's error against the reference with the shared settings (mu "
              f"{lc.get('shared_mu', p['mu']):g}, max_iter "
              f"{lc.get('shared_max_iter', p['max_iter'])}).", ""]
    rows = []
    for e in res["results"]:
        row = [e["model"]]
        for tool, _ in tools:
            if tool not in e["ns"] or tool not in e["reference_error"]:
                row.append("—")
                continue
            vs = "—" if tool == "symgen" else _e(e["accuracy"].get(tool))
            row.append(f"{_e(e['reference_error'][tool])} / {_e(e['residual'][tool])} / {vs}")
        row.append(_e((e.get("lcaba") or {}).get("shared_error")))
        rows.append(row)
    parts.append(table(["model", *(f"{label} (vs reference / residual / vs symgen)"
                                   for _, label in tools), "lcaba at shared mu"],
                       rows, "l" + "r" * (len(tools) + 1)))
    for peer, reason in unavailable.items():
        if peer not in HEADLINE:
            parts += ["", f"{peer.capitalize()}: not measured, {reason}."]
    parts += ["", f"**Target (at least {st['target']:g}× faster than the faster of Pinocchio's "
              "`lcaba` and `CodeGenConstraintDynamics` on each model):** " + summary(res),
              "", "**Constraint embedding (issue 15's goal: at least 1.5× faster than the "
              "multipliers on the four-bar knee; the kernel's pick never slower than the "
              "other derivation by more than noise):** " + embedded_summary(res)]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.loop_dynamics",
                                     description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="50 states, fewer passes")
    mode.add_argument("--smoke", action="store_true",
                      help="the five-bar, 10 states, no Pinocchio build")
    parser.add_argument("--models", default=None,
                        help=f"comma-separated models (of {', '.join(MODELS)}; default all)")
    parser.add_argument("--states", type=int, default=None, help="states per model")
    parser.add_argument("--no-codegen", action="store_true",
                        help="skip Pinocchio's generated CodeGenConstraintDynamics (its "
                             "generator takes ~15 min to build, once)")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder of loop_dynamics.json (default bench/results/, --quick: "
                             "bench/results/quick/; a run of chosen models or states writes "
                             "no file unless given one)")
    args = parser.parse_args(argv)
    name = "smoke" if args.smoke else "quick" if args.quick else "full"
    cfg = MODES[name]
    models = ([m.strip() for m in args.models.split(",") if m.strip()] if args.models
              else list(cfg["models"]))
    unknown = sorted(set(models) - {p.stem for p in EXAMPLES.glob("*.yaml")})
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}")
    count = args.states or cfg["states"]
    chosen = bool(args.models or args.states) or name == "smoke"
    out = args.out or (None if chosen else RESULTS / "quick" if name == "quick" else RESULTS)
    res = measure(models, count, cfg["repeats"], cfg["rounds"], name,
                  None if out is None else out / "loop_dynamics.json", not args.no_codegen)
    print(section(res))
    if out is None:
        log("chosen models or states: no file written (--out DIR to keep the results)")
    else:
        log(f"wrote {out / 'loop_dynamics.json'} ({res['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
