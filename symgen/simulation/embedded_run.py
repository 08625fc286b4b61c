"""Closed loops in minimal coordinates (constraint embedding, Jain 2009; coordinate
partitioning with re-selection, Wehage & Haug 1982; García de Jalón & Bayo 1994, §5.3):
``simulate(..., method="embedded", dt=h)``.

The state is the independent coordinates θ_R and their rates; each classical Runge-Kutta
stage closes the loops for its θ_R (``dependent_coordinates``: Newton seeded by the
predictor q + c·h·q̇ of the stage, never by a later state) and takes θ̈_R from
``embedded_forward_dynamics``, which also gives every joint's rate. Two checks guard the
assembly branch:

- **continuity**: a Newton correction larger than half the predictor's own motion means the
  loops closed on another branch; the run stops with a one-line error instead of going on;
- **conditioning**: when the dependent block G_D becomes ill-conditioned (the kernel's
  status: the smallest pivot of G_D G_Dᵀ relative to the largest, below
  :data:`RESELECT_BELOW`), the independent coordinates are chosen again at the current
  configuration, by greedy column pivoting of G (the columns farthest from the span of
  those chosen before become dependent), and the kernels for that choice are generated
  (``Options(independent=...)``, cached). Near a singular position of the mechanism itself
  (G loses rank) no choice helps: the run stops and names the closed-loop steps
  (``loop_rk4``), which pass such positions.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np

from symgen.build.compiler import compile_kernels
from symgen.errors import SymgenError
from symgen.formulations.tree.options import Options
from symgen.generate import generate
from symgen.model import Model
from symgen.simulation.driving import BRANCH_FRACTION, Forces, Progress, forces_function
from symgen.simulation.loop_run import closed_start
from symgen.simulation.trajectory import Trajectory

Array = np.ndarray
#: Re-select the independent coordinates when the status pivot falls below this (G_D G_Dᵀ's
#: smallest pivot relative to its largest: cond(G_D)⁻², here cond 10), to a choice at
#: least :data:`RESELECT_GAIN` times better at the current configuration: early, since the
#: pivot can fall by orders of magnitude within a few steps of a fast motion (the five-bar
#: from its neutral configuration: 8.8e-3 to 2e-5 in ten 1-ms steps).
RESELECT_BELOW = 1e-2
RESELECT_GAIN = 10.0
#: Below this pivot for every choice the mechanism itself is singular there.
SINGULAR_PIVOT = 1e-10
#: The most choices of independent coordinates :func:`_best_split` compares.
MAX_CHOICES = 500
KERNELS = ("embedded_forward_dynamics", "dependent_coordinates", "loop_jacobian",
           "loop_constraints", "loop_project", "energy")


class _Partition:
    """The compiled kernels of one choice of independent coordinates."""

    def __init__(self, model: Model, independent: tuple[str, ...] | None, params,
                 progress: bool | None = None) -> None:
        names = list(KERNELS) + (["element_forces"] if model.force_elements else [])
        options = Options(independent=independent)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*leave out the force elements")
            ks = generate(model, names, options=options)
        self.lib = compile_kernels(ks, vectorize=None, progress=progress)
        self.columns = list(ks.context.embedding.independent)
        joints = [j.name for j in model.independent_joints]
        self.names = tuple(dict.fromkeys(
            name for name in joints
            if set(range(model.nv)[model.v_slices[name]]) & set(self.columns)))
        self.extra = () if params is None else (np.asarray(params, float),)

    def call(self, name: str, *args) -> list[Array]:
        out = getattr(self.lib, name)(*args, *self.extra)
        return [np.asarray(x) for x in (out if isinstance(out, tuple) else (out,))]


def _best_split(model: Model, jac: Array, dof: int) -> tuple[str, ...]:
    """The independent joints at a configuration with loop Jacobian ``jac``: of every
    choice of ``dof`` 1-DOF joints (multi-DOF joints stay dependent), the one whose
    dependent block G_D is best conditioned (largest :func:`_pivot`); at most
    :data:`MAX_CHOICES` choices are tried, in the order of greedy column pivoting."""
    singles = [(j.name, model.v_slices[j.name].start) for j in model.independent_joints
               if j.nv == 1]
    best, best_pivot = (), -1.0
    for k, choice in enumerate(itertools.combinations(singles, dof)):
        if k >= MAX_CHOICES:
            break
        value = _pivot(jac, [d for _, d in choice])
        if value > best_pivot:
            best, best_pivot = tuple(name for name, _ in choice), value
    return best


def _pivot(jac: Array, independent: list[int]) -> float:
    """The status pivot of a choice at a configuration: the smallest eigenvalue of
    G_D G_Dᵀ relative to its largest."""
    dependent = [d for d in range(jac.shape[1]) if d not in independent]
    gram = jac[:, dependent] @ jac[:, dependent].T
    eig = np.linalg.eigvalsh(gram) if gram.size else np.ones(1)
    return float(eig[0] / eig[-1]) if eig[-1] > 0 else 0.0


def simulate_embedded(model: Model, duration: float, dt: float, q0: Array, v0: Array,
                      tau: Forces, params, record_every: int, progress: bool | None
                      ) -> Trajectory:
    """The trajectory of ``model`` (with loop joints) in minimal coordinates at the fixed
    step ``dt`` (module docstring)."""
    steps = int(round(duration / dt))
    if steps < 1 or abs(steps * dt - duration) > 1e-9 * duration:
        raise SymgenError(f"simulate: duration {duration} is not a whole number of steps "
                          f"dt = {dt}")
    if any(j.nq != j.nv for j in model.independent_joints):
        raise SymgenError("simulate: method 'embedded' integrates θ_R by q̇ = v; the model "
                          "has joints with quaternions (use 'loop_rk4')")
    partitions: dict[tuple[str, ...] | None, _Partition] = {}

    def partition(independent: tuple[str, ...] | None) -> _Partition:
        if independent not in partitions:
            partitions[independent] = _Partition(model, independent, params, progress)
        return partitions[independent]

    part = partition(None)
    forces = forces_function(tau, model.nv)
    q, v = np.asarray(q0, float), np.asarray(v0, float)
    q, v = closed_start(part.call, q, v)
    dof = len(part.columns)
    notes: list[str] = []
    clock = Progress(model.name, duration, progress)

    def close(q_from: Array, predictor: Array, theta: Array, t: float) -> tuple[Array, float]:
        guess = predictor.copy()
        guess[part.columns] = theta
        closed, status = part.call("dependent_coordinates", guess)
        motion = float(np.max(np.abs(predictor - q_from), initial=0.0))
        if float(np.max(np.abs(closed - guess), initial=0.0)) > BRANCH_FRACTION * motion + 1e-8:
            raise SymgenError(
                f"simulate: at t = {t:.6g} s the dependent coordinates closed on another "
                "assembly branch (the Newton correction exceeded half the step's motion); "
                "use a smaller dt or method 'loop_rk4'")
        if float(status[0]) > 1e-9:
            raise SymgenError(
                f"simulate: at t = {t:.6g} s the loops could not be closed for the "
                f"independent coordinates {', '.join(part.names)} (|phi| = "
                f"{float(status[0]):.1e}); use a smaller dt or method 'loop_rk4'")
        return closed, float(status[1])

    def accel(q_: Array, w: Array, tau_: Array) -> tuple[Array, Array]:
        a_ind, v_full, _ = part.call("embedded_forward_dynamics", q_, w, tau_)
        return a_ind, v_full

    def power(q_: Array, v_: Array, tau_: Array) -> float:
        out = float(tau_ @ v_)
        if model.force_elements:
            out += float((part.call("element_forces", q_, v_)[0]
                          - part.call("element_forces", q_, np.zeros_like(v_))[0]) @ v_)
        return out

    def record(t: float, q_: Array, v_: Array, work: float) -> tuple:
        phi = part.call("loop_constraints", q_)[0]
        jac = part.call("loop_jacobian", q_)[0].reshape(phi.size, model.nv)
        return (t, q_, v_, float(np.max(np.abs(phi), initial=0.0)),
                float(np.max(np.abs(jac @ v_), initial=0.0)),
                float(np.sum(part.call("energy", q_, v_)[0])), work)

    def reselect(current: _Partition, q_: Array, v_: Array, t: float) -> _Partition:
        """The partition for the next step: ``current`` unless its dependent block is
        ill-conditioned (pivot below :data:`RESELECT_BELOW`) at q or at the configuration
        q + h q̇ the step heads for, and another choice is :data:`RESELECT_GAIN` times
        better there."""
        ahead = q_ + dt * v_
        jacs = [current.call("loop_jacobian", x)[0].reshape(-1, model.nv) for x in (q_, ahead)]
        pivot = min(_pivot(j, current.columns) for j in jacs)
        if pivot >= RESELECT_BELOW:
            return current
        choice = _best_split(model, jacs[1], dof)
        gain = min(_pivot(j, [model.v_slices[n].start for n in choice]) for j in jacs)
        if choice == current.names or gain <= RESELECT_GAIN * pivot:
            if gain < SINGULAR_PIVOT:
                raise SymgenError(
                    f"simulate: at t = {t:.6g} s the mechanism is at a singular position (no "
                    "choice of independent coordinates determines the motion); use method "
                    "'loop_rk4', which passes singular positions")
            return current
        notes.append(f"t = {t:.6g} s: independent coordinates {', '.join(current.names)} -> "
                     f"{', '.join(choice)} (pivot {pivot:.1e} -> {gain:.1e})")
        return partition(choice)

    part = reselect(part, q, v, 0.0)
    rows = [record(0.0, q, v, 0.0)]
    work, h = 0.0, dt
    for n in range(1, steps + 1):
        t = (n - 1) * h
        tau_now = forces(t, q, v)
        w = v[part.columns]
        x = q[part.columns]
        k1, r1 = accel(q, w, tau_now)
        q2, _ = close(q, q + 0.5 * h * r1, x + 0.5 * h * w, t)
        k2, r2 = accel(q2, w + 0.5 * h * k1, tau_now)
        q3, _ = close(q, q + 0.5 * h * r2, x + 0.5 * h * (w + 0.5 * h * k1), t)
        k3, r3 = accel(q3, w + 0.5 * h * k2, tau_now)
        q4, _ = close(q, q + h * r3, x + h * (w + 0.5 * h * k2), t)
        k4, r4 = accel(q4, w + h * k3, tau_now)
        before = power(q, v, tau_now)
        x = x + h / 6 * (6 * w + h * (k1 + k2 + k3))
        w = w + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        q, _ = close(q, q + h / 6 * (r1 + 2 * r2 + 2 * r3 + r4), x, t + h)
        _, v = accel(q, w, tau_now)
        work += 0.5 * h * (before + power(q, v, tau_now))
        part = reselect(part, q, v, t + h)
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            raise SymgenError(f"simulate: the state is not finite at t = {t + h:.6g} s; "
                              "try a smaller dt")
        if n % record_every == 0 or n == steps:
            rows.append(record(n * h, q, v, work))
        clock.report(n * h)
    columns = [np.array(c) for c in zip(*rows, strict=True)]
    return Trajectory(model, f"embedded (RK4 in the independent coordinates, fixed step "
                      f"{dt:g} s)", *columns, notes)


__all__ = ["RESELECT_BELOW", "simulate_embedded"]
