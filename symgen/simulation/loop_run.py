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
from symgen.simulation.driving import Forces, Progress, forces_function
from symgen.simulation.trajectory import Trajectory

Array = np.ndarray
#: The methods of this module and their step kernels.
LOOP_METHODS = {"loop_rk4": "loop_step_rk4", "loop_trapezoidal": "loop_step"}


def _kernels(model: Model, method: str, dt: float):
    names = [LOOP_METHODS[method], "loop_project", "loop_constraints", "loop_jacobian",
             "energy", "constrained_forward_dynamics"]
    if model.force_elements:
        names.append("element_forces")
    with warnings.catch_warnings():  # the force elements are added by the step kernels
        warnings.filterwarnings("ignore", message=".*leave out the force elements")
        options = Options(step=dt) if method == "loop_trapezoidal" else Options()
        return compile_kernels(generate(model, names, options=options), vectorize=None)


def simulate_loop_steps(model: Model, duration: float, dt: float, q0: Array, v0: Array,
                        tau: Forces, method: str, params, record_every: int,
                        progress: bool | None) -> Trajectory:
    """The trajectory of ``model`` (with loop joints) from (q0, v0) by the generated step
    of ``method`` at the fixed step ``dt`` (module docstring). The start is closed by
    ``loop_project``; the multipliers start at zero."""
    steps = int(round(duration / dt))
    if steps < 1 or abs(steps * dt - duration) > 1e-9 * duration:
        raise SymgenError(f"simulate: duration {duration} is not a whole number of steps "
                          f"dt = {dt}")
    lib = _kernels(model, method, dt)
    extra = () if params is None else (np.asarray(params, float),)

    def call(name: str, *args):
        return [np.asarray(x) for x in _as_tuple(getattr(lib, name)(*args, *extra))]

    forces = forces_function(tau, model.nv)
    has_elements = bool(model.force_elements)
    q, v = _closed_start(call, q0, v0)
    a = call("constrained_forward_dynamics", q, v, forces(0.0, q, v))[0]
    lam = np.zeros(call("loop_constraints", q)[0].size)  # every kept row (module docstring)
    step = LOOP_METHODS[method]
    step_size = np.array([dt])
    clock = Progress(model.name, duration, progress)

    def power(q_: Array, v_: Array, tau_: Array) -> float:
        """τ·v plus the dampers' power (the elements' forces less their rate-free part,
        whose potential the energy holds)."""
        out = float(tau_ @ v_)
        if has_elements:
            damping = call("element_forces", q_, v_)[0] - call("element_forces", q_,
                                                               np.zeros_like(v_))[0]
            out += float(damping @ v_)
        return out

    def residuals(q_: Array, v_: Array) -> tuple[float, float]:
        phi = call("loop_constraints", q_)[0]
        jac = call("loop_jacobian", q_)[0].reshape(phi.size, model.nv)
        return (float(np.max(np.abs(phi), initial=0.0)),
                float(np.max(np.abs(jac @ v_), initial=0.0)))

    tau_now = forces(0.0, q, v)
    record = [(0.0, q, v, *residuals(q, v), float(np.sum(call("energy", q, v)[0])), 0.0)]
    work = 0.0
    for n in range(1, steps + 1):
        t = (n - 1) * dt
        tau_now = forces(t, q, v)
        before = power(q, v, tau_now)
        if step == "loop_step":
            q, v, a, lam = call(step, q, v, a, lam, tau_now)
        else:
            q, v, lam = call(step, q, v, lam, tau_now, step_size)
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            raise SymgenError(f"simulate: the state is not finite at t = {n * dt:.6g} s "
                              f"(step {n}); try a smaller dt")
        work += 0.5 * dt * (before + power(q, v, tau_now))  # trapezoidal rule, O(dt²)
        if n % record_every == 0 or n == steps:
            record.append((n * dt, q, v, *residuals(q, v),
                           float(np.sum(call("energy", q, v)[0])), work))
        clock.report(n * dt)
    columns = [np.array(c) for c in zip(*record, strict=True)]
    rule = (f"generated {step}, fixed step {dt:g} s" +
            (", tau held over each step" if tau is not None else ""))
    notes = ["work by the trapezoidal rule on the step ends (O(dt²))"] if (
        tau is not None or has_elements) else []
    return Trajectory(model, f"{method} ({rule})", *columns, notes)


#: Projections of the start (each two Newton steps) and the residual they must reach.
START_PROJECTIONS = 10
START_TOLERANCE = 1e-12


def _closed_start(call, q0: Array, v0: Array) -> tuple[Array, Array]:
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


__all__ = ["LOOP_METHODS", "simulate_loop_steps"]
