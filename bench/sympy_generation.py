"""Generation speed: symgen vs ``sympy.physics.mechanics.KanesMethod`` on n-link 3-D chains.

    python -m bench.sympy_generation [--sympy-sizes 1,2,4] [--symgen-sizes 1,2,4,10]
                                     [--timeout 300] [--json FILE] [--png FILE]

Both tools start from the same mechanism, ``symgen.io.robots.spatial_chain(n)`` (revolute
joints about z, y, x, ...; identical links with a full inertia; the model's gravity), and end
with C source text. Measured per size, each in a fresh subprocess run from the repository
root:

- sympy: ``KanesMethod(...).kanes_equations`` (derive), then the dynamic symbols replaced by
  plain ones, ``sympy.cse([mass_matrix, forcing])`` and ``sympy.ccode`` of every replacement
  and output into one C function (codegen). A hard timeout per size; once a size times out
  the larger ones are skipped.
- symgen: ``symgen.generate(model)`` (every default kernel) and, separately, the like-for-like
  ``generate(model, ["mass_matrix", "bias_forces"])`` (derive), then ``emit_c`` (codegen).

Operation counts after CSE follow one rule set for both: ``symgen.ir.counts.count_ops``;
sympy's CSE output is converted with ``symgen.ir.expr.from_sympy`` first. A consistency check
compares sympy's M and forcing with symgen's numeric reference (CRBA, RNEA).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import sympy
from sympy.physics import mechanics as me

import symgen
from symgen.io.robots import spatial_chain
from symgen.ir.counts import count_ops
from symgen.ir.expr import Expr, Sym, from_sympy

from .common import ROOT, relative_error

MODULE = "bench.sympy_generation"
OP_KINDS = ("add", "mul", "div", "sqrt", "trig", "other")
SYMGEN_SUBSET = ("mass_matrix", "bias_forces")
SYMPY_SIZES = (1, 2, 4, 6, 8, 10, 12)
SYMGEN_SIZES = (1, 2, 4, 6, 8, 10, 12, 20, 30, 50, 75, 100)
TIMEOUT_S = 300.0
#: Extra seconds a sympy subprocess may run past the timeout (interpreter start, counting
#: the ops of its output); the timeout itself applies to the measured derive + codegen time.
GRACE_S = 60.0
CHECK_TOL = 1e-10

Log = Callable[[str], None]


# ---------------------------------------------------------------- sympy side
def _number(x: float, exact: bool) -> sympy.Expr:
    """A model constant for sympy: the exact decimal as a Rational, or a Float."""
    return sympy.Rational(repr(float(x))) if exact else sympy.Float(x)


def kane_chain(
    n: int, exact: bool = True
) -> tuple[sympy.Matrix, sympy.Matrix, list[sympy.Expr], list[sympy.Expr]]:
    """Kane's equations ``M(q) u' = forcing(q, u)`` of ``spatial_chain(n)`` with
    sympy.physics.mechanics; returns ``(mass_matrix, forcing, q, u)`` (q, u dynamic symbols,
    ``q_i' = u_i``). ``exact``: model constants as Rationals, else Floats."""
    model = spatial_chain(n)
    t = me.dynamicsymbols._t
    q = list(me.dynamicsymbols(f"q0:{n}"))
    u = list(me.dynamicsymbols(f"u0:{n}"))
    world = me.ReferenceFrame("N")
    origin = me.Point("O")
    origin.set_vel(world, 0)
    gravity = sum(
        (_number(g, exact) * e for g, e in zip(model.gravity, world, strict=True) if g),
        me.Vector(0),
    )
    parent_frame, parent_point = world, origin
    bodies, loads = [], []
    for i, (joint, body) in enumerate(zip(model.joints, model.bodies, strict=True)):

        def vec(xyz: Sequence[float], frame: me.ReferenceFrame) -> me.Vector:
            return sum(
                (_number(c, exact) * e for c, e in zip(xyz, frame, strict=True) if c),
                me.Vector(0),
            )

        if joint.placement.rotation != ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)):
            raise ValueError("kane_chain expects joint placements without rotation")
        axis = vec(joint.axis, parent_frame)  # the joint frame is parallel to the parent's
        frame = me.ReferenceFrame(f"A{i}")
        frame.orient_axis(parent_frame, axis, q[i])
        frame.set_ang_vel(parent_frame, u[i] * axis)
        point = parent_point.locatenew(f"P{i}", vec(joint.placement.translation, parent_frame))
        point.v2pt_theory(parent_point, world, parent_frame)
        com = point.locatenew(f"C{i}", vec(body.com, frame))
        com.v2pt_theory(point, world, frame)
        inertia = [[_number(x, exact) for x in row] for row in body.inertia]
        dyadic = me.inertia(frame, inertia[0][0], inertia[1][1], inertia[2][2],
                            inertia[0][1], inertia[1][2], inertia[2][0])
        mass = _number(body.mass, exact)
        bodies.append(me.RigidBody(f"B{i}", com, frame, mass, (dyadic, com)))
        loads.append((com, mass * gravity))
        parent_frame, parent_point = frame, point
    kane = me.KanesMethod(world, q_ind=q, u_ind=u,
                          kd_eqs=[qi.diff(t) - ui for qi, ui in zip(q, u, strict=True)])
    kane.kanes_equations(bodies, loads)
    return kane.mass_matrix, kane.forcing, q, u


def _plain_symbols(n: int) -> tuple[list[sympy.Symbol], list[sympy.Symbol]]:
    """The C names of the inputs, ``q[i]`` and ``u[i]``, as sympy symbols."""
    return ([sympy.Symbol(f"q[{i}]") for i in range(n)],
            [sympy.Symbol(f"u[{i}]") for i in range(n)])


def cse_c_source(
    n: int, replacements: list[tuple[sympy.Symbol, sympy.Expr]], mass: sympy.Matrix,
    forcing: sympy.Matrix,
) -> str:
    """One C function computing ``M`` (row-major) and ``forcing`` from sympy's CSE output."""
    lines = [f"void chain{n}_kane(const double *q, const double *u, double *M, "
             "double *forcing)", "{"]
    lines += [f"    const double {s} = {sympy.ccode(e)};" for s, e in replacements]
    lines += [f"    M[{k}] = {sympy.ccode(e)};" for k, e in enumerate(mass)]
    lines += [f"    forcing[{k}] = {sympy.ccode(e)};" for k, e in enumerate(forcing)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def sympy_cse_ops(
    replacements: list[tuple[sympy.Symbol, sympy.Expr]], outputs: Sequence[sympy.Expr],
    inputs: Sequence[sympy.Symbol],
) -> dict[str, int]:
    """Operations of sympy's CSE output by symgen's rules (``count_ops`` after
    ``from_sympy``), summed over replacements and outputs, plus ``total``."""
    mapping: dict[sympy.Symbol, Expr] = {s: Sym(s.name) for s in inputs}
    mapping.update({s: Sym(s.name) for s, _ in replacements})
    c: Counter = Counter()
    for expr in [e for _, e in replacements] + list(outputs):
        count_ops(from_sympy(expr, mapping), c)
    return _ops_dict(c)


def _ops_dict(c: Counter | dict[str, int]) -> dict[str, int]:
    out = {k: int(c.get(k, 0)) for k in OP_KINDS}
    out["total"] = sum(out.values())
    return out


def run_sympy(n: int, exact: bool = True) -> dict[str, Any]:
    """One sympy size, in this process: timings, op counts after CSE, C size."""
    t0 = time.perf_counter()
    mass, forcing, q, u = kane_chain(n, exact)
    t1 = time.perf_counter()
    qs, us = _plain_symbols(n)
    plain = dict(zip(q, qs, strict=True)) | dict(zip(u, us, strict=True))
    mass, forcing = mass.xreplace(plain), forcing.xreplace(plain)
    t2 = time.perf_counter()
    replacements, (mass_r, forcing_r) = sympy.cse([mass, forcing])
    t3 = time.perf_counter()
    source = cse_c_source(n, replacements, mass_r, forcing_r)
    t4 = time.perf_counter()
    return {
        "n": n,
        "status": "ok",
        "derive_s": t1 - t0,
        "codegen_s": t4 - t1,
        "subs_s": t2 - t1,
        "cse_s": t3 - t2,
        "ccode_s": t4 - t3,
        "total_s": t4 - t0,
        "ops": sympy_cse_ops(replacements, list(mass_r) + list(forcing_r), qs + us),
        "cse_replacements": len(replacements),
        "c_bytes": len(source.encode()),
    }


# ---------------------------------------------------------------- symgen side
def run_symgen(n: int, kernels: Sequence[str] | None = None) -> dict[str, Any]:
    """One symgen size, in this process: ``generate`` (every default kernel, or ``kernels``)
    and ``emit_c``; op counts summed over all programs and over mass_matrix + bias_forces."""
    model = spatial_chain(n)
    t0 = time.perf_counter()
    ks = symgen.generate(model, kernels)
    t1 = time.perf_counter()
    c = symgen.emit_c(ks)
    t2 = time.perf_counter()
    counts = ks.op_counts()
    total: Counter = Counter()
    subset: Counter = Counter()
    for name, ops in counts.items():
        total.update({k: ops[k] for k in OP_KINDS})
        if name in SYMGEN_SUBSET:
            subset.update({k: ops[k] for k in OP_KINDS})
    return {
        "n": n,
        "status": "ok",
        "kernels": "all" if kernels is None else list(kernels),
        "programs": len(counts),
        "derive_s": t1 - t0,
        "codegen_s": t2 - t1,
        "total_s": t2 - t0,
        "ops": _ops_dict(total),
        "ops_mass_matrix_bias_forces": _ops_dict(subset),
        "ops_by_program": {name: ops["total"] for name, ops in counts.items()},
        "c_bytes": len(c.header.encode()) + len(c.source.encode()),
    }


# ---------------------------------------------------------------- subprocesses
def _in_subprocess(args: list[str], timeout: float | None) -> dict[str, Any]:
    """Run this module's worker with ``args`` from the repository root; its JSON record.
    Raises ``subprocess.TimeoutExpired`` past ``timeout``."""
    cmd = [sys.executable, "-m", MODULE, "--worker", *args]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          check=False)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"worker {' '.join(args)} failed (rc {proc.returncode}): {tail}")
    return json.loads(lines[-1])


def _empty(n: int, status: str) -> dict[str, Any]:
    return {"n": n, "status": status, "derive_s": None, "codegen_s": None, "total_s": None,
            "ops": None, "c_bytes": None}


def sympy_sizes_run(
    sizes: Sequence[int], timeout_s: float = TIMEOUT_S, log: Log = print
) -> list[dict[str, Any]]:
    """Each sympy size in its own subprocess, in increasing order; after a timeout (or an
    error) the larger sizes are marked ``skipped``."""
    out: list[dict[str, Any]] = []
    stop = False
    for n in sorted(sizes):
        if stop:
            out.append(_empty(n, "skipped"))
            log(f"sympy n={n}: skipped")
            continue
        timeout = f"timeout > {timeout_s:g} s"
        try:
            rec = _in_subprocess(["sympy", str(n)], timeout_s + GRACE_S)
            if rec["total_s"] > timeout_s:
                rec["status"] = timeout
        except subprocess.TimeoutExpired:
            rec = _empty(n, timeout)
        except RuntimeError as exc:
            rec = _empty(n, f"error: {exc}")
        out.append(rec)
        stop = rec["status"] != "ok"
        if stop:
            log(f"sympy n={n}: {rec['status']}")
        else:
            log(f"sympy n={n}: derive {rec['derive_s']:.2f} s + cse/C {rec['codegen_s']:.2f} s"
                f" = {rec['total_s']:.2f} s, {rec['ops']['total']} ops, {rec['c_bytes']} B")
    return out


def symgen_sizes_run(
    sizes: Sequence[int], kernels: Sequence[str] | None = None, log: Log = print,
    timeout_s: float | None = None,
) -> list[dict[str, Any]]:
    """Each symgen size in its own subprocess (every default kernel, or ``kernels``)."""
    label = "all" if kernels is None else "+".join(kernels)
    out = []
    for n in sorted(sizes):
        args = ["symgen", str(n)] + ([",".join(kernels)] if kernels is not None else [])
        try:
            rec = _in_subprocess(args, timeout_s)
        except subprocess.TimeoutExpired:
            rec = _empty(n, f"timeout > {timeout_s:g} s")
        except RuntimeError as exc:
            rec = _empty(n, f"error: {exc}")
        out.append(rec)
        if rec["status"] == "ok":
            log(f"symgen {label} n={n}: derive {rec['derive_s']:.2f} s + C "
                f"{rec['codegen_s']:.2f} s = {rec['total_s']:.2f} s, {rec['ops']['total']} ops"
                f" (M + bias {rec['ops_mass_matrix_bias_forces']['total']}), "
                f"{rec['c_bytes']} B")
        else:
            log(f"symgen {label} n={n}: {rec['status']}")
    return out


# ---------------------------------------------------------------- consistency
def check(n: int = 3, seed: int = 0, exact: bool = True) -> dict[str, Any]:
    """sympy's M and forcing (and symgen's generated mass_matrix and bias_forces) against
    symgen's numeric reference, ``ref.mass_matrix`` and ``-ref.bias_forces``, at a random
    state (``numpy.random.default_rng(seed)``); relative errors max|x-y| / max(max|y|, 1)."""
    from symgen import reference as ref

    model = spatial_chain(n)
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.pi, np.pi, n)
    v = rng.uniform(-2.0, 2.0, n)
    mass, forcing, qd, ud = kane_chain(n, exact)
    qs, us = _plain_symbols(n)
    plain = dict(zip(qd, qs, strict=True)) | dict(zip(ud, us, strict=True))
    f = sympy.lambdify([qs, us], [mass.xreplace(plain), forcing.xreplace(plain)], "numpy")
    m_sympy, f_sympy = (np.asarray(x, dtype=float) for x in f(list(q), list(v)))
    m_ref = ref.mass_matrix(model, q)
    f_ref = -ref.bias_forces(model, q, v)
    ks = symgen.generate(model, list(SYMGEN_SUBSET))
    m_symgen = ks.evaluate("mass_matrix", q=q)["M"]
    b_symgen = ks.evaluate("bias_forces", q=q, v=v)["tau"]
    errors = {
        "sympy_mass_matrix": relative_error(m_sympy.reshape(n, n), m_ref),
        "sympy_forcing": relative_error(f_sympy.reshape(n), f_ref),
        "symgen_mass_matrix": relative_error(np.asarray(m_symgen).reshape(n, n), m_ref),
        "symgen_bias_forces": relative_error(np.asarray(b_symgen).reshape(n), -f_ref),
    }
    return {"n": n, "seed": seed, "tolerance": CHECK_TOL, "rel_err": errors,
            "ok": all(e < CHECK_TOL for e in errors.values())}


# ---------------------------------------------------------------- driver
def versions() -> dict[str, str]:
    """Versions of the tools and the interpreter."""
    return {"python": platform.python_version(), "sympy": sympy.__version__,
            "numpy": np.__version__, "symgen": symgen.__version__}


def run(
    sympy_sizes: Sequence[int] = SYMPY_SIZES,
    symgen_sizes: Sequence[int] = SYMGEN_SIZES,
    timeout_s: float = TIMEOUT_S,
    log: Log = print,
    check_sizes: Sequence[int] = (1, 3),
) -> dict[str, Any]:
    """The whole benchmark; a JSON-serialisable dict (see ``main`` for the layout)."""
    checks = []
    for n in check_sizes:
        c = check(n)
        checks.append(c)
        worst = max(c["rel_err"].values())
        log(f"check n={n}: max rel. error {worst:.2e} ({'ok' if c['ok'] else 'FAILED'})")
    res: dict[str, Any] = {
        "benchmark": "sympy_generation",
        "description": (
            "wall time from model to C source and op counts after CSE on "
            "symgen.io.robots.spatial_chain(n); sympy: KanesMethod mass_matrix + forcing, "
            "cse, ccode; symgen: generate + emit_c (all default kernels, and mass_matrix + "
            "bias_forces alone); each size in a fresh subprocess"
        ),
        "versions": versions(),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "timeout_s": timeout_s,
        "check": checks,
        "check_ok": all(c["ok"] for c in checks),
    }
    res["sympy"] = sympy_sizes_run(sympy_sizes, timeout_s, log)
    res["symgen_all"] = symgen_sizes_run(symgen_sizes, None, log)
    res["symgen_mass_matrix_bias_forces"] = symgen_sizes_run(symgen_sizes, SYMGEN_SUBSET, log)
    return res


def plot(res: dict[str, Any], path: str | os.PathLike, logx: bool = True) -> None:
    """Time from model to C source vs n (log y), both tools; sympy's timeout marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter

    fig, ax = plt.subplots(figsize=(7, 4.5))
    series = (
        ("sympy", "sympy KanesMethod: M + forcing", "C3", "o"),
        ("symgen_all", "symgen: all kernels", "C0", "s"),
        ("symgen_mass_matrix_bias_forces", "symgen: mass_matrix + bias_forces", "C2", "^"),
    )
    for key, label, color, marker in series:
        ok = [r for r in res.get(key, []) if r["status"] == "ok"]
        ax.plot([r["n"] for r in ok], [r["total_s"] for r in ok], marker=marker, color=color,
                label=label, markersize=4)
    timeout = float(res.get("timeout_s", TIMEOUT_S))
    timed_out = [r for r in res.get("sympy", []) if r["status"].startswith("timeout")]
    ax.axhline(timeout, color="0.5", linestyle=":", linewidth=1,
               label=f"sympy timeout ({timeout:g} s per size)")
    if timed_out:
        n = timed_out[0]["n"]
        ok = [r for r in res["sympy"] if r["status"] == "ok" and r["n"] < n]
        if ok:
            ax.plot([ok[-1]["n"], n], [ok[-1]["total_s"], timeout], color="C3",
                    linestyle="--", linewidth=1)
        ax.plot([n], [timeout], marker="x", color="C3", markersize=9, markeredgewidth=2,
                linestyle="none")
        ax.annotate(f"sympy n={n}: > {timeout:g} s (timeout)", (n, timeout),
                    textcoords="offset points", xytext=(8, 6), color="C3", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylim(top=3 * max([timeout] + [r["total_s"] or 0.0 for key, *_ in series
                                          for r in res.get(key, [])]))
    if logx:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(ScalarFormatter())
        sizes = [r["n"] for key, *_ in series for r in res.get(key, [])]
        if sizes:
            lo, hi = min(sizes), max(sizes)
            ax.set_xticks([t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500) if lo <= t <= hi])
    ax.set_xlabel("links n (spatial chain, revolute joints)")
    ax.set_ylabel("wall time, model to C source [s]")
    ax.set_title("Generation time: symgen vs sympy.physics.mechanics (KanesMethod)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _sizes(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x.strip())


def _worker(args: list[str]) -> int:
    """``sympy N`` or ``symgen N [kernel,kernel]``: print one JSON record."""
    tool, n = args[0], int(args[1])
    if tool == "sympy":
        rec = run_sympy(n)
    else:
        rec = run_symgen(n, args[2].split(",") if len(args) > 2 else None)
    print(json.dumps(rec), flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: run, write the JSON (``res``) and the PNG.

    ``res``: ``versions``, ``machine``, ``timeout_s``, ``check`` (list per n of ``rel_err``
    and ``ok``), ``check_ok``, and per tool a list of records by n: ``sympy``,
    ``symgen_all``, ``symgen_mass_matrix_bias_forces``; each record has ``n``, ``status``,
    ``derive_s``, ``codegen_s``, ``total_s``, ``ops`` (add mul div sqrt trig other total),
    ``c_bytes``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        return _worker(argv[1:])
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sympy-sizes", type=_sizes, default=SYMPY_SIZES)
    p.add_argument("--symgen-sizes", type=_sizes, default=SYMGEN_SIZES)
    p.add_argument("--timeout", type=float, default=TIMEOUT_S)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--png", type=Path, default=None)
    a = p.parse_args(argv)
    res = run(a.sympy_sizes, a.symgen_sizes, a.timeout)
    if a.json:
        a.json.write_text(json.dumps(res, indent=1) + "\n")
    if a.png:
        plot(res, a.png)
    return 0 if res["check_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
