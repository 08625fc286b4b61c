"""Simulations of the benchmark mechanisms with the compiled natural-coordinate step, and the
figures they are judged by (shared by tests/build/test_natural_benchmarks.py and
``python -m bench.natural_accuracy``).

Each :class:`Case` is a mechanism with its initial state and its measures:

- ``chain2``, ``chain40``: the row of N parallelogram four-bars (tests/mechanisms.py) from
  its assembled configuration (cranks at 45°) with crank rate 1 rad/s; ``chain2_iftomm``,
  ``chain40_iftomm``: from the IFToMM benchmark's start (problem A02 of the IFToMM
  library of computational benchmarks, González, Dopico, Lugrís & Cuadrado: cranks
  vertical, the first crank's tip B0 moving at ẋ = 1 m/s, i.e. θ = π/2, θ̇ = −1 rad/s;
  20 s; its reference is the time history of B0, which the reduction reproduces); error:
  the first crank's tip against the exact one-DOF reduction (m = L = 1, θ from the
  horizontal)
  [(N+1)/3 + N] θ̈ = −g [(N+1)/2 + N] cos θ (Lagrange's equations with T = ½[(N+1)/3 + N]θ̇²,
  V = g[(N+1)/2 + N] sin θ: N + 1 cranks turning about their pivots, N couplers translating
  with the tips), integrated by RK4 on a fine grid (:class:`ChainReference`). The cranks are
  horizontal (sin θ = 0) at the chain's singular positions;
- ``andrews``: Andrews' squeezer from the test set's initial state to t = 0.03; error:
  max|y − y_ref| / max|y_ref| of the seven angles against the published solution;
- ``top``: the spinning heavy top; error: the attitude's angle against Euler's equations
  (tests/benchmark_mechanisms.py); also the drift of the vertical angular momentum;
- ``bricard``: Bricard's linkage falling from rest (one permanently redundant constraint);
- the example models (``four_bar``, ``slider_crank``, ``rssr``, ``double_pendulum``,
  ``puma560``) from their zero configuration with the joint rates of
  :data:`EXAMPLE_RATES`, τ = 0.

Energy: ½q̇ᵀMq̇ + V with V = −Qᵀq for constant (gravity) forces (the natural mass matrix and
the gravity forces are exact: García de Jalón & Bayo 1994, eq. 4.48, 4.61, 4.129), plus the
spring's energy and the motor's work for Andrews. Its drift is max|E(t) − E(0)| over the
run divided by the largest kinetic energy of the run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import sympy
from benchmark_mechanisms import (
    ANDREWS,
    ANDREWS_T_REF,
    ANDREWS_Y0,
    ANDREWS_Y_REF,
    ANDREWS_YAML,
    BRICARD_YAML,
    MODELS,
    TOP_YAML,
    andrews_angles,
    andrews_spring_point,
    extrapolation_integrate,
    top_inertia_about_pivot,
    top_initial_state,
    top_rhs,
    top_rotation,
)
from mechanisms import G, n_four_bar

import symgen
from symgen.build.compiler import compile_kernels
from symgen.formulations.natural.model import neutral_joint_configuration
from symgen.formulations.natural.registration import NaturalContext
from symgen.natural import NaturalModel, NaturalOptions, natural_model
from symgen.reference.natural import consistent_velocities, lagrange_accelerations

Array = np.ndarray

#: Every step size of the study divides this (s): records at its multiples line up for all h.
SYNC = 0.03
#: The chain's short horizon (s): past its first two singular positions (N = 2: 0.58 s and
#: 1.15 s; N = 40: 0.59 s and 1.17 s; :meth:`ChainReference.singular_times`).
CHAIN_SHORT = 2.0
#: Starts of the chain (θ₀, θ̇₀) of the first crank: the docs' (45°, +1 rad/s) and the
#: IFToMM benchmark's (cranks vertical, ẋ of the first tip +1 m/s).
CHAIN_STARTS = {"docs": (math.pi / 4, 1.0), "iftomm": (math.pi / 2, -1.0)}
#: The examples of examples/models/ besides the benchmark mechanisms.
EXAMPLES = ("four_bar", "slider_crank", "rssr", "double_pendulum", "puma560", "five_bar")
#: Every case, in table order.
CASES = ("chain2", "chain40", "andrews", "top", "bricard", *EXAMPLES)
#: The benchmark page's cases: the chains also from the IFToMM benchmark's own start.
BENCH_CASES = ("chain2", "chain2_iftomm", "chain40", "chain40_iftomm", *CASES[2:])


# ---------------------------------------------------------------------------------------------
# references


class ChainReference:
    """θ(t) of the N-four-bar's reduction by classical RK4 with step ``dt`` (default 1e-4 s;
    global error ~ T (ω dt)⁴ ω / 100 ≈ 1e-14 rad at ω ≈ 3.4 rad/s), and cubic Hermite
    interpolation between the grid points (error ≤ dt⁴ max|θ⁗| / 384 ≈ 1e-16)."""

    def __init__(self, n: int, horizon: float, theta0: float = math.pi / 4, rate0: float = 1.0,
                 dt: float = 1e-4) -> None:
        self.n = n
        self.inertia = (n + 1) / 3 + n
        self.moment = (n + 1) / 2 + n
        self.dt = dt
        steps = int(math.ceil(horizon / dt)) + 1
        theta = np.empty(steps + 1)
        rate = np.empty(steps + 1)
        theta[0], rate[0] = theta0, rate0
        k = -G * self.moment / self.inertia
        x, v = theta0, rate0
        for i in range(steps):
            a1 = k * math.cos(x)
            x2, v2 = x + 0.5 * dt * v, v + 0.5 * dt * a1
            a2 = k * math.cos(x2)
            x3, v3 = x + 0.5 * dt * v2, v + 0.5 * dt * a2
            a3 = k * math.cos(x3)
            x4, v4 = x + dt * v3, v + dt * a3
            a4 = k * math.cos(x4)
            x += dt / 6 * (v + 2 * v2 + 2 * v3 + v4)
            v += dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
            theta[i + 1], rate[i + 1] = x, v
        self.theta, self.rate = theta, rate

    def rhs(self, _t: float, y: Array) -> Array:
        return np.array([y[1], -G * self.moment / self.inertia * math.cos(y[0])])

    def angle(self, t: Array) -> Array:
        """θ at times ``t`` (cubic Hermite on the RK4 grid, with θ̇ as the slopes)."""
        t = np.asarray(t, float)
        i = np.minimum((t / self.dt).astype(int), len(self.theta) - 2)
        s = t / self.dt - i
        h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
        h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
        return (h00 * self.theta[i] + h10 * self.dt * self.rate[i]
                + h01 * self.theta[i + 1] + h11 * self.dt * self.rate[i + 1])

    def tip(self, t: Array) -> Array:
        """The first crank's tip (cos θ, sin θ) at times ``t``, shape (len(t), 2)."""
        theta = self.angle(t)
        return np.column_stack([np.cos(theta), np.sin(theta)])

    def singular_times(self, horizon: float) -> list[float]:
        """Times ≤ ``horizon`` at which the cranks are horizontal (sin θ changes sign)."""
        s = np.sin(self.theta)
        idx = np.nonzero(np.sign(s[1:]) != np.sign(s[:-1]))[0]
        times = [float((i + s[i] / (s[i] - s[i + 1])) * self.dt) for i in idx]
        return [t for t in times if t <= horizon]


@cache
def chain_reference(n: int, horizon: float, start: str = "docs") -> ChainReference:
    return ChainReference(n, horizon, *CHAIN_STARTS[start])


_TOP_CACHE: dict[int, tuple[Array, Array]] = {}


def top_reference_at(times: Array) -> list[Array]:
    """The top's world rotation at ``times`` (multiples of :data:`SYNC`), from Euler's
    equations by GBS extrapolation from one multiple of SYNC to the next (rtol 1e-12),
    memoised."""
    ticks = [int(round(t / SYNC)) for t in times]
    if 0 not in _TOP_CACHE:
        quat, omega = top_initial_state()
        _TOP_CACHE[0] = (quat, omega)
    last = max(_TOP_CACHE)
    for k in range(last + 1, max(ticks, default=0) + 1):
        quat, omega = _TOP_CACHE[k - 1]

        def normalise(_t: float, x: Array) -> Array:
            return np.concatenate([x[:4] / np.linalg.norm(x[:4]), x[4:]])

        x, _ = extrapolation_integrate(top_rhs, (k - 1) * SYNC, np.concatenate([quat, omega]),
                                       k * SYNC, rtol=1e-12, atol=1e-12, h0=SYNC,
                                       after_step=normalise)
        _TOP_CACHE[k] = (x[:4], x[4:])
    return [top_rotation(_TOP_CACHE[k][0]) for k in ticks]


# ---------------------------------------------------------------------------------------------
# cases


@dataclass
class Case:
    """A mechanism, its natural model, its initial state and how its runs are judged."""

    key: str
    model: symgen.Model
    nm: NaturalModel
    q0: Array
    qd0: Array
    #: Records (stride steps apart) at least this often (s); 0: every step.
    record_dt: float = 1e-4
    #: Horizon (s) for step h.
    horizon: Callable[[float], float] = lambda h: 2.0
    #: The error column's name and unit.
    error_name: str = ""
    #: Potential energy of records of q (rows); None: energy not tracked.
    potential: Callable[[Array, Array], Array] | None = None
    #: Figures of a run beyond the common ones.
    extra: Callable[[Case, Records], dict[str, float]] | None = None
    notes: dict[str, object] = field(default_factory=dict)

    def qdd0(self) -> Array:
        """Consistent initial accelerations (Lagrange multipliers, no stabilisation; q̈ is
        unique with redundant constraints too)."""
        return lagrange_accelerations(self.nm, self.q0, self.qd0)[0]


def _gravity_potential(nm: NaturalModel) -> Callable[[Array, Array], Array]:
    forces = np.asarray(nm.forces, float)
    return lambda q, t: -(q @ forces)


def chain_case(n: int, nm: NaturalModel | None = None, start: str = "docs") -> Case:
    """The chain of ``n`` four-bars assembled at the start's crank angle, with the start's
    crank rate (:data:`CHAIN_STARTS`)."""
    theta, rate = CHAIN_STARTS[start]
    model = n_four_bar(n, angle=theta)
    nm = nm or natural_model(model)
    x = nm.coordinates.index("tip_0.x")
    qd = consistent_velocities(nm, nm.q0, {x: -math.sin(theta) * rate})
    key = f"chain{n}" if start == "docs" else f"chain{n}_{start}"
    return Case(key, model, nm, nm.q0.copy(), qd,
                horizon=lambda h: 20.0 if h >= 1e-3 else CHAIN_SHORT,
                error_name="tip error (m)", potential=_gravity_potential(nm),
                extra=_chain_extra, notes={"n": n, "tip": x, "start": start})


def _chain_extra(case: Case, rec: Records) -> dict[str, float]:
    ref = chain_reference(case.notes["n"], max(rec.t[-1], 1e-9) + 1e-3, case.notes["start"])
    x = case.notes["tip"]
    miss = np.linalg.norm(rec.q[:, x:x + 2] - ref.tip(rec.t), axis=1)
    early = rec.t <= CHAIN_SHORT + 1e-9
    return {"error": float(np.max(miss)), "error 2 s": float(np.max(miss[early]))}


def andrews_case(nm: NaturalModel | None = None) -> Case:
    model = symgen.load(ANDREWS_YAML)
    nm = nm or natural_model(model)
    return Case("andrews", model, nm, nm.q0.copy(), np.zeros(nm.n), record_dt=0.0,
                horizon=lambda h: ANDREWS_T_REF, error_name="rel. angle error",
                potential=_andrews_potential(nm), extra=_andrews_extra)


def andrews_tracked_angles(nm: NaturalModel, qs: Array) -> Array:
    """The seven angles at every record, each taken nearest the previous record's."""
    out = np.empty((len(qs), 7))
    near = ANDREWS_Y0
    for i, q in enumerate(qs):
        near = out[i] = andrews_angles(nm, q, near=near)
    return out


def _andrews_potential(nm: NaturalModel) -> Callable[[Array, Array], Array]:
    """The spring's energy ½c₀(L − l₀)² minus the motor's work mom·(β − β₀)."""
    c = np.array([ANDREWS["xc"], ANDREWS["yc"]])

    def potential(qs: Array, _t: Array) -> Array:
        y = andrews_tracked_angles(nm, qs)
        length = np.array([np.linalg.norm(andrews_spring_point(row) - c) for row in y])
        return (0.5 * ANDREWS["c0"] * (length - ANDREWS["l0"]) ** 2
                - ANDREWS["mom"] * (y[:, 0] - ANDREWS_Y0[0]))

    return potential


def _andrews_extra(case: Case, rec: Records) -> dict[str, float]:
    y = andrews_tracked_angles(case.nm, rec.q)[-1]
    if abs(rec.t[-1] - ANDREWS_T_REF) > 1e-12:
        return {"error": math.nan}
    return {"error": float(np.max(np.abs(y - ANDREWS_Y_REF)) / np.max(np.abs(ANDREWS_Y_REF)))}


def top_case(nm: NaturalModel | None = None) -> Case:
    model = symgen.load(TOP_YAML)
    nm = nm or natural_model(model)
    jq, jv = top_initial_state()
    q = nm.modeller.coordinates_at(jq)
    qd = nm.modeller.velocities_at(jq, jv)
    return Case("top", model, nm, q, qd, horizon=lambda h: 2.0,
                error_name="attitude error (rad)", potential=_gravity_potential(nm),
                extra=_top_extra)


def top_rotations(nm: NaturalModel, qs: Array, qds: Array | None = None) -> tuple[Array, Array]:
    """World rotations R of the top at the rows of ``qs`` and, with ``qds``, its world angular
    velocities ω ([ω]× = Ṙ Rᵀ). R = X X̄⁻¹ R₀ is affine in q (eq. 4.113-4.116), so
    R(q) = R(0) + Σ q_i D_i and Ṙ = Σ q̇_i D_i."""
    rotation = nm.modeller.body_rotation
    base = rotation(0, np.zeros(nm.n))
    d = np.array([rotation(0, e) - base for e in np.eye(nm.n)])
    rot = base + np.einsum("ri,ijk->rjk", qs, d)
    if qds is None:
        return rot, np.zeros((len(qs), 3))
    w = np.einsum("ri,ijk,rlk->rjl", qds, d, rot)
    return rot, 0.5 * np.stack([w[:, 2, 1] - w[:, 1, 2], w[:, 0, 2] - w[:, 2, 0],
                                w[:, 1, 0] - w[:, 0, 1]], axis=1)


def _top_extra(case: Case, rec: Records) -> dict[str, float]:
    i_o = top_inertia_about_pivot()
    rot, omega = top_rotations(case.nm, rec.q, rec.qd)
    momentum = np.einsum("rij,jk,rlk,rl->ri", rot, i_o, rot, omega)
    lz = momentum[:, 2]
    ticks = np.round(rec.t / SYNC)
    idx = np.nonzero(np.abs(rec.t - ticks * SYNC) <= 1e-9)[0]
    refs = top_reference_at(rec.t[idx])
    error = 0.0
    for i, ref in zip(idx, refs, strict=True):
        chord = np.linalg.norm(rot[i] - ref) / (2 * math.sqrt(2))
        error = max(error, 2 * math.asin(min(1.0, chord)))
    return {"error": error if len(idx) > 1 else math.nan,
            "momentum drift": float(np.max(np.abs(lz - lz[0])) / np.linalg.norm(momentum[0]))}


def bricard_case(nm: NaturalModel | None = None) -> Case:
    model = symgen.load(BRICARD_YAML)
    nm = nm or natural_model(model)
    return Case("bricard", model, nm, nm.q0.copy(), np.zeros(nm.n),
                potential=_gravity_potential(nm))


#: Initial motion of the examples: joint rates (rad/s) of a driving joint (closed loops; the
#: other velocities follow) or of every tree joint (open chains). At rest in their zero
#: configuration some of them are in equilibrium (the four-bar's links vertical, the
#: pendulum hanging).
EXAMPLE_RATES: dict[str, dict[str, float] | tuple[float, ...]] = {
    "four_bar": {"crank_joint": 5.0},
    "slider_crank": {"crank_joint": 10.0},
    "rssr": {"crank_joint": 5.0},
    "double_pendulum": (2.0, -2.0),
    "puma560": (0.5, -0.5, 0.5, -0.5, 0.5, -0.5),
    "five_bar": {"motor1": 3.0, "motor2": -2.0},
}


def joint_rate_velocities(nm: NaturalModel, q: Array, rates: dict[str, float]) -> Array:
    """The q̇ of least kinetic energy with Φ_q q̇ = 0 and the given 1-DOF joint rates
    (∇θ_j · q̇ = θ̇_j): the KKT system [[M, Aᵀ], [A, 0]], A = [Φ_q; ∇θ], in least squares
    (redundant rows allowed)."""
    rows = [nm.phi_q(q)]
    rhs = [np.zeros(nm.m)]
    for name, rate in rates.items():
        expr = nm.joint_coordinates[name].expr
        grad = sympy.lambdify([nm.symbols], [sympy.diff(expr, s) for s in nm.symbols])(q)
        rows.append(np.asarray(grad, float)[None, :])
        rhs.append(np.array([rate]))
    a = np.vstack(rows)
    kkt = np.block([[nm.mass_matrix, a.T], [a, np.zeros((len(a), len(a)))]])
    qd = np.linalg.lstsq(kkt, np.concatenate([np.zeros(nm.n), *rhs]), rcond=None)[0][:nm.n]
    if np.max(np.abs(a @ qd - np.concatenate(rhs))) > 1e-9 * max(1.0, np.abs(qd).max()):
        raise ValueError(f"{nm.name}: joint rates {rates} not compatible with the constraints")
    return qd


def example_case(name: str, nm: NaturalModel | None = None) -> Case:
    model = symgen.load(MODELS / f"{name}.yaml")
    nm = nm or natural_model(model)
    rates = EXAMPLE_RATES[name]
    if isinstance(rates, dict):
        qd = joint_rate_velocities(nm, nm.q0, rates)
    else:
        qd = nm.modeller.velocities_at(neutral_joint_configuration(model), np.array(rates))
    return Case(name, model, nm, nm.q0.copy(), qd, potential=_gravity_potential(nm))


def make_case(key: str, nm: NaturalModel | None = None) -> Case:
    """The case ``key`` (one of :data:`BENCH_CASES`)."""
    if key.startswith("chain"):
        n, _, start = key[5:].partition("_")
        return chain_case(int(n), nm, start or "docs")
    builders = {"andrews": andrews_case, "top": top_case, "bricard": bricard_case}
    if key in builders:
        return builders[key](nm)
    if key in EXAMPLES:
        return example_case(key, nm)
    raise ValueError(f"unknown case {key!r} (cases: {', '.join(BENCH_CASES)})")


# ---------------------------------------------------------------------------------------------
# kernels and runs


def step_kernels(case: Case, h: float, kernels: tuple[str, ...] = ("nc_step", "nc_constraints"),
                 flags: tuple[str, ...] = ("-O2", "-std=c99")):
    """The compiled ``kernels`` of ``case`` for step h (default options otherwise; the
    natural model is shared, so its symbolic work is done once per case)."""
    opts = NaturalOptions(step=h)
    context = NaturalContext(case.model.resolve(), case.nm, opts)
    ks = symgen.generate(case.model, list(kernels), opts, context=context)
    return compile_kernels(ks, flags=flags, vectorize=None)


@dataclass
class Records:
    """A run's states every ``stride`` steps (and the last one): times, q, q̇, λ; the time
    of the first record with a non-finite value (None: the run stayed finite)."""

    h: float
    stride: int
    t: Array
    q: Array
    qd: Array
    lam: Array
    failed_at: float | None = None


def _stride(h: float, record_dt: float) -> int:
    """Largest stride ≤ record_dt/h that divides the steps per :data:`SYNC` (when h divides
    SYNC), so that records fall on its multiples."""
    most = max(1, int(record_dt / h + 1e-9))
    per_sync = SYNC / h
    if abs(per_sync - round(per_sync)) > 1e-6:
        return most
    per_sync = int(round(per_sync))
    return max(d for d in range(1, most + 1) if per_sync % d == 0)


def step_arguments(function, case: Case, h: float) -> dict[str, Array]:
    """The inputs of a step kernel besides the state: τ = 0, the step h where the kernel
    takes it (``nc_step_rk4``'s ``dt``) and the force parameters' defaults."""
    out = {}
    for spec in function.inputs:
        if spec.name == "tau":
            out["tau"] = np.zeros(spec.shape)
        elif spec.name == "dt":
            out["dt"] = np.array([h])
        elif spec.name == "params":
            out["params"] = np.array(case.nm.force_parameter_defaults, float)
    return out


def simulate(case: Case, step, h: float, steps: int | None = None,
             lam0: Array | None = None) -> Records:
    """Run ``step`` (a compiled kernel (q, q̇, q̈, λ, ...) → (q, q̇, q̈, λ)) from the case's
    initial state for ``steps`` steps (default: its horizon), recording every
    :func:`_stride` steps; stops at the first non-finite record."""
    steps = int(round(case.horizon(h) / h)) if steps is None else steps
    stride = _stride(h, case.record_dt)
    nrec = steps // stride + 2
    n, m = case.nm.n, case.nm.m
    t = np.empty(nrec)
    qs, qds, lams = np.empty((nrec, n)), np.empty((nrec, n)), np.empty((nrec, m))
    lam = np.zeros(m) if lam0 is None else np.array(lam0, float)
    a = (case.q0.copy(), case.qd0.copy(), case.qdd0(), lam)
    b = tuple(np.empty_like(x) for x in a)
    fixed = tuple(step_arguments(step, case, h).values())
    t[0], qs[0], qds[0], lams[0] = 0.0, a[0], a[1], a[3]
    r = 1
    failed = None
    isfinite = math.isfinite
    for k in range(1, steps + 1):
        step(*a, *fixed, out=b)
        a, b = b, a
        if k % stride == 0 or k == steps:
            t[r], qs[r], qds[r], lams[r] = k * h, a[0], a[1], a[3]
            r += 1
            if not isfinite(float(a[0].sum() + a[1].sum() + a[3].sum())):
                failed = k * h
                break
    return Records(h, stride, t[:r], qs[:r], qds[:r], lams[:r], failed)


def time_per_step(case: Case, step, h: float, count: int = 2000, repeat: int = 3) -> float:
    """Seconds per call of ``step`` (fast path, out= arrays), best of ``repeat`` loops."""
    fixed = tuple(step_arguments(step, case, h).values())
    best = math.inf
    for _ in range(repeat):
        a = (case.q0.copy(), case.qd0.copy(), case.qdd0(), np.zeros(case.nm.m))
        b = tuple(np.empty_like(x) for x in a)
        start = time.perf_counter()
        for _ in range(count):
            step(*a, *fixed, out=b)
            a, b = b, a
        best = min(best, (time.perf_counter() - start) / count)
    return best


def assess(case: Case, rec: Records, constraints) -> dict[str, float]:
    """The figures of a run (records up to the last finite one): largest |Φ| (compiled
    ``nc_constraints`` over the records), largest |λ|, the energy drift, and the case's own
    (``error``, ...). Non-finite figures for a run that failed."""
    good = slice(0, len(rec.t) - (1 if rec.failed_at is not None else 0))
    q, qd = rec.q[good], rec.qd[good]
    phi = constraints(q) if len(q) else np.zeros((0, case.nm.m))
    out = {"stable": rec.failed_at is None, "failed_at": rec.failed_at,
           "t_end": float(rec.t[-1]), "phi": float(np.max(np.abs(phi), initial=0.0)),
           "lam": float(np.max(np.abs(rec.lam[good]), initial=0.0)),
           "energy drift": math.nan, "error": math.nan}
    if case.potential is not None and len(q):
        kinetic = 0.5 * np.einsum("ij,jk,ik->i", qd, case.nm.mass_matrix, qd)
        energy = kinetic + case.potential(q, rec.t[good])
        scale = max(float(kinetic.max()), 1e-300)
        out["energy drift"] = float(np.max(np.abs(energy - energy[0])) / scale)
    if rec.failed_at is None and case.extra is not None:
        out.update(case.extra(case, rec))
    return out


def failure_trace(case: Case, rec: Records, constraints, rows: int = 8) -> list[dict]:
    """Records before a failure: a few around the onset (the first record whose |Φ|
    exceeds 100 times the largest |Φ| of the run's first tenth) and the last ones: t, |Φ|,
    |λ|, |q̇| (max norms)."""
    last = len(rec.t) - 1
    if last < 1:
        return []
    phi = np.max(np.abs(constraints(rec.q[:last])), axis=1)
    calm = 100 * max(float(phi[:max(1, last // 10)].max()), 1e-300)
    onset = int(np.argmax(phi > calm)) if np.any(phi > calm) else last - 1
    picks = sorted({i for i in range(onset - rows // 2 + 1, onset + 2) if 0 <= i < last}
                   | set(range(max(0, last - rows // 2), last)))
    return [{"t": float(rec.t[i]), "phi": float(phi[i]), "lam": float(np.max(np.abs(rec.lam[i]))),
             "qd": float(np.max(np.abs(rec.qd[i])))} for i in picks]


__all__ = ["CASES", "CHAIN_SHORT", "CHAIN_STARTS", "EXAMPLES", "SYNC", "Case", "ChainReference",
           "Records", "assess", "chain_reference", "failure_trace", "make_case", "simulate",
           "step_arguments", "step_kernels", "time_per_step", "top_reference_at", "top_rotations"]
