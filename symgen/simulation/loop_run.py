"""Closed loops in joint coordinates at a fixed step, by the generated step kernels:
``loop_step_rk4`` (method ``"loop_rk4"``, fourth order, the default with a fixed ``dt``,
which it takes as an input) or ``loop_step`` (``"loop_trapezoidal"``, the index-3
augmented-Lagrangian trapezoidal step: second order, for stiff force elements; compiled
with its step baked in, ``Options(step=dt)``) (:mod:`symgen.formulations.loop_step`). The
whole step runs in C; Python only records. Joint forces are sampled at the start of each
step and held over it (a zero-order hold, as a digital controller applies them).
"""

from __future__ import annotations

import warnings

import numpy as np

from symgen.build.compiler import compile_kernels
from symgen.errors import SymgenError
from symgen.formulations.tree.options import Options
from symgen.generate import generate
from symgen.model import Model
from symgen.simulation.driving import Forces, Progress, StepDoubling, forces_function
from symgen.simulation.trajectory import Trajectory

Array = np.ndarray
#: The methods of this module and their step kernels.
LOOP_METHODS = {"loop_rk4": "loop_step_rk4", "loop_trapezoidal": "loop_step"}


def kernel_names(model: Model, method: str) -> list[str]:
    """The kernels the run of ``method`` calls."""
    names = [LOOP_METHODS[method], "loop_project", "loop_constraints", "loop_jacobian",
             "energy", "constrained_forward_dynamics"]
    return names + (["element_forces"] if model.force_elements else [])


def _kernels(model: Model, method: str, dt: float | None, progress: bool | None):
    names = kernel_names(model, method)
    with warnings.catch_warnings():  # the force elements are added by the step kernels
        warnings.filterwarnings("ignore", message=".*leave out the force elements")
        options = Options(step=dt) if method == "loop_trapezoidal" and dt else Options()
        return compile_kernels(generate(model, names, options=options), vectorize=None,
                               progress=progress)


def simulate_loop_steps(model: Model, duration: float, dt: float | None, q0: Array,
                        v0: Array, tau: Forces, method: str, params, record_every: int,
                        progress: bool | None, tolerance: float = 1e-10, kernels=None
                        ) -> Trajectory:
    """The trajectory of ``model`` (with loop joints) from (q0, v0) by the generated step
    of ``method`` at the fixed step ``dt``, or (``loop_rk4`` with ``dt`` None) at steps
    chosen by step doubling (module docstring). The start is closed by ``loop_project``;
    the multipliers start at zero. ``kernels``: compiled kernels to use (they must hold
    :func:`kernel_names`' functions), else generated and compiled (cached)."""
    if dt is not None:
        steps = int(round(duration / dt))
        if steps < 1 or abs(steps * dt - duration) > 1e-9 * duration:
            raise SymgenError(f"simulate: duration {duration} is not a whole number of steps "
                              f"dt = {dt}")
    elif method != "loop_rk4":
        raise SymgenError(f"simulate: method {method!r} takes a fixed step: give dt")
    lib = _kernels(model, method, dt, progress) if kernels is None else kernels
    missing = [name for name in kernel_names(model, method) if not hasattr(lib, name)]
    if missing:
        raise SymgenError(f"simulate: the given kernels lack {', '.join(missing)} (method "
                          f"{method!r})")
    extra = () if params is None else (np.asarray(params, float),)

    def call(name: str, *args):
        return [np.asarray(x) for x in _as_tuple(getattr(lib, name)(*args, *extra))]

    forces = forces_function(tau, model.nv)
    has_elements = bool(model.force_elements)
    q, v = closed_start(call, q0, v0)
    a = call("constrained_forward_dynamics", q, v, forces(0.0, q, v))[0]
    lam = np.zeros(call("loop_constraints", q)[0].size)  # every kept row (module docstring)
    step = LOOP_METHODS[method]
    clock = Progress(model.name, duration, progress)

    # the coordinates whose rate is v (vector joints): the work of a force held over a step
    # is τ·Δq there, exactly
    vector_v = [i for j in model.independent_joints if j.nq == j.nv
                for i in range(model.nv)[model.v_slices[j.name]]]
    vector_q = [i for j in model.independent_joints if j.nq == j.nv
                for i in range(model.nq)[model.q_slices[j.name]]]
    other_v = [i for i in range(model.nv) if i not in set(vector_v)]

    def damper_power(q_: Array, v_: Array) -> float:
        """The dampers' power: the elements' forces less their rate-free part, whose
        potential the energy holds."""
        if not has_elements:
            return 0.0
        damping = call("element_forces", q_, v_)[0] - call("element_forces", q_,
                                                           np.zeros_like(v_))[0]
        return float(damping @ v_)

    def force_work(tau_: Array, q_a: Array, v_a: Array, q_b: Array, v_b: Array, h: float
                   ) -> float:
        """The work of τ held from (q_a, v_a) to (q_b, v_b): τ·Δq on the vector joints,
        the trapezoidal rule of τ·v on the others (quaternion joints)."""
        exact = float(tau_[vector_v] @ (q_b[vector_q] - q_a[vector_q]))
        return exact + 0.5 * h * float(tau_[other_v] @ (v_a[other_v] + v_b[other_v]))

    def residuals(q_: Array, v_: Array) -> tuple[float, float]:
        phi = call("loop_constraints", q_)[0]
        jac = call("loop_jacobian", q_)[0].reshape(phi.size, model.nv)
        return (float(np.max(np.abs(phi), initial=0.0)),
                float(np.max(np.abs(jac @ v_), initial=0.0)))

    def advance(t: float, h: float, q_: Array, v_: Array, a_: Array, lam_: Array
                ) -> tuple[Array, Array, Array, Array, float]:
        """One step from t of size h; the work τ did over it."""
        tau_now = forces(t, q_, v_)
        if step == "loop_step":
            q1, v1, a1, lam1 = call(step, q_, v_, a_, lam_, tau_now)
        else:
            q1, v1, lam1 = call(step, q_, v_, lam_, tau_now, np.array([h]))
            a1 = a_
        if not (np.all(np.isfinite(q1)) and np.all(np.isfinite(v1))):
            raise SymgenError(f"simulate: the state is not finite at t = {t + h:.6g} s; "
                              "try a smaller dt")
        return q1, v1, a1, lam1, force_work(tau_now, q_, v_, q1, v1, h)

    record = [(0.0, q, v, *residuals(q, v), float(np.sum(call("energy", q, v)[0])), 0.0)]
    work, t, n = 0.0, 0.0, 0
    control = StepDoubling(duration, tolerance) if dt is None else None
    while t < duration * (1 - 1e-12):
        if control is None:
            before = damper_power(q, v)
            q, v, a, lam, done = advance(t, dt, q, v, a, lam)
            done += 0.5 * dt * (before + damper_power(q, v))  # the trapezoidal rule, O(h²)
            t = (n + 1) * dt
        else:
            h = control.step(t)
            q1, v1, _, _, _ = advance(t, h, q, v, a, lam)
            qh, vh, _, lamh, w1 = advance(t, h / 2, q, v, a, lam)
            q2, v2, _, lam2, w2 = advance(t + h / 2, h / 2, qh, vh, a, lamh)
            if not control.accept(t, np.r_[q, v], np.r_[q1, v1], np.r_[q2, v2]):
                continue  # retried from the same state with a shorter step
            dampers = h / 6 * (damper_power(q, v) + 4 * damper_power(qh, vh)
                               + damper_power(q2, v2)) if has_elements else 0.0  # Simpson
            q, v, lam, done, t = q2, v2, lam2, w1 + w2 + dampers, t + h
        work += done
        n += 1
        if n % record_every == 0 or t >= duration * (1 - 1e-12):
            record.append((t, q, v, *residuals(q, v), float(np.sum(call("energy", q, v)[0])),
                           work))
        clock.report(t)
    columns = [np.array(c) for c in zip(*record, strict=True)]
    if dt is not None:
        rule = f"generated {step}, fixed step {dt:g} s"
        notes = []
    else:
        rule = (f"generated {step}, steps by step doubling, tolerance {tolerance:g}, "
                f"{n} steps")
        notes = [f"{control.rejected} step(s) rejected and retried"]
    if tau is not None:
        rule += ", tau held over each step"
    if has_elements and dt is not None:
        notes.append("the dampers' work by the trapezoidal rule on the step ends (O(h²))")
    return Trajectory(model, f"{method} ({rule})", *columns, notes)


#: Projections of the start (each two Newton steps) and the residual they must reach.
START_PROJECTIONS = 10
START_TOLERANCE = 1e-12


def closed_start(call, q0: Array, v0: Array) -> tuple[Array, Array]:
    """(q0, v0) projected by ``loop_project`` until |Φ| ≤ :data:`START_TOLERANCE` (a start
    far from closing takes several), else a one-line error."""
    q, v = np.asarray(q0, float), np.asarray(v0, float)
    for _ in range(START_PROJECTIONS):
        q, v, _ = call("loop_project", q, v, np.zeros_like(v))
        residual = float(np.max(np.abs(call("loop_constraints", q)[0]), initial=0.0))
        if residual <= START_TOLERANCE:
            return q, v
    raise SymgenError(f"simulate: the loops could not be closed near q0 (|phi| = "
                      f"{residual:.2e} after {2 * START_PROJECTIONS} Newton steps); start "
                      "closer to an assembled configuration (loop_assemble)")


def _as_tuple(out) -> tuple:
    return out if isinstance(out, tuple) else (out,)


__all__ = ["LOOP_METHODS", "closed_start", "kernel_names", "simulate_loop_steps"]
