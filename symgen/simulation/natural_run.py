"""``symgen.simulate(..., method="natural" | "natural_rk4" | "natural_trapezoidal")``: a
trajectory from the generated natural-coordinate step kernels, returned in the model's joint
coordinates.

The model is integrated in García de Jalón & Bayo's natural coordinates (1994, ch. 2: the
Cartesian coordinates of points and unit vectors, constant mass matrix) by one compiled
step kernel:

- ``"natural"`` (the natural-coordinate default) or ``"natural_rk4"``: ``nc_step_rk4``, the
  classical Runge-Kutta method on the index-1 equations, each stage's accelerations by the
  augmented-Lagrangian iteration (eq. 5.48-5.51) carried from stage to stage and step to
  step (the step's ``lam``), with mass-orthogonal projections onto the constraints after
  each step (Hairer & Wanner 1996, §VII.2): fourth order, through singular positions and
  with redundant constraints; explicit (h·ω ≲ 2.8). It takes the step as an input, so
  without ``dt`` the steps are chosen by step doubling (:class:`.driving.StepDoubling`).
  With a controller, the first stage is recomputed by ``nc_accelerations`` at the step's
  start with the step's τ;
- ``"natural_trapezoidal"``: ``nc_step``, the index-3 augmented Lagrangian with the
  trapezoidal rule (§8.5, eq. 8.124-8.135): A-stable (for stiff force elements), second
  order, robust through singular positions and with redundant constraints; it bakes the
  step h (``NaturalOptions.step``, which also sizes its penalty), so it is generated for the
  fixed h of the run (compiled modules are cached on disk).

The start (q0, v0)
in joint coordinates becomes a natural state by :func:`symgen.natural.natural_state`; every
step reads the joint coordinates back (:mod:`.natural_readback`): the compiled
``nc_joint_values`` the 1-DOF joints' angles and displacements (angles continued from the
previous step's, so they are unwrapped), and for spherical and free joints the bodies' world
poses of the compiled ``nc_body_poses`` the joint's quaternion (its sign continued from the
previous step's) and position, their exact rates (the poses are affine in the natural
coordinates: [Ṙ | ṗ] = D q̇, D the forward-mode derivative of the kernel's program) the
body-frame angular and linear velocity of the child relative to the parent. The other joints
of the spanning tree (universal, cylindrical, planar) are refused with a one-line error, as
is a joint force on a spherical or free joint (the natural kernels take forces on 1-DOF
joints only).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from symgen.build.compiler import compile_kernels
from symgen.errors import SymgenError
from symgen.formulations.natural.kernels import NaturalOptions, natural_model
from symgen.formulations.natural.model import NaturalModel
from symgen.formulations.natural.penalty import REFERENCE_STEP
from symgen.formulations.natural.registration import NaturalContext
from symgen.generate import generate
from symgen.model import Model
from symgen.natural import natural_state
from symgen.simulation.driving import Progress, StepDoubling, forces_function
from symgen.simulation.natural_readback import POSE_JOINTS, JointReadback
from symgen.simulation.trajectory import Trajectory

Array = np.ndarray
#: The natural-coordinate methods of :func:`symgen.simulate` and their step kernels.
NATURAL_METHODS = {"natural": "nc_step_rk4", "natural_rk4": "nc_step_rk4",
                   "natural_trapezoidal": "nc_step"}
#: The trapezoidal step when ``dt`` is None (s): the penalty rule's reference step,
#: ``NaturalOptions``' default (shortened to the largest step that divides the duration).
DEFAULT_STEP = REFERENCE_STEP
#: Default local error tolerance of the adaptive RK4 runs (relative and absolute).
TOLERANCE = 1e-10
#: A note names the largest recorded max |Φ| above this (Φ: squared lengths, m², and dot
#: products of unit vectors): the motion left the constraints.
DRIFT_NOTE = 1e-6
_RULES = {"nc_step": "index-3 augmented-Lagrangian trapezoidal step",
          "nc_step_rk4": "index-1 Runge-Kutta 4 step with projections"}


def natural_kernel_names(model: Model, method: str) -> list[str]:
    """The kernels a natural-coordinate run calls: ``nc_joint_values`` reads the 1-DOF joints
    back (it is not generated for a mechanism without one, e.g. the spinning top),
    ``nc_body_poses`` the spherical and free joints (:mod:`.natural_readback`)."""
    names = [NATURAL_METHODS[method], "nc_accelerations", "nc_constraints", "nc_jacobian",
             "nc_energy", "nc_joint_values"]
    if any(j.type in POSE_JOINTS for j in model.joints):
        names.append("nc_body_poses")
    if model.force_elements:
        names.append("nc_forces")  # the dampers' power
    return names


def _step_size(duration: float, dt: float | None, baked: float | None) -> tuple[float, int]:
    """(h, number of steps): ``dt``, else the kernels' baked step, else :data:`DEFAULT_STEP`
    shortened to divide ``duration``."""
    if dt is None and baked is None:
        steps = max(1, math.ceil(duration / DEFAULT_STEP * (1 - 1e-12)))
        return duration / steps, steps
    h = dt if dt is not None else baked
    steps = int(round(duration / h))
    if steps < 1 or abs(steps * h - duration) > 1e-9 * duration:
        raise SymgenError(f"simulate: duration {duration} is not a whole number of steps "
                          f"dt = {h}")
    return h, steps


def _force_parameters(model: Model, nm: NaturalModel, params) -> Array:
    """The values of the natural model's runtime parameters (the force elements') from
    ``params`` (the model's parameters, declaration order; None: the defaults). The other
    parameters are baked into the natural model at their defaults."""
    values = {p.name: float(p.default) for p in model.parameters}
    if params is not None:
        given = np.asarray(params, dtype=float).reshape(-1)
        if given.shape != (len(model.parameters),):
            raise SymgenError(f"simulate: params has {given.size} values, the model "
                              f"{len(model.parameters)}")
        baked = [p.name for p, x in zip(model.parameters, given, strict=True)
                 if p.name not in nm.force_parameters and x != float(p.default)]
        if baked:
            raise SymgenError(
                f"simulate: the natural-coordinate methods bake parameter {baked[0]!r} into "
                "the natural model (only the force elements' parameters stay runtime); pass "
                "model.resolve({...}) with its value instead")
        values.update(zip((p.name for p in model.parameters), given.tolist(), strict=True))
    return np.array([values[name] for name in nm.force_parameters], dtype=float)


def _actuators(nm: NaturalModel, force_params: Array) -> list[tuple[int, float, float, float]]:
    """(position in ``nc_joint_values``, force F, sign, offset) of each joint actuator on an
    angle: ``nc_energy`` holds its potential −Fθ with θ read by atan2 (wrapped to a turn),
    while its force F∂θ/∂q is smooth; the run's energy takes the unwrapped θ."""
    import sympy

    from symgen.model.elements import JointActuator

    values = dict(zip(nm.force_parameter_symbols, force_params.tolist(), strict=True))
    position = {name: i for i, name in enumerate(nm.actuated)}
    out = []
    for e in nm.force_elements:
        if isinstance(e, JointActuator) and nm.joint_coordinates[e.joint].kind == "angle":
            jc = nm.joint_coordinates[e.joint]
            force = float(sympy.sympify(e.force).subs(values))
            out.append((position[e.joint], force, jc.sign, jc.offset))
    return out


class _Kernels:
    """The compiled natural kernels of a run, called with the run's fixed inputs (the force
    parameters) appended where a kernel declares them."""

    def __init__(self, lib, step: str, force_params: Array, nm: NaturalModel) -> None:
        def fixed(name: str) -> tuple[Array, ...]:
            inputs = [s.name for s in lib[name].inputs]
            return (force_params,) if "params" in inputs else ()

        self.step_fn, self.force_params = lib[step], force_params
        self.step_inputs = [s.name for s in lib[step].inputs]
        self.accelerations, self.acc_fixed = lib.nc_accelerations, fixed("nc_accelerations")
        self.energy_fn, self.energy_fixed = lib.nc_energy, fixed("nc_energy")
        self.constraints, self.jacobian = lib.nc_constraints, lib.nc_jacobian
        self.forces = lib["nc_forces"] if "nc_forces" in lib.functions else None
        self.forces_fixed = fixed("nc_forces") if self.forces is not None else ()
        self.actuators = _actuators(nm, force_params)

    def step(self, state: tuple[Array, ...], tau: Array, h: float) -> tuple[Array, ...]:
        """(q, q̇, q̈, λ) after one step of size h (``nc_step_rk4`` takes it as ``dt``,
        ``nc_step`` has it baked in) from ``state`` under the natural joint forces ``tau``."""
        given = dict(zip(("q", "qd", "qdd", "lam"), state, strict=True))
        given.update(tau=tau, dt=np.array([h]), params=self.force_params)
        return tuple(np.asarray(x) for x in self.step_fn(*(given[n] for n in self.step_inputs)))

    def energy(self, q: Array, qd: Array, values: Array) -> float:
        """Kinetic + gravity + the force elements' potential, the actuators' −Fθ with the
        unwrapped joint ``values``."""
        energy = float(np.sum(self.energy_fn(q, qd, *self.energy_fixed)))
        for i, force, sign, offset in self.actuators:
            turned = sign * values[i] + offset  # atan2(s, c) up to whole turns
            wrapped = sign * (math.atan2(math.sin(turned), math.cos(turned)) - offset)
            energy -= force * (values[i] - wrapped)
        return energy

    def residuals(self, q: Array, qd: Array) -> tuple[float, float]:
        """max |Φ(q)| and max |Φ_q q̇|."""
        phi = np.asarray(self.constraints(q))
        rate = np.asarray(self.jacobian(q)) @ qd
        return float(np.max(np.abs(phi), initial=0.0)), float(np.max(np.abs(rate), initial=0.0))

    def damper_power(self, q: Array, qd: Array, zero_tau: Array) -> float:
        """Power of the velocity-dependent forces (the dampers): (Q(q, q̇) − Q(q, 0))·q̇;
        gravity, springs and constant actuators cancel (their potential is in
        ``nc_energy``)."""
        if self.forces is None:
            return 0.0
        moving = np.asarray(self.forces(q, qd, zero_tau, *self.forces_fixed))
        still = np.asarray(self.forces(q, np.zeros_like(qd), zero_tau, *self.forces_fixed))
        return float((moving - still) @ qd)


def _compiled(model: Model, nm: NaturalModel | None, method: str, h: float | None,
              progress: bool | None):
    """The run's kernels, generated and compiled (cached on disk): ``nc_step`` bakes h, the
    others do not depend on it."""
    nm = nm if nm is not None else natural_model(model)
    opts = NaturalOptions(baumgarte=0.0)  # nc_accelerations: the index-1 start
    if NATURAL_METHODS[method] == "nc_step":
        opts = NaturalOptions(step=h, baumgarte=0.0)
    ks = generate(model, natural_kernel_names(model, method), opts,
                  context=NaturalContext(model.resolve(), nm, opts))
    return compile_kernels(ks, vectorize=None, progress=progress)


def _given_kernels(kernels, method: str, dt: float | None) -> tuple[NaturalModel, float | None]:
    """The natural model of compiled kernels handed to simulate, and the step ``nc_step``
    bakes (None for ``nc_step_rk4``, which takes it as an input)."""
    ks = getattr(kernels, "kernel_set", None)
    options = getattr(ks, "options", None)
    if not isinstance(options, NaturalOptions):
        raise SymgenError(f"simulate: method {method!r} needs natural-coordinate kernels "
                          "(symgen.generate with NaturalOptions), got others")
    nm = ks.context.nm
    missing = [n for n in natural_kernel_names(ks.model, method) if n not in kernels.functions
               and (n != "nc_joint_values" or nm.actuated)]  # none without 1-DOF joints
    if missing:
        raise SymgenError(f"simulate: the given kernels lack {', '.join(missing)}")
    if NATURAL_METHODS[method] != "nc_step":
        return nm, None
    if dt is not None and abs(dt - options.step) > 1e-12 * dt:
        raise SymgenError(f"simulate: the given kernels step h = {options.step:g} s (baked "
                          f"in), not dt = {dt:g} s")
    return nm, options.step


def simulate_natural(model: Model, duration: float, dt: float | None = None,
                     q0: Sequence[float] | None = None, v0: Sequence[float] | None = None,
                     tau=None, method: str = "natural", params=None, record_every: int = 1,
                     progress: bool | None = None, kernels=None,
                     tolerance: float = TOLERANCE) -> Trajectory:
    """:func:`symgen.simulate` with ``method`` "natural" or "natural_rk4" (``nc_step_rk4``),
    or "natural_trapezoidal" (``nc_step``); the arguments are simulate's (module docstring).

    - **step**: ``dt``; else with ``nc_step_rk4`` steps by step doubling keeping the local
      error below ``tolerance`` (:class:`.driving.StepDoubling`), with ``nc_step`` the step
      baked into the given ``kernels``, else :data:`DEFAULT_STEP` (1 ms) shortened to divide
      ``duration``;
    - **start**: (``q0``, ``v0``) (defaults: the neutral configuration, at rest) mapped by
      :func:`symgen.natural.natural_state` (closed on Φ = 0, velocities projected
      mass-orthogonally), accelerations and multipliers from ``nc_accelerations``;
    - **forces**: ``tau`` (joint forces of the spanning tree's 1-DOF joints, passed to the
      step's ``tau``; the loop joints get none, spherical and free joints must get zero) is
      held over each step: a function ``tau(t, q, v)`` is called once per step at the step
      kernel's own force point, the end t + h of the trapezoidal step (at the predictor
      q + h q̇ + ½h²q̈, q̇ + h q̈, eq. 8.135), the midpoint t + h/2 of the RK4 step
      (q + ½h q̇ + ⅛h²q̈, q̇ + ½h q̈);
    - **records**: t, joint q and v (``nc_joint_values``; ``nc_body_poses`` for spherical
      and free joints), max |Φ| and max |Φ_q q̇| of the natural coordinates, the energy
      (``nc_energy``: kinetic, gravity, the force elements' potential; the actuators' −Fθ
      with θ unwrapped), the work of ``tau`` (τ·Δq per step over the 1-DOF joints,
      τ the force the step applied: the held one of RK4, the mean of the trapezoidal step's
      two ends) and of the dampers ((Q(q, q̇) − Q(q, 0))·q̇ of ``nc_forces``: the trapezoidal
      rule on the step ends at a fixed step, Simpson's on the two halves of an adaptive
      one). A note names a drift of max |Φ| beyond :data:`DRIFT_NOTE`; a state that is not
      finite is an error."""
    if method not in NATURAL_METHODS:
        raise SymgenError(f"simulate_natural: unknown method {method!r} (known: "
                          f"{', '.join(NATURAL_METHODS)})")
    trapezoidal = NATURAL_METHODS[method] == "nc_step"
    nm, baked = (None, None) if kernels is None else _given_kernels(kernels, method, dt)
    h, steps = _step_size(duration, dt, baked) if trapezoidal or dt is not None else (
        None, None)
    if nm is None:
        nm = natural_model(model)
    readback = JointReadback(model, nm, method)  # refuses the joints it cannot read
    force_params = _force_parameters(model, nm, params)
    forces = forces_function(tau, model.nv)  # checked: one-line errors
    controller, constant = (forces, np.zeros(model.nv)) if callable(tau) else (
        None, forces(0.0, np.zeros(model.nq), np.zeros(model.nv)))
    readback.nc_tau(constant)  # a force on a spherical or free joint: refused before compiling
    q_joint = np.asarray(model.neutral_configuration if q0 is None else q0, dtype=float)
    v_joint = np.zeros(model.nv) if v0 is None else np.asarray(v0, dtype=float)
    if q_joint.shape != (model.nq,) or v_joint.shape != (model.nv,):
        raise SymgenError(f"simulate: q0 needs nq = {model.nq} values and v0 nv = {model.nv}")
    lib = kernels if kernels is not None else _compiled(model, nm, method, h, progress)
    k = _Kernels(lib, NATURAL_METHODS[method], force_params, nm)
    readback.bind(lib, q_joint)
    q, qd = natural_state(model, q_joint, v_joint, nm)
    q_now, v_now = readback.read(q, qd)
    notes = [f"natural coordinates: n = {nm.n}, {nm.m} constraints; joint coordinates read "
             f"back by {' and '.join(readback.kernel_names)}"]
    moved = float(np.max(np.abs(q_now - q_joint), initial=0.0))
    if moved > 1e-9:
        notes.append(f"the start was closed on the loop constraints in natural coordinates "
                     f"(q moved by {moved:.3g})")
    tau_joint = constant if controller is None else controller(0.0, q_now, v_now)
    tau_nc = readback.nc_tau(tau_joint)
    state = tuple(np.array(x) for x in k.accelerations(q, qd, tau_nc, *k.acc_fixed))
    state = (q, qd, *state)
    zero_tau = np.zeros(readback.njoints)
    dampers = k.forces is not None

    def damper_power(x: tuple[Array, ...]) -> float:
        return k.damper_power(x[0], x[1], zero_tau) if dampers else 0.0

    def advance(t: float, step: float, x: tuple[Array, ...]
                ) -> tuple[tuple[Array, ...], Array]:
        """One step of size ``step`` from (t, x): the new state and the joint force τ at the
        step's force point (module docstring)."""
        tau_step, tau_x = constant, tau_nc
        if controller is not None:  # τ at the step's force point, from the predictor
            s = step if trapezoidal else 0.5 * step
            predicted = readback.peek(x[0] + s * x[1] + 0.5 * s * s * x[2], x[1] + s * x[2])
            tau_step = controller(t + s, predicted[0], predicted[1])
            tau_x = readback.nc_tau(tau_step)
            if not trapezoidal:  # every RK4 stage, the first too, with the held τ
                x = (x[0], x[1], np.asarray(k.accelerations(x[0], x[1], tau_x,
                                                            *k.acc_fixed)[0]), x[3])
        new = k.step(x, tau_x, step)
        if not math.isfinite(float(new[0].sum() + new[1].sum())):
            raise SymgenError(f"simulate: the state is not finite at t = {t + step:.6g} s; "
                              "try a smaller dt")
        return new, tau_step

    r_q, r_v = k.residuals(q, qd)
    record = [(0.0, q_now, v_now, r_q, r_v, k.energy(q, qd, readback.values), 0.0)]
    clock = Progress(model.name, duration, progress)
    control = StepDoubling(duration, tolerance) if h is None else None
    power = damper_power(state)
    work, t, n = 0.0, 0.0, 0
    while t < duration * (1 - 1e-12):
        if control is None:
            new, tau_step = advance(t, h, state)
            q_new, v_new = readback.read(new[0], new[1])
            # the work of τ: the trapezoidal rule's force is the mean of its two ends' τ,
            # RK4's the held τ
            held = 0.5 * (tau_joint + tau_step) if trapezoidal else tau_step
            work += readback.work(held, q_now, q_new)
            if dampers:
                power_new = damper_power(new)
                work += 0.5 * h * (power + power_new)
                power = power_new
            tau_joint, t = tau_step, (n + 1) * h
        else:
            step = control.step(t)
            full, _ = advance(t, step, state)
            half, tau_first = advance(t, step / 2, state)
            new, tau_second = advance(t + step / 2, step / 2, half)
            if not control.accept(t, np.r_[state[0], state[1]], np.r_[full[0], full[1]],
                                  np.r_[new[0], new[1]]):
                continue  # retried from the same state with a shorter step
            q_mid = readback.peek(half[0], half[1])[0]
            q_new, v_new = readback.read(new[0], new[1])
            work += readback.work(tau_first, q_now, q_mid) + readback.work(
                tau_second, q_mid, q_new)
            if dampers:  # Simpson's rule on the two halves
                work += step / 6 * (damper_power(state) + 4 * damper_power(half)
                                    + damper_power(new))
            t += step
        state, q_now, v_now = new, q_new, v_new
        n += 1
        if n % record_every == 0 or t >= duration * (1 - 1e-12):
            r_q, r_v = k.residuals(state[0], state[1])
            record.append((t, q_now, v_now, r_q, r_v,
                           k.energy(state[0], state[1], readback.values), work))
        clock.report(t)
    columns = [np.array(c) for c in zip(*record, strict=True)]
    worst = int(np.argmax(columns[3]))
    if columns[3][worst] > DRIFT_NOTE:
        notes.append(f"the natural coordinates left the constraints (max |phi| = "
                     f"{columns[3][worst]:.2g} at t = {columns[0][worst]:.4g} s): the step is "
                     "too long for this motion; use a smaller dt")
    if controller is not None:
        notes.append("tau(t, q, v) sampled once per step: at t + h, the trapezoidal rule's "
                     "force point" if trapezoidal else "tau(t, q, v) sampled once per step "
                     "at t + h/2 and held over its four stages")
    kernel = NATURAL_METHODS[method]
    if control is not None:
        rule = (f"{kernel}: {_RULES[kernel]}, steps by step doubling, tolerance "
                f"{tolerance:g}, {n} steps")
        notes.append(f"{control.rejected} step(s) rejected and retried")
    else:
        rule = (f"{kernel}: {_RULES[kernel]}, fixed step {h:g} s"
                + (" (the default step)" if dt is None and kernels is None else ""))
    return Trajectory(model, f"{method} ({rule})", *columns, notes)


__all__ = ["DEFAULT_STEP", "NATURAL_METHODS", "natural_kernel_names", "simulate_natural"]
