"""``symgen.simulate``: a trajectory of a model from its generated kernels.

Open trees ("tree"): the accelerations of the generated forward dynamics, by adaptive
Dormand-Prince 5(4) steps or the classical fourth-order Runge-Kutta method at a fixed step,
on (q, v) (q advanced by its rates, :mod:`symgen.simulation.rates`; quaternions renormalised
after each step).

Closed loops in joint coordinates: by default the generated step
(:mod:`symgen.simulation.loop_run`, ``"loop_rk4"``); with ``"projected"`` the same method
driven from Python here, with the same step rules as the trees: the accelerations of the
augmented-Lagrangian iteration (García de Jalón & Bayo 1994, eq. 5.48–5.51), followed after
every step by the mass-orthogonal projection of the positions onto Φ(q) = 0 and of the
velocities onto Φ_q v = 0 (Bayo & Ledesma 1996): the leading matrix M + αΦ_qᵀΦ_q is positive
definite at singular positions and with redundant constraints, and the projections keep the
drift at rounding level (:mod:`symgen.simulation.constrained`). Minimal coordinates
(:mod:`symgen.simulation.embedded_run`) and natural coordinates
(:mod:`symgen.simulation.natural_run`) on request.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from symgen.build.compiler import compile_kernels
from symgen.errors import SymgenError
from symgen.generate import generate
from symgen.io import load
from symgen.model import Model
from symgen.registry import all_kernels
from symgen.simulation.constrained import ConstrainedSolver
from symgen.simulation.driving import BRANCH_FRACTION, Forces, Progress, forces_function
from symgen.simulation.embedded_run import simulate_embedded
from symgen.simulation.loop_run import LOOP_METHODS, simulate_loop_steps
from symgen.simulation.natural_run import NATURAL_METHODS, simulate_natural
from symgen.simulation.rates import ConfigurationRates
from symgen.simulation.trajectory import Trajectory

Array = np.ndarray
METHODS = ("auto", "tree", "projected", *LOOP_METHODS, "embedded", *NATURAL_METHODS)
#: Position projection: Newton iterations and their stopping residual (m or rad).
PROJECTION_ITERATIONS = 6
PROJECTION_TOLERANCE = 1e-13
#: Default local error tolerance of the adaptive steps (relative and absolute).
TOLERANCE = 1e-10


def _kernel_names(model: Model, method: str) -> list[str]:
    names = ["energy", "integrate"]
    if method == "tree":
        names.append("forward_dynamics")
    else:
        names += ["mass_matrix", "bias_forces", "loop_constraints", "loop_jacobian",
                  "loop_bias"]
    if model.force_elements and "element_forces" in all_kernels():
        names.append("element_forces")
    return names


class _Dynamics:
    """The compiled kernels of one model and the right-hand side of its motion."""

    def __init__(self, model: Model, method: str, lib, params) -> None:
        self.model, self.method, self.lib = model, method, lib
        self.params = params
        self.rates = ConfigurationRates(model)
        self.loops = method == "projected"
        self.multipliers: Array | None = None
        self.has_elements = bool(model.force_elements)
        # the energy kernel gives [kinetic, potential, elements' potential] (docs/api.md)
        self.elastic = any(o.shape == (3,) for o in getattr(lib.energy, "outputs", ()))
        if self.has_elements and not hasattr(lib, "element_forces"):
            from symgen.reference.forces import element_forces

            self._reference_elements = element_forces
        else:
            self._reference_elements = None

    def call(self, name: str, *args):
        function = getattr(self.lib, name)
        return function(*args, self.params) if self.params is not None else function(*args)

    def elements(self, q: Array, v: Array) -> Array:
        """Q(q, v) of the force elements (zeros without)."""
        if not self.has_elements:
            return np.zeros(self.model.nv)
        if self._reference_elements is not None:
            return np.asarray(self._reference_elements(self.model, q, v))
        return np.asarray(self.call("element_forces", q, v))

    def acceleration(self, q: Array, v: Array, tau: Array) -> Array:
        applied = tau + self.elements(q, v)
        if not self.loops:
            return np.asarray(self.call("forward_dynamics", q, v, applied))
        mass = np.asarray(self.call("mass_matrix", q))
        rhs = applied - np.asarray(self.call("bias_forces", q, v))
        solver = ConstrainedSolver(mass, np.asarray(self.call("loop_jacobian", q)))
        a, self.multipliers = solver.solve(rhs, np.asarray(self.call("loop_bias", q, v)),
                                           self.multipliers)
        return a

    def energy(self, q: Array, v: Array) -> float:
        return float(np.sum(self.call("energy", q, v)))

    def nonconservative_power(self, q: Array, v: Array, tau: Array) -> float:
        """Power of what :meth:`energy` does not hold: τ, and the elements (their damping
        only when the energy holds their potential)."""
        power = float(tau @ v)
        if self.has_elements:
            forces = self.elements(q, v)
            if self.elastic:
                forces = forces - self.elements(q, np.zeros_like(v))
            power += float(forces @ v)
        return power

    # ---------------------------------------------------------------- projections
    def project(self, q: Array, v: Array) -> tuple[Array, Array, float, float]:
        """q on Φ = 0 and v on Φ_q v = 0, mass-orthogonally; returns the residuals after."""
        if not self.loops:
            return q, v, 0.0, 0.0
        for _ in range(PROJECTION_ITERATIONS):
            phi = np.asarray(self.call("loop_constraints", q))
            if float(np.max(np.abs(phi), initial=0.0)) <= PROJECTION_TOLERANCE:
                break
            solver = self._solver(q)
            step, _ = solver.solve(np.zeros(self.model.nv), phi)
            q = np.asarray(self.call("integrate", q, step, 1.0))
        solver = self._solver(q)
        v, _ = solver.solve(solver.mass @ v, np.zeros(solver.jacobian.shape[0]))
        phi = np.asarray(self.call("loop_constraints", q))
        return (q, v, float(np.max(np.abs(phi), initial=0.0)),
                float(np.max(np.abs(solver.jacobian @ v), initial=0.0)))

    def _solver(self, q: Array) -> ConstrainedSolver:
        return ConstrainedSolver(np.asarray(self.call("mass_matrix", q)),
                                 np.asarray(self.call("loop_jacobian", q)))


def simulate(model: Model | str | Path, duration: float, dt: float | None = None,
             q0: Sequence[float] | None = None, v0: Sequence[float] | None = None,
             tau: Forces = None, method: str = "auto", tolerance: float = TOLERANCE,
             params=None, record_every: int = 1, progress: bool | None = None,
             kernels=None) -> Trajectory:
    """Simulate ``model`` (a :class:`Model` or a model file) for ``duration`` s from (``q0``,
    ``v0``) (defaults: the neutral configuration, closed by the loop projection, at rest),
    under the joint forces ``tau`` (None, a constant nv-vector or a function ``tau(t, q,
    v)``, e.g. a controller) and the model's force elements.

    Steps: with ``dt`` None (the default), adaptive steps keeping the local error below
    ``tolerance`` (relative and absolute, per coordinate); with ``dt``, fixed steps.
    ``method``: ``"auto"`` (``"tree"`` for open trees, ``"loop_rk4"`` for closed loops);
    ``"tree"``: the generated forward dynamics by Dormand-Prince 5(4) steps, or the
    classical Runge-Kutta method at the fixed ``dt``; ``"projected"``: the same for closed
    loops, driven from Python (module docstring); ``"loop_rk4"``: the generated closed-loop
    Runge-Kutta step in C, by step doubling or at the fixed ``dt``; ``"loop_trapezoidal"``:
    the generated index-3 augmented-Lagrangian trapezoidal step at the fixed ``dt``
    (:mod:`symgen.simulation.loop_run`); ``"embedded"``: minimal coordinates with
    re-selection of the independent ones, fixed ``dt``
    (:mod:`symgen.simulation.embedded_run`); ``"natural"`` (or ``"natural_rk4"``): the
    compiled natural-coordinate Runge-Kutta step ``nc_step_rk4``, by step doubling or at the
    fixed ``dt``, and ``"natural_trapezoidal"``: the natural trapezoidal step ``nc_step`` at
    the fixed ``dt`` (default 1 ms), the trajectory read back in joint coordinates
    (:mod:`symgen.simulation.natural_run`; 1-DOF, spherical and free joints). The initial
    state is projected onto the constraints. ``record_every`` keeps every k-th step.
    ``progress``: lines on stderr (None: when the run takes longer than a few seconds; the
    same for the compilation of its kernels).
    ``kernels``:
    compiled kernels of the model to reuse (``symgen.compile_kernels``; for the closed-loop
    steps they must hold ``loop_run.kernel_names(model, method)``; not for ``"embedded"``,
    which generates its own per choice of independent coordinates), else they are generated
    and compiled (cached across calls). Returns a :class:`Trajectory`."""
    if not isinstance(model, Model):
        model = load(model)
    if not duration > 0 or not np.isfinite(duration) or (
            dt is not None and not (dt > 0 and np.isfinite(dt))):
        raise SymgenError(f"simulate: duration and dt must be positive (got {duration}, {dt})")
    if not tolerance > 0:
        raise SymgenError(f"simulate: tolerance must be positive (got {tolerance})")
    if method not in METHODS:
        raise SymgenError(f"simulate: unknown method {method!r} (known: {', '.join(METHODS)})")
    if method in NATURAL_METHODS:
        return simulate_natural(model, duration, dt, q0, v0, tau, method, params,
                                record_every, progress, kernels, tolerance)
    if method == "auto":
        method = "loop_rk4" if model.loop_joints else "tree"
    if method in LOOP_METHODS or method == "embedded":
        if not model.loop_joints:
            raise SymgenError(f"simulate: method {method!r} integrates closed loops; model "
                              f"{model.name!r} has none (use 'tree')")
        if dt is None and method != "loop_rk4":
            raise SymgenError(f"simulate: method {method!r} takes a fixed step: give dt")
        q_start, v_start = _start(model, q0, v0)
        if method == "embedded":
            if kernels is not None:
                raise SymgenError("simulate: method 'embedded' generates its kernels for each "
                                  "choice of independent coordinates; kernels= is not used")
            return simulate_embedded(model, duration, dt, q_start, v_start, tau, params,
                                     record_every, progress)
        return simulate_loop_steps(model, duration, dt, q_start, v_start, tau, method, params,
                                   record_every, progress, tolerance, kernels)
    if method == "tree" and model.loop_joints:
        raise SymgenError(f"model {model.name!r} has loop joints: method 'tree' integrates "
                          "open trees; use 'projected' (the default)")
    if kernels is None:
        with warnings.catch_warnings():  # simulate adds the force elements itself
            warnings.filterwarnings("ignore", message=".*leave out the force elements")
            kernels = compile_kernels(generate(model, _kernel_names(model, method)),
                                      vectorize=None, progress=progress)
    lib = kernels
    dyn = _Dynamics(model, method, lib, params)
    forces = forces_function(tau, model.nv)
    q, v = _start(model, q0, v0)
    q = dyn.rates.normalise(q)
    q, v, r_q, r_v = dyn.project(q, v)
    record = [(0.0, q, v, r_q, r_v, dyn.energy(q, v), 0.0)]
    clock = Progress(model.name, duration, progress)
    if dt is not None:
        steps = int(round(duration / dt))
        if steps < 1 or abs(steps * dt - duration) > 1e-9 * duration:
            raise SymgenError(f"simulate: duration {duration} is not a whole number of steps "
                              f"dt = {dt}")
        times = [n * dt for n in range(steps + 1)]
    work, t, n, rejected = 0.0, 0.0, 0, 0
    h = dt if dt is not None else min(duration, 1e-4)
    while t < duration * (1 - 1e-12):
        if dt is not None:
            h = times[n + 1] - times[n]
            q_new, v_new, power = _rk4_step(dyn, forces, t, q, v, h)
        else:
            h = min(h, duration - t)
            q_new, v_new, power, error = _dopri_step(dyn, forces, t, q, v, h, tolerance)
            if not np.isfinite(error) or error > 1.0:
                rejected += 1  # retried from the same (t, q, v): no seed from the future
                h *= 0.2 if not np.isfinite(error) else max(0.2, 0.9 * error ** -0.2)
                if h < 1e-14 * max(1.0, duration):
                    raise SymgenError(f"simulate: the step size underflowed at t = {t:.6g} s; "
                                      "the motion may be singular there")
                continue
        work += h * power
        q_step = dyn.rates.normalise(q_new)
        q_new, v, r_q, r_v = dyn.project(q_step, v_new)
        _check_branch(model, q, q_step, q_new, t + h)
        q = q_new
        t, n = (times[n + 1] if dt is not None else t + h), n + 1
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            raise SymgenError(f"simulate: the state is not finite at t = {t:.6g} s "
                              f"(step {n}); try a smaller dt")
        if dt is None:
            h *= min(5.0, 0.9 * error ** -0.2) if error > 0 else 5.0
        if n % record_every == 0 or t >= duration * (1 - 1e-12):
            record.append((t, q, v, r_q, r_v, dyn.energy(q, v), work))
        clock.report(t)
    columns = list(zip(*record, strict=True))
    rule = (f"classical Runge-Kutta, fixed step {dt:g} s" if dt is not None else
            f"Dormand-Prince 5(4), tolerance {tolerance:g}, {n} steps")
    notes = [f"{rejected} step(s) rejected and retried"] if dt is None else []
    return Trajectory(model, f"{method} ({rule})", np.array(columns[0]), np.array(columns[1]),
                      np.array(columns[2]), np.array(columns[3]), np.array(columns[4]),
                      np.array(columns[5]), np.array(columns[6]), notes)


def _start(model: Model, q0, v0) -> tuple[Array, Array]:
    """(q0, v0) as arrays, defaults filled in (the neutral configuration, rest), checked."""
    q = np.asarray(model.neutral_configuration if q0 is None else q0, dtype=float).copy()
    v = np.zeros(model.nv) if v0 is None else np.asarray(v0, dtype=float).copy()
    if q.shape != (model.nq,) or v.shape != (model.nv,):
        raise SymgenError(f"simulate: q0 needs nq = {model.nq} values and v0 nv = {model.nv}")
    return q, v




def _check_branch(model: Model, before: Array, stepped: Array, projected: Array,
                  t: float) -> None:
    """A one-line error when the projection after a step moved q by more than
    :data:`BRANCH_FRACTION` of the step's motion: the loops were closed on another branch
    (e.g. a step too long for a fast motion), which must not pass silently."""
    if not model.loop_joints:
        return
    motion = float(np.max(np.abs(stepped - before), initial=0.0))
    correction = float(np.max(np.abs(projected - stepped), initial=0.0))
    if correction > BRANCH_FRACTION * motion + 1e-8:
        raise SymgenError(
            f"simulate: at t = {t:.6g} s closing the loops moved q by {correction:.3g} after a "
            f"step that moved it by {motion:.3g}: the step left the assembly branch; use a "
            "smaller dt (or the adaptive default)")


#: Dormand & Prince (1980) 5(4): nodes, stage coefficients, 5th- and 4th-order weights
#: (Hairer, Nørsett & Wanner, Solving ODEs I, 2nd ed., Table II.5.2).
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A = ((), (1 / 5,), (3 / 40, 9 / 40), (44 / 45, -56 / 15, 32 / 9),
      (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
      (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
      (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84))
_B5 = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
_B4 = (5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40)


def _derivative(dyn: _Dynamics, forces, t: float, q: Array, v: Array
                ) -> tuple[Array, Array, float]:
    """(q̇, v̇) at a stage and the power of the non-conservative forces there."""
    q = dyn.rates.normalise(q)  # the kernels take unit quaternions
    tau = forces(t, q, v)
    return dyn.rates.rate(q, v), dyn.acceleration(q, v, tau), dyn.nonconservative_power(
        q, v, tau)


def _dopri_step(dyn: _Dynamics, forces, t: float, q: Array, v: Array, h: float,
                tolerance: float) -> tuple[Array, Array, float, float]:
    """One Dormand-Prince 5(4) step: the 5th-order (q, v), the mean power, and the error
    estimate's RMS norm relative to tolerance·(1 + |y|) (accept when ≤ 1)."""
    kq, kv, kp = [], [], []
    for i in range(7):
        qs = q + h * sum((a * k for a, k in zip(_A[i], kq, strict=False)), np.zeros_like(q))
        vs = v + h * sum((a * k for a, k in zip(_A[i], kv, strict=False)), np.zeros_like(v))
        dq, dv, p = _derivative(dyn, forces, t + _C[i] * h, qs, vs)
        kq.append(dq)
        kv.append(dv)
        kp.append(p)
    q5 = q + h * sum(b * k for b, k in zip(_B5, kq, strict=True))
    v5 = v + h * sum(b * k for b, k in zip(_B5, kv, strict=True))
    dq_err = h * sum((b5 - b4) * k for b5, b4, k in zip(_B5, _B4, kq, strict=True))
    dv_err = h * sum((b5 - b4) * k for b5, b4, k in zip(_B5, _B4, kv, strict=True))
    scale = tolerance * (1.0 + np.maximum(np.abs(np.r_[q, v]), np.abs(np.r_[q5, v5])))
    error = float(np.sqrt(np.mean((np.r_[dq_err, dv_err] / scale) ** 2)))
    power = float(sum(b * p for b, p in zip(_B5, kp, strict=True)))
    return q5, v5, power, error


def _rk4_step(dyn: _Dynamics, forces, t: float, q: Array, v: Array, dt: float
              ) -> tuple[Array, Array, float]:
    """One classical Runge-Kutta step of (q̇, v̇) = (rate(q, v), a(q, v)); the power of the
    non-conservative forces with the same weights."""
    def derivative(time_: float, qs: Array, vs: Array) -> tuple[Array, Array, float]:
        return _derivative(dyn, forces, time_, qs, vs)

    k1q, k1v, p1 = derivative(t, q, v)
    k2q, k2v, p2 = derivative(t + dt / 2, q + dt / 2 * k1q, v + dt / 2 * k1v)
    k3q, k3v, p3 = derivative(t + dt / 2, q + dt / 2 * k2q, v + dt / 2 * k2v)
    k4q, k4v, p4 = derivative(t + dt, q + dt * k3q, v + dt * k3v)
    return (q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q),
            v + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v),
            (p1 + 2 * p2 + 2 * p3 + p4) / 6)


__all__ = ["METHODS", "simulate"]
