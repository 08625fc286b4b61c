# ruff: noqa: E501  (the C and C++ program sources below have long lines)
"""Pinocchio's own code generation (CppADCodeGen) as a benchmark peer.

Pinocchio ships ``CodeGen*`` classes (``pinocchio/codegen/cppadcg-algo.hpp``, i.e.
``pinocchio/src/codegen/cppadcg/algorithm/code-generator-algo.hxx``; the old include
``pinocchio/codegen/code-generator-algo.hpp`` survives under ``include/pinocchio/deprecated``
and forwards there) that tape one of its algorithms with CppAD on
``CppAD::AD<CppAD::cg::CG<double>>`` scalars and let CppADCodeGen write straight-line C of it
(of the algorithm itself for ``CodeGenRNEA``, ``CodeGenCRBA``, ``CodeGenABA``, ``CodeGenMinv``;
of Pinocchio's analytical derivatives, Carpentier & Mansard 2018 (RSS), for
``CodeGenRNEADerivatives`` and ``CodeGenABADerivatives``; and of ``constraintDynamics`` for
``CodeGenConstraintDynamics``). This module:

- builds ONE generator program (:data:`GENERATOR_SOURCE`, generic over the model: it loads a
  ``Model::saveToBinary`` file at run time) against the pin wheel's headers and the
  ``cmeel-cppad`` / ``cmeel-cppadcodegen`` headers, cached in ``bench/.cache/`` (6 to 15
  minutes and ~8 GB of memory to compile, once: Pinocchio's algorithms instantiated on CppAD's
  scalar types; never built twice at once: a lock file guards the build);
- runs it once per robot and kernel and caches the generated C under
  ``bench/.cache/pinocchio-codegen-c/<model file hash>/<kernel>/`` (:func:`generated_sources`),
  so that a second bench run costs nothing;
- counts the floating-point operations of C source text the same way for Pinocchio's and
  symgen's generated C (:func:`count_c_ops`);
- compiles the generated C with ``-O3`` and ``-Ofast`` (Pinocchio's own default) and times
  the generated entry points ``<kernel>_forward_zero(in, out, atomic)`` directly from a small C
  program (:data:`TIMING_SOURCE`), not through CppAD's tape or CppADCodeGen's library loader.

Input layouts are Pinocchio's: x = [q (nq), v (nv), a or τ (nv)], q of a free-flyer as
[x, y, z, quaternion x y z w, ...], v in the local frame (the :class:`symgen.peers.pinocchio.Bridge`
maps symgen's states). Outputs: RNEA τ (nv); ABA q̈ (nv, ``Convention::WORLD``); CRBA and
Minv the upper triangle row by row (nv(nv+1)/2); the derivatives ∂/∂q, ∂/∂v, ∂/∂(a|τ) as
three row-major nv × nv blocks; constraint dynamics [q̈ (nv), λ (nc)].
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from symgen.backends.c99 import trig
from symgen.backends.real import REALS

from ..common import CACHE, log, source_hash

#: The kernels the generator program writes, and the Pinocchio class behind each.
KERNELS: dict[str, str] = {
    "rnea": "CodeGenRNEA", "crba": "CodeGenCRBA", "aba": "CodeGenABA", "minv": "CodeGenMinv",
    "drnea": "CodeGenRNEADerivatives", "daba": "CodeGenABADerivatives",
    "cdyn": "CodeGenConstraintDynamics",
    "cdyn_settings": "CodeGenConstraintDynamics with the spec's ProximalSettings",
}
#: Flag sets the generated C is timed with (label -> gcc flags); -Ofast is Pinocchio's default
#: (``CodeGenBase::compileLib``).
BUILDS: dict[str, list[str]] = {"-O3": ["-O3"], "-Ofast": ["-Ofast"]}
#: Flags of the generator program itself (its speed only matters for generation time).
GENERATOR_FLAGS = ("-O2",)
#: Packages (and exact versions) whose headers the generator needs.
PACKAGES = {"cmeel-cppad": "20250000.2", "cmeel-cppadcodegen": "2.4.3"}

#: The constraint models of ``constraints.txt`` (bench/loop_dynamics.py's constraint_spec),
#: read after its header into ``models`` of ``model`` from the stream ``spec``: shared by
#: the generator below and bench.loop_dynamics' Pinocchio driver.
CONSTRAINT_MODELS_READER = r"""    for (int c = 0; c < count && spec; ++c) {
        int type;
        std::size_t joint[2];
        pinocchio::SE3 placement[2];
        spec >> type;
        for (int s = 0; s < 2; ++s) {
            Eigen::Matrix3d rot;
            Eigen::Vector3d t;
            spec >> joint[s];
            for (int r = 0; r < 3; ++r) for (int k = 0; k < 3; ++k) spec >> rot(r, k);
            for (int r = 0; r < 3; ++r) spec >> t(r);
            placement[s] = pinocchio::SE3(rot, t);
        }
        models.push_back(pinocchio::RigidConstraintModel(
            type == 6 ? pinocchio::CONTACT_6D : pinocchio::CONTACT_3D, model, joint[0],
            placement[0], joint[1], placement[1], pinocchio::LOCAL));
    }
"""

GENERATOR_SOURCE = r"""
// Pinocchio's CodeGen* classes on a model loaded at run time; writes CppADCodeGen's C.
//   generator MODEL.bin KERNEL OUTDIR [constraints.txt]
// KERNEL: rnea crba aba minv drnea daba cdyn cdyn_settings. Only the zero-order forward
// function is generated (<KERNEL>_forward_zero), as the timing needs.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "pinocchio/codegen/cppadcg.hpp"
#include "pinocchio/codegen/cppadcg-algo.hpp"
#include "pinocchio/serialization.hpp"

using CodeGenScalar = double;

// Access to CodeGenBase's protected parts: forward-only generation, the source writer.
template <class G> struct Gen : G {
    template <class... A> explicit Gen(A &&...a) : G(std::forward<A>(a)...) {}
    void forward_only() { this->build_jacobian = false; }
    void save(const std::string &dir) {
        this->codeGenerator().setCreateJacobian(false);
        // ModelLibraryCSourceGen::saveSources does not compile in CppADCodeGen 2.4.3
        CppAD::cg::SaveFilesModelLibraryProcessor<CodeGenScalar>::saveLibrarySourcesTo(*this->libcgen_ptr, dir);
    }
    Eigen::Index in() const { return this->getInputDimension(); }
    Eigen::Index out() const { return this->getOutputDimension(); }
};

// CodeGenConstraintDynamics, but with the spec's ProximalSettings instead of the defaults.
struct CodeGenConstraintDynamicsSettings : pinocchio::CodeGenConstraintDynamics<CodeGenScalar> {
    typedef pinocchio::CodeGenConstraintDynamics<CodeGenScalar> Parent;
    pinocchio::ProximalSettingsTpl<ADScalar> settings;
    CodeGenConstraintDynamicsSettings(const Model &model, const ContactModelVector &cms,
                                      const std::string &fn, const std::string &lib,
                                      double abs_acc, double rel_acc, double mu, int max_iter)
    : Parent(model, cms, fn, lib) {
        settings.absolute_accuracy = abs_acc;
        settings.relative_accuracy = rel_acc;
        settings.mu = mu;
        settings.max_iter = max_iter;
    }
    void buildMap() override {
        CppAD::Independent(ad_X);
        Eigen::Index it = 0;
        ad_q = ad_X.segment(it, ad_model.nq); it += ad_model.nq;
        ad_v = ad_X.segment(it, ad_model.nv); it += ad_model.nv;
        ad_tau = ad_X.segment(it, ad_model.nv);
        pinocchio::constraintDynamics(ad_model, ad_data, ad_q, ad_v, ad_tau, ad_contact_models,
                                      ad_contact_datas, settings);
        ad_Y.head(ad_model.nv) = ad_data.ddq;
        ad_Y.segment(ad_model.nv, nc) = ad_data.lambda_c;
        ad_fun.Dependent(ad_X, ad_Y);
        ad_fun.optimize("no_compare_op");
    }
};

template <class G> static int run(G &g, const std::string &kind, const std::string &dir) {
    const auto t0 = std::chrono::steady_clock::now();
    g.initLib();                        // tapes the algorithm (buildMap)
    const auto t1 = std::chrono::steady_clock::now();
    g.save(dir);                        // CppADCodeGen writes the C
    const auto t2 = std::chrono::steady_clock::now();
    std::printf("{\"kernel\": \"%s\", \"inputs\": %ld, \"outputs\": %ld, \"tape_s\": %.3f, \"codegen_s\": %.3f}\n",
                kind.c_str(), (long)g.in(), (long)g.out(),
                std::chrono::duration<double>(t1 - t0).count(),
                std::chrono::duration<double>(t2 - t1).count());
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) {
        std::fprintf(stderr, "usage: %s MODEL.bin KERNEL OUTDIR [constraints.txt]\n", argv[0]);
        return 2;
    }
    pinocchio::Model model;
    model.loadFromBinary(argv[1]);
    const std::string kind = argv[2], dir = argv[3], lib = "pcg_" + kind;
    if (kind == "rnea") { Gen<pinocchio::CodeGenRNEA<CodeGenScalar>> g(model, kind, lib); g.forward_only(); return run(g, kind, dir); }
    if (kind == "aba") { Gen<pinocchio::CodeGenABA<CodeGenScalar>> g(model, kind, lib); g.forward_only(); return run(g, kind, dir); }
    if (kind == "crba") { Gen<pinocchio::CodeGenCRBA<CodeGenScalar>> g(model, kind, lib); return run(g, kind, dir); }
    if (kind == "minv") { Gen<pinocchio::CodeGenMinv<CodeGenScalar>> g(model, kind, lib); return run(g, kind, dir); }
    if (kind == "drnea") { Gen<pinocchio::CodeGenRNEADerivatives<CodeGenScalar>> g(model, kind, lib); return run(g, kind, dir); }
    if (kind == "daba") { Gen<pinocchio::CodeGenABADerivatives<CodeGenScalar>> g(model, kind, lib); return run(g, kind, dir); }
    if (kind != "cdyn" && kind != "cdyn_settings") { std::fprintf(stderr, "unknown kernel %s\n", kind.c_str()); return 2; }
    if (argc != 5) { std::fprintf(stderr, "%s needs constraints.txt\n", kind.c_str()); return 2; }
    /* constraints.txt (bench/loop_dynamics.py's constraint_spec): absolute_accuracy
       relative_accuracy mu max_iter count, then per constraint: kind (3 or 6), then joint
       index, rotation (row-major), translation, twice; frames LOCAL */
    std::ifstream spec(argv[4]);
    double abs_acc, rel_acc, mu;
    int max_iter, count;
    spec >> abs_acc >> rel_acc >> mu >> max_iter >> count;
    typedef pinocchio::CodeGenConstraintDynamics<CodeGenScalar> CD;
    CD::ContactModelVector models;
""" + CONSTRAINT_MODELS_READER + r"""    if (!spec) { std::fprintf(stderr, "cannot read %s\n", argv[4]); return 2; }
    if (kind == "cdyn") { Gen<CD> g(model, models, kind, lib); g.forward_only(); return run(g, kind, dir); }
    Gen<CodeGenConstraintDynamicsSettings> g(model, models, kind, lib, abs_acc, rel_acc, mu, max_iter);
    g.forward_only();
    return run(g, kind, dir);
}
"""


# ------------------------------------------------------------------------------ availability
def include_dir() -> Path:
    from ..kernel_speed import cmeel_prefix

    return cmeel_prefix() / "include"


def unavailable() -> str | None:
    """Why Pinocchio's code generation cannot run here, or None."""
    from ..kernel_speed import pinocchio_unavailable

    why = pinocchio_unavailable()
    if why:
        return why
    inc = include_dir()
    if not (inc / "pinocchio" / "codegen" / "cppadcg-algo.hpp").is_file():
        return "the pin wheel has no pinocchio/codegen/cppadcg-algo.hpp"
    missing = [p for p, d in (("cmeel-cppad", "cppad/cppad.hpp"),
                              ("cmeel-cppadcodegen", "cppad/cg.hpp"))
               if not (inc / d).is_file()]
    if missing:
        return (f"{' and '.join(missing)} not installed (pip install "
                + " ".join(f"{p}=={PACKAGES[p]}" for p in missing) + ", or the bench extra)")
    if shutil.which("gcc") is None:
        return "gcc is not installed"
    return None


# ------------------------------------------------------------------------------ generator
def _run(cmd: Sequence[str], cwd: Path, what: str, timeout: float | None = None) -> str:
    run = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if run.returncode:
        tail = "\n".join((run.stderr or run.stdout).strip().splitlines()[-20:])
        raise RuntimeError(f"{what} failed ({run.returncode}):\n{tail}")
    return run.stdout


def generator_path() -> Path:
    """Where the generator program is (or will be) cached: keyed by its source, its flags,
    the compiler and the Pinocchio / CppAD / CppADCodeGen versions."""
    import pinocchio

    from ..kernel_speed import cmeel_prefix

    gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout
    key = source_hash(GENERATOR_SOURCE, " ".join(GENERATOR_FLAGS), gxx, pinocchio.__version__,
                      json.dumps(PACKAGES), str(cmeel_prefix()))
    return CACHE / f"pinocchio-codegen-generator-{key}"


def generator(log: Callable[[str], None] = log) -> Path:
    """The generator program, built on first use (6-15 min, ~8 GB: run it alone) and
    cached; a lock file keeps two bench processes from building it at once."""
    from ..kernel_speed import cmeel_prefix, pinocchio_flags

    target = generator_path()
    if target.exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "pinocchio-codegen-generator.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be building it
        if target.exists():
            return target
        log("  building Pinocchio's code generator (CppADCodeGen; 6-15 min and ~8 GB, "
            "once: cached in bench/.cache)")
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            work = Path(tmp)
            (work / "generator.cpp").write_text(GENERATOR_SOURCE)
            lib = cmeel_prefix() / "lib"
            _run(["g++", "-std=c++17", *GENERATOR_FLAGS, *pinocchio_flags(GENERATOR_FLAGS),
                  "generator.cpp", "-o", "generator", f"-L{lib}", f"-Wl,-rpath,{lib}",
                  "-lboost_serialization", "-ldl"], work, "building Pinocchio's code generator")
            (work / "generator").replace(target)
        log(f"  built it in {time.perf_counter() - started:.0f} s")
    return target


def _file_hash(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def generated_sources(model_bin: Path, kernel: str, constraints: Path | None = None,
                      log: Callable[[str], None] = log) -> tuple[Path, dict[str, Any]]:
    """CppADCodeGen's C of ``kernel`` (of :data:`KERNELS`) for the model in ``model_bin``
    (``pinocchio.Model.saveToBinary``): the folder of the generated sources and the
    generator's report (input and output sizes, taping and generation seconds). Cached
    under ``bench/.cache/pinocchio-codegen-c/<hash of the model file, constraints and
    generator>/<kernel>/``."""
    gen = generator(log)
    extra = [constraints] if constraints is not None else []
    key = source_hash(_file_hash(model_bin, *extra), gen.name)
    folder = CACHE / "pinocchio-codegen-c" / key / kernel
    info = folder / "generator.json"
    if info.exists():
        _check_constants(folder, kernel)
        return folder, json.loads(info.read_text())
    folder.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=folder.parent) as tmp:
        out = Path(tmp) / "c"
        args = [str(gen), str(model_bin.resolve()), kernel, str(out)]
        args += [str(c.resolve()) for c in extra]
        report = json.loads(_run(args, Path(tmp), f"Pinocchio's code generation of {kernel}"))
        report["wall_s"] = time.perf_counter() - started
        (out / "generator.json").write_text(json.dumps(report) + "\n")
        if folder.exists():
            shutil.rmtree(folder)
        out.replace(folder)
    log(f"    Pinocchio codegen {kernel}: {report['wall_s']:.1f} s")
    _check_constants(folder, kernel)
    return folder, report


def _check_constants(folder: Path, kernel: str) -> None:
    """Raise if CppAD taped a NaN or infinite constant (CppADCodeGen then writes ``nan``,
    which is no C): e.g. ``CodeGenConstraintDynamics`` with its default settings (mu = 0)
    on loop closures with redundant rows, whose KKT matrix is singular."""
    for path in sorted(folder.glob("*.c")):
        found = re.findall(r"\b(?:nan|inf)\b", strip_c(path.read_text()))
        if found:
            raise RuntimeError(
                f"Pinocchio's generated {kernel} ({path.name}) holds {len(found)} NaN/inf "
                "constants taped by CppAD (a singular computation at the taping point, e.g. "
                "mu = 0 with redundant constraint rows); it is not valid C")


def constraint_dynamics_sources(model_bin: Path, constraint_spec_text: str,
                                with_settings: bool = False,
                                log: Callable[[str], None] = log) -> Path:
    """The folder of CppADCodeGen's C of Pinocchio's ``CodeGenConstraintDynamics`` for the
    model in ``model_bin`` and the constraint models described by ``constraint_spec_text``
    (the ``constraints.txt`` text of :func:`bench.loop_dynamics.constraint_spec`: proximal
    settings, then per constraint its type, joints and LOCAL placements).

    Pinocchio's class calls ``constraintDynamics`` with default ``ProximalSettings`` (mu = 0,
    one iteration); ``with_settings=True`` generates instead with the spec's absolute /
    relative accuracy, mu and max_iter. CppAD records one path through the proximal loop:
    the iterations done at the taping point (Pinocchio's: every input 0), so the C always
    runs that many. With the defaults (mu = 0), models whose loop closures have redundant
    rows (the five-bar's and the four-bar knee's two ``CONTACT_3D`` points per revolute
    loop: 6 rows, 5 independent) have a singular KKT matrix: the tape holds NaN constants
    and this raises RuntimeError; with the spec's settings (mu 1e-8) the C matched
    ``pinocchio.constraintDynamics`` with the same settings to 3e-13 on the three loop
    models of ``bench/loop_dynamics.py``. The generated entry point is
    ``cdyn_forward_zero`` (``cdyn_settings_forward_zero`` with settings):
    in[0] = [q (nq), v (nv), τ (nv)] in Pinocchio's layout, out[0] = [q̈ (nv), λ (nc)]; compile
    its ``*.c`` files with ``-lm`` and call it with :data:`ATOMIC_STUB` as its last argument
    (see :data:`TIMING_SOURCE`). Cached like :func:`generated_sources`."""
    CACHE.mkdir(parents=True, exist_ok=True)
    digest = source_hash(constraint_spec_text)
    spec = CACHE / f"pinocchio-codegen-constraints-{digest}.txt"
    if not spec.exists():
        spec.write_text(constraint_spec_text)
    kernel = "cdyn_settings" if with_settings else "cdyn"
    return generated_sources(model_bin, kernel, spec, log)[0]


# ------------------------------------------------------------------------------ op counts
#: C math functions counted as one operation per call (with their float / long double forms),
#: and symgen's own sine and cosine (:mod:`symgen.backends.c99.trig`), one each like libm's.
MATH_CALLS = frozenset(
    name + suffix for name in (
        "sqrt", "cbrt", "hypot", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh",
        "cosh", "tanh", "asinh", "acosh", "atanh", "exp", "exp2", "expm1", "log", "log2",
        "log10", "log1p", "pow", "fabs", "fmin", "fmax", "floor", "ceil", "round", "trunc",
        "fmod", "copysign", "fma")
    for suffix in ("", "f", "l")) | frozenset(
        trig.function_name(name, real) for name in trig.FUNCTIONS for real in REALS)
#: Words after which ``*`` declares a pointer (not a multiplication).
TYPE_WORDS = frozenset((
    "double", "float", "int", "long", "short", "char", "void", "unsigned", "signed", "const",
    "volatile", "restrict", "__restrict", "__restrict__", "struct", "size_t", "Array"))
_TOKEN = re.compile(r"""
    (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFlLuU]*)
  | (?P<word>[A-Za-z_]\w*)
  | (?P<op>\+\+|--|->|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|[-+*/%<>=!~&|^?:;,.(){}\[\]])
""", re.VERBOSE)


#: A ``for`` loop over a constant range whose body is one statement (no braces).
_LOOP = re.compile(r"\bfor\s*\(\s*(\w+)\s*=\s*(\d+)\s*;\s*\1\s*<\s*(\d+)\s*;\s*\+\+\s*\1\s*\)"
                   r"\s*([^;{}]*;)")


def strip_c(text: str) -> str:
    """C source without comments, string / character literals and preprocessor lines."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", " 0 ", text)
    return "\n".join("" if line.lstrip().startswith("#") else line
                     for line in text.splitlines())


def c_functions(text: str) -> dict[str, str]:
    """The function definitions of a C file: name -> body (between its outer braces)."""
    text = strip_c(text)
    out: dict[str, str] = {}
    depth, i = 0, 0
    head = re.compile(r"\b([A-Za-z_]\w*)\s*\(([^;{}]*)\)\s*\{")
    while i < len(text):
        c = text[i]
        if depth == 0:
            m = head.match(text, i) if (c.isalpha() or c == "_") else None
            if m and m.group(1) not in ("if", "for", "while", "switch"):
                start = j = m.end()
                level = 1
                while level and j < len(text):
                    level += {"{": 1, "}": -1}.get(text[j], 0)
                    j += 1
                out[m.group(1)] = text[start:j - 1]
                i = j
                continue
            if c == "{":
                depth += 1
            # skip a whole word so that a function name is only matched at its start
            if c.isalnum() or c == "_":
                while i < len(text) and (text[i].isalnum() or text[i] == "_"):
                    i += 1
                continue
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        i += 1
    return out


def typedef_names(text: str) -> set[str]:
    """The names a C file defines with ``typedef`` (type words for :func:`count_ops`)."""
    return {m.group(1) for m in re.finditer(r"typedef\b[^;{}]*?\b(\w+)\s*;", strip_c(text))}


def count_ops(body: str, type_words: Iterable[str] = ()) -> dict[str, int]:
    """Floating-point operations in a C function body, counted on its text:

    - binary ``+`` and ``-`` (and ``+=``, ``-=``): one ``add`` each; ``*`` (``*=``): one
      ``mul``; ``/`` (``/=``): one ``div``;
    - unary minus and plus are free (a sign, as in symgen's own counts);
    - a call of a C math function (:data:`MATH_CALLS`: sqrt, sin, cos, atan2, pow, fabs, …):
      one ``call`` each; calls of other functions (a kernel's parts) are not operations;
    - nothing inside ``[...]`` (index arithmetic), no ``++``/``--``, comparisons,
      assignments, casts or pointer declarations (``*`` after a type word) counts;
    - ``trivial``: how many of the counted operations are a product with a literal ±1 or a
      sum / difference with a literal 0 (``-1 * v[0]``, ``0 - v[3]``: CppADCodeGen writes
      negations so), which the compiler turns into a sign change or nothing; included in
      ``total``.
    - a ``for`` loop over a constant range whose body is one statement
      (``for (k = 3; k < 38; ++k) x[k] = ...;``, :data:`_LOOP`: symgen's in-place solves)
      counts that statement's operations once per trip: executed, not written, operations.

    Applied to both generators' C, so the counts compare like for like; symgen's own
    ``KernelSet.op_counts`` counts its expression graph and can differ (e.g. it counts a
    product by -1 as free, and the C may spell one operation differently)."""
    types = TYPE_WORDS | set(type_words)
    counts = {"add": 0, "mul": 0, "div": 0, "call": 0}
    trivial = 0
    loops: list[tuple[int, str]] = []

    def take_loop(m: re.Match) -> str:
        loops.append((int(m.group(3)) - int(m.group(2)), m.group(4)))
        return " "

    body = _LOOP.sub(take_loop, body)
    for trips, statement in loops:
        once = count_ops(statement, type_words)
        for k in ("add", "mul", "div", "call"):
            counts[k] += trips * once[k]
        trivial += trips * once["trivial"]
    prev_kind, prev = "", ""
    bracket = 0
    tokens = [(m.lastgroup or "", m.group(m.lastgroup or "")) for m in _TOKEN.finditer(body)]

    def literal(i: int, target: float) -> bool:  # tokens[i] is the number target
        if not (0 <= i < len(tokens)) or tokens[i][0] != "number":
            return False
        try:
            return float(tokens[i][1].rstrip("fFlLuU")) == target
        except ValueError:
            return False

    def unit(i: int, target: float) -> bool:  # the operator tokens[i] has target as operand
        left = literal(i - 1, target) and (i < 2 or tokens[i - 2][1] not in ("*", "/"))
        right = literal(i + 1, target) and (i + 2 >= len(tokens)
                                            or tokens[i + 2][1] not in ("*", "/", "(", "["))
        return left or right

    for i, (kind, tok) in enumerate(tokens):
        if kind == "op":
            if tok == "[":
                bracket += 1
            elif tok == "]":
                bracket -= 1
            elif bracket == 0 and tok in ("+", "-", "*", "/", "+=", "-=", "*=", "/="):
                value_before = prev_kind in ("number", "word") and prev not in types \
                    and prev != "return" or prev in (")", "]")
                if tok in ("+=", "-="):
                    counts["add"] += 1
                elif tok in ("*=", "/="):
                    counts["mul" if tok == "*=" else "div"] += 1
                elif value_before:
                    counts[{"+": "add", "-": "add", "*": "mul", "/": "div"}[tok]] += 1
                    target = {"+": 0.0, "-": 0.0, "*": 1.0}.get(tok)
                    if target is not None and unit(i, target):
                        trivial += 1
            elif tok == "(" and bracket == 0 and prev_kind == "word" and prev in MATH_CALLS:
                counts["call"] += 1
        prev_kind, prev = kind, tok
    counts["total"] = sum(counts.values())
    counts["trivial"] = trivial
    return counts


def count_c_ops(texts: Iterable[str], keep: Callable[[str], bool]) -> dict[str, int]:
    """:func:`count_ops` summed over the functions of the C files ``texts`` whose names
    ``keep`` accepts."""
    total = {"add": 0, "mul": 0, "div": 0, "call": 0, "total": 0, "trivial": 0}
    for text in texts:
        types = typedef_names(text)
        for name, body in c_functions(text).items():
            if keep(name):
                for k, v in count_ops(body, types).items():
                    total[k] += v
    return total


def symgen_c_ops(c_file: Path, kernels: Iterable[str], prefix: str = "m") -> dict[str, dict[str, int]]:
    """:func:`count_ops` of symgen's C (``symgen.write_c`` output) per kernel: the function
    ``<prefix>_<kernel>`` and its parts ``<prefix>_<kernel>_part*`` (not the batch loops)."""
    text = c_file.read_text()
    return {k: count_c_ops([text], lambda n, k=k: n == f"{prefix}_{k}"
                           or n.startswith(f"{prefix}_{k}_part"))
            for k in kernels}


def generated_ops(folder: Path, kernel: str) -> dict[str, int]:
    """:func:`count_ops` of CppADCodeGen's C of ``kernel``: ``<kernel>_forward_zero`` and
    the functions it is split into (``<kernel>_forward_zero*``)."""
    return count_c_ops([p.read_text() for p in sorted(folder.glob("*.c"))],
                       lambda n: n.startswith(f"{kernel}_forward_zero"))


def code_bytes(objects: Iterable[Path], keep: Callable[[str], bool]) -> int | None:
    """Machine-code bytes (``nm -S``: text symbols) of the functions ``keep`` accepts, over
    ``objects``; None where nm is missing."""
    total = 0
    for obj in objects:
        try:
            listing = _run(["nm", "-S", str(obj)], obj.parent, "nm")
        except (OSError, RuntimeError):
            return None
        for line in listing.splitlines():
            fields = line.split()
            if len(fields) == 4 and fields[2] in "Tt" and keep(fields[3]):
                total += int(fields[1], 16)
    return total


# ------------------------------------------------------------------------------ timing
#: What each generated function reads, in order (Pinocchio's layout), and its output size.
INPUTS: dict[str, tuple[str, ...]] = {
    "rnea": ("q", "v", "a"), "crba": ("q",), "aba": ("q", "v", "tau"), "minv": ("q",),
    "drnea": ("q", "v", "a"), "daba": ("q", "v", "tau")}


def output_size(kernel: str, nv: int) -> int:
    return {"rnea": nv, "aba": nv, "crba": nv * (nv + 1) // 2, "minv": nv * (nv + 1) // 2,
            "drnea": 3 * nv * nv, "daba": 3 * nv * nv}[kernel]


TIMING_SOURCE = r"""
#include "timing.h"

@DECLARATIONS@

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    const int S = atoi(argv[1]), R = atoi(argv[2]);
    static struct LangCAtomicFun atomic; /* the kernels call no atomic function */
    const double *in[1];
    double *out[1], *pass = malloc((size_t)R * sizeof(double)), t;
    volatile double sink = 0;
@LOAD@
    printf("{\"check\": {");
@CHECK@
    printf("\"done\": []}, \"ns\": {");
@TIME@
    printf("\"done\": 0}}\n");
    return sink == 12345.678 ? 1 : 0;
}
"""


def timing_source(struct_definition: str, kernels: Mapping[str, tuple[int, int]]) -> str:
    """The C timing program of the generated functions ``kernels`` (name -> (inputs,
    outputs)): prints each one's outputs on the first state, then times ``R`` passes over
    the ``S`` states of ``x_<name>.bin`` (the median pass per state, :data:`BENCH_TIME`)."""
    decl = [struct_definition, ""]
    load, check, timed = [], [], []
    for name, (nin, nout) in kernels.items():
        fn = f"{name}_forward_zero"
        decl.append(f"void {fn}(double const *const *in, double *const *out, "
                    "struct LangCAtomicFun atomicFun);")
        load.append(f'    double *x_{name} = bench_load("x_{name}.bin", (size_t)S * {nin}), '
                    f"*y_{name} = malloc({nout} * sizeof(double));")
        check.append(f"    in[0] = x_{name}; out[0] = y_{name}; {fn}(in, out, atomic); "
                     f'bench_print("{name}", y_{name}, {nout});')
        timed.append(f"    out[0] = y_{name};\n"
                     f"    BENCH_TIME(t, S, R, pass, in[0] = x_{name} + (size_t)k * {nin}; "
                     f"{fn}(in, out, atomic); sink = sink + y_{name}[0];);\n"
                     f'    printf("\\"{name}\\": %.3f, ", t);')
    return (TIMING_SOURCE.replace("@DECLARATIONS@", "\n".join(decl))
            .replace("@LOAD@", "\n".join(load)).replace("@CHECK@", "\n".join(check))
            .replace("@TIME@", "\n".join(timed)))


def _struct_definition(folder: Path, kernel: str) -> str:
    text = (folder / f"{kernel}_forward_zero.c").read_text()
    m = re.search(r"typedef struct Array \{.*?struct LangCAtomicFun \{.*?\n\};", text, re.S)
    if m is None:
        raise RuntimeError(f"no struct LangCAtomicFun in {kernel}_forward_zero.c")
    return m.group(0)


def _kernel_sources(folder: Path, kernel: str) -> list[Path]:
    """The generated files holding ``<kernel>_forward_zero`` and its split-off parts."""
    return [p for p in sorted(folder.glob("*.c"))
            if any(n.startswith(f"{kernel}_forward_zero") for n in c_functions(p.read_text()))]


def compiled_objects(folder: Path, kernel: str, flags: Sequence[str]) -> list[Path]:
    """The generated C of ``kernel`` compiled with ``gcc flags`` (cached beside the sources,
    keyed by the flags and the compiler)."""
    gcc = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout
    objdir = folder / f"obj-{source_hash(' '.join(flags), gcc)}"
    sources = _kernel_sources(folder, kernel)
    if not objdir.is_dir():
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            for src in sources:
                _run(["gcc", "-std=gnu99", *flags, "-c", str(src), "-o",
                      str(Path(tmp) / f"{src.stem}.o")], Path(tmp),
                     f"compiling Pinocchio's generated {src.name}")
            try:
                Path(tmp).replace(objdir)
                Path(tmp).mkdir()  # for TemporaryDirectory's clean-up
            except OSError:  # another process compiled them meanwhile
                if not objdir.is_dir():
                    raise
    return [objdir / f"{src.stem}.o" for src in sources]


def variants(flags: Sequence[str]) -> dict[str, list[str]]:
    """The two builds of the generated C for a flag set: as given, and with -Ofast (what
    Pinocchio's ``compileLib`` uses) in place of the -O level."""
    fast = ["-Ofast"] + [f for f in flags if not f.startswith("-O")]
    return {"": list(flags), "-Ofast": fast}


def prepare(model: Any, states: Mapping[str, Any], kernels: Sequence[str],
            flags: Sequence[str], work: Path, log: Callable[[str], None] = log
            ) -> tuple[dict[str, Callable[[int], dict[str, Any]]], dict[str, Any]]:
    """Pinocchio's generated ``kernels`` (of :data:`INPUTS`) for the symgen model ``model``
    on ``states`` (symgen's layout, mapped with the Bridge): generates (or takes from the
    cache) their C, compiles it with ``flags`` and with -Ofast (:func:`variants`) and builds
    one timing program per variant in ``work``.

    Returns ({variant: run}, info): ``run(repeats)`` -> {"ns": {kernel: ns per call},
    "outputs": {kernel: first-state result in symgen's layout}} (vectors; nv × nv
    matrices; the derivatives as {"dq": ..., "dv": ...}); ``info`` holds the op counts of
    the generated C (:func:`generated_ops`), the machine-code bytes per variant and the
    generator's reports."""
    import numpy as np

    from symgen.peers.pinocchio import Bridge, pin_model_from_symgen

    from ..common import TIMING_DIR

    pm = pin_model_from_symgen(model)
    model_bin = work / "model.bin"
    pm.saveToBinary(str(model_bin))
    br = Bridge(model, pm)
    nv = model.nv
    pin_states = {"q": np.array([br.q_to_pin(q) for q in states["q"]])}
    for key in ("v", "a", "tau"):
        pin_states[key] = np.ascontiguousarray(states[key][:, br.perm])
    folders: dict[str, Path] = {}
    info: dict[str, Any] = {"ops": {}, "code_bytes": {}, "generation": {}}
    sizes: dict[str, tuple[int, int]] = {}
    for kernel in kernels:
        folders[kernel], info["generation"][kernel] = generated_sources(model_bin, kernel,
                                                                        log=log)
        x = np.hstack([pin_states[k] for k in INPUTS[kernel]])
        np.ascontiguousarray(x, dtype=np.float64).tofile(work / f"x_{kernel}.bin")
        sizes[kernel] = (x.shape[1], output_size(kernel, nv))
        if info["generation"][kernel]["outputs"] != sizes[kernel][1]:
            raise RuntimeError(f"{kernel}: the generator reports "
                               f"{info['generation'][kernel]['outputs']} outputs")
        info["ops"][kernel] = generated_ops(folders[kernel], kernel)
    (work / "driver.c").write_text(timing_source(_struct_definition(folders[kernels[0]],
                                                                    kernels[0]), sizes))
    n = len(states["q"])
    iu = np.triu_indices(nv)

    def symmetric(y: Any) -> Any:  # the upper triangle, row by row
        m = np.zeros((nv, nv))
        m[iu] = y
        return br.matrix_from_pin(m + np.triu(m, 1).T)

    def convert(kernel: str, y: Any) -> Any:
        y = np.asarray(y)
        if kernel in ("rnea", "aba"):
            return br.v_from_pin(y)
        if kernel in ("crba", "minv"):
            return symmetric(y)
        blocks = y.reshape(3, nv, nv)  # row-major ∂/∂q, ∂/∂v, ∂/∂(a|τ)
        return {"dq": br.matrix_from_pin(blocks[0]), "dv": br.matrix_from_pin(blocks[1])}

    runners = {}
    for suffix, vflags in variants(flags).items():
        objects = {k: compiled_objects(folders[k], k, vflags) for k in kernels}
        info["code_bytes"][suffix] = {
            k: code_bytes(objs, lambda s, k=k: s.startswith(f"{k}_forward_zero"))
            for k, objs in objects.items()}
        exe = work / f"driver{suffix}"
        _run(["gcc", "-std=gnu99", *vflags, f"-I{TIMING_DIR}", "driver.c",
              *[str(o) for objs in objects.values() for o in objs], "-o", exe.name, "-lm"],
             work, "building the timing program of Pinocchio's generated C")

        def run(repeats: int, exe: Path = exe) -> dict[str, Any]:
            out = json.loads(_run([str(exe), str(n), str(repeats)], work,
                                  "the timing program of Pinocchio's generated C"))
            check = out["check"]
            return {"ns": {k: v for k, v in out["ns"].items() if k != "done"},
                    "outputs": {k: convert(k, check[k]) for k in kernels}}

        runners[suffix] = run
    return runners, info


# ------------------------------------------------------------------------------ self-test
def main(argv: list[str] | None = None) -> int:
    """Op counts and machine code of one robot's kernels, Pinocchio's generated C beside
    symgen's (builds the generator on first use)."""
    import argparse

    import numpy as np

    import symgen

    from ..common import random_states
    from ..derivatives import ROBOTS as DERIVATIVE_ROBOTS
    from ..derivatives import load_robot

    robots = dict(DERIVATIVE_ROBOTS) | {"xarm7": False}
    parser = argparse.ArgumentParser(prog="python -m bench.peers.pinocchio_codegen",
                                     description=main.__doc__)
    parser.add_argument("robot", choices=sorted(robots))
    parser.add_argument("--flags", default="-O3")
    args = parser.parse_args(argv)
    why = unavailable()
    if why:
        print(f"not available: {why}")
        return 1
    model = load_robot(args.robot, robots[args.robot])
    states = random_states(model, 10)
    pairs = {"rnea": "inverse_dynamics", "crba": "mass_matrix", "aba": "forward_dynamics_aba",
             "minv": "mass_matrix_inverse", "drnea": "inverse_dynamics_derivatives",
             "daba": "forward_dynamics_derivatives"}
    ks = symgen.generate(model, list(pairs.values()))
    own = ks.op_counts()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        symgen.write_c(ks, work, prefix="m")
        _run(["gcc", "-std=c99", args.flags, "-c", "m.c", "-o", "m.o"], work, "gcc m.c")
        text_ops = symgen_c_ops(work / "m.c", pairs.values())
        (work / "pcg").mkdir()
        runs, info = prepare(model, states, list(pairs), args.flags.split(), work / "pcg")
        outputs = runs[""](1)["outputs"]
        print(f"{args.robot}: nq {model.nq}, nv {model.nv}; ops (C text) and machine code "
              f"at {args.flags}")
        for fn, kernel in pairs.items():
            sym = code_bytes([work / "m.o"], lambda s, k=kernel: s == f"m_{k}"
                             or s.startswith(f"m_{k}_part"))
            print(f"  {fn:6s} pinocchio {info['ops'][fn]['total']:>9,} ops "
                  f"{info['code_bytes'][''][fn] or 0:>10,} B | symgen {kernel}: "
                  f"{own[kernel]['total']:>9,} ops (C text {text_ops[kernel]['total']:,}) "
                  f"{sym or 0:>10,} B")
        print("  first-state outputs finite:",
              all(np.all(np.isfinite(np.asarray(list(o.values()) if isinstance(o, dict) else o)))
                  for o in outputs.values()))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
