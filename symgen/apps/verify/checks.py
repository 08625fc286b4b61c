"""Verification of generated kernels against independent implementations: the numpy
reference algorithms (:mod:`symgen.reference`), Pinocchio when PyPI ``pin`` is installed,
and MuJoCo for models read from MJCF (:mod:`.mujoco_queries`). Used by ``symgen verify``
and by the tests.

Errors are relative: max|a − b| / max(max|b|, 1) over every element and state. Solutions of
M x = y (forward dynamics, M⁻¹, the forward-dynamics derivatives) are compared by their
backward error ‖M (a − b)‖∞ / (‖M‖∞ max(‖b‖∞, 1)) instead (:func:`solve_error`): the forward
error of any backward-stable solve grows with cond(M) (Higham, *Accuracy and Stability of
Numerical Algorithms*, 2002, §7.1), which reaches 1e11 on random states of iCub, so that two
correct implementations differ by more than 1e-10 there; the backward error does not. A
kernel whose outputs together solve another linear system (comparison ``"system"``:
constrained forward dynamics, whose saddle-point matrix reaches a condition number of 1e10
on random states of Bricard's linkage) is compared the same way, with the system matrix its
reference returns as ``system`` and the outputs concatenated in their order (the registry's
``system_outputs``, when only some outputs solve it; the others by relative error). The
backward error also compares only what is unique when the system is singular: with
redundant constraints (natural coordinates, Bricard's 24 constraints of rank 23) the
multipliers λ are not unique, but the constraint forces Φ_qᵀλ and q̈ are, and
[[M, Φ_qᵀ], [Φ_q, 0]] [δq̈; δλ] vanishes exactly when δq̈ = 0 and Φ_qᵀδλ = 0.

An output whose reference also returns ``<output>:roundoff`` (one value per state: how far
two correct implementations may differ in it, e.g. the multipliers of the augmented-
Lagrangian step, which carry the rounding of Φ times penalties up to 1e15) is compared
relative to max(|b|, 1, roundoff / tolerance) (:func:`roundoff_error`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

import numpy as np

import symgen.reference as ref
import symgen.registry as registry
from symgen.apps.verify.mujoco_queries import (
    MUJOCO,
    MujocoPeer,
    mujoco_peer,
    mujoco_unavailable,
)
from symgen.apps.verify.pinocchio_queries import PINOCCHIO, PinocchioQuery
from symgen.apps.verify.reference_queries import (
    NO_REFERENCE,
    REFERENCES,
    ROUNDOFF,
    STATES,
    THROUGH,
    reference_query,
)
from symgen.generate import KernelSet

#: Tolerances of ``symgen verify``: double kernels against the reference and Pinocchio, and
#: float kernels against the double ones.
DOUBLE_TOLERANCE = 1e-10
FLOAT_TOLERANCE = 1e-4


def relative_error(actual, expected) -> float:
    """max|a − b| / max(max|b|, 1)."""
    a, b = np.asarray(actual, float), np.asarray(expected, float)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} and {b.shape}")
    scale = max(float(np.max(np.abs(b), initial=0.0)), 1.0)
    return float(np.max(np.abs(a - b), initial=0.0)) / scale


def solve_error(actual, expected, mass_matrices) -> float:
    """Worst backward error of ``actual`` as a solution of M x = M ``expected`` over the
    states: ‖M (a − b)‖∞ / (‖M‖∞ max(‖b‖∞, 1)), per state (a, b: (nv,) or (nv, nv))."""
    worst = 0.0
    for a, b, m in zip(actual, expected, mass_matrices, strict=True):
        a, b, m = np.asarray(a, float), np.asarray(b, float), np.asarray(m, float)
        if a.shape != b.shape:
            raise ValueError(f"shapes differ: {a.shape} and {b.shape}")
        norm = float(np.max(np.sum(np.abs(m), axis=1), initial=0.0))
        scale = norm * max(float(np.max(np.abs(b), initial=0.0)), 1.0)
        residual = float(np.max(np.abs(m @ (a - b)), initial=0.0))
        worst = max(worst, residual / scale if scale > 0 else residual)
    return worst


def through_error(actual, expected, maps, roundoff=None, tolerance: float = 1.0) -> float:
    """The error of T a against T b per state (T the state's matrix in ``maps``: the output
    is unique only through it, e.g. the force Gᵀλ of multipliers of dependent rows), by
    :func:`roundoff_error` with the roundoff r scaled by max|T| (none: relative)."""
    mapped_a = [np.asarray(t, float) @ np.asarray(a, float).reshape(-1)
                for a, t in zip(actual, maps, strict=True)]
    mapped_b = [np.asarray(t, float) @ np.asarray(b, float).reshape(-1)
                for b, t in zip(expected, maps, strict=True)]
    if roundoff is None:
        return max((relative_error(a, b) for a, b in zip(mapped_a, mapped_b, strict=True)),
                   default=0.0)
    scaled = [float(r) * float(np.max(np.abs(t), initial=0.0))
              for r, t in zip(roundoff, maps, strict=True)]
    return roundoff_error(mapped_a, mapped_b, scaled, tolerance)


def roundoff_error(actual, expected, roundoff, tolerance: float) -> float:
    """Worst over the states of max|a − b| / max(max|b|, 1, r / tolerance), r the state's
    roundoff level (differences up to r between correct implementations): a difference
    within r scores at most ``tolerance``."""
    worst = 0.0
    for a, b, r in zip(actual, expected, roundoff, strict=True):
        a, b = np.asarray(a, float), np.asarray(b, float)
        if a.shape != b.shape:
            raise ValueError(f"shapes differ: {a.shape} and {b.shape}")
        scale = max(float(np.max(np.abs(b), initial=0.0)), 1.0, float(r) / tolerance)
        worst = max(worst, float(np.max(np.abs(a - b), initial=0.0)) / scale)
    return worst


def random_states(ks: KernelSet, count: int, seed: int) -> list[dict]:
    """Random states: the formulation's own when it has them (natural coordinates:
    assembled configurations and consistent velocities), else q uniform on the joint
    manifolds, v, a, tau, external forces, the independent rates and accelerations of
    the embedded kernels (``v_ind``, ``a_ind``) and the step kernels' multipliers (``lam``)
    standard normal, dt = 1 ms (a step the closed-loop steps take on every example
    mechanism; Andrews' squeezer diverges at 10 ms from such states), parameters at
    their defaults."""
    own = STATES.get(type(ks.context))
    if own is not None:
        return own(ks.context, count, seed)
    model = ks.model
    rng = np.random.default_rng(seed)
    params = [p.default for p in model.parameters]
    states = []
    # other inputs (the independent rates and accelerations of the embedded kernels):
    # standard normal of their declared size
    others = {s.name: s.size for p in ks.programs.values() for s in p.inputs
              if s.name in ("v_ind", "a_ind", "lam")}
    for _ in range(count):
        forces = {name: rng.normal(size=6) for name in model.body_names}
        extra = {name: rng.normal(size=size) for name, size in sorted(others.items())}
        states.append({**extra,
            "q": ref.random_configuration(model, rng),
            "v": rng.normal(size=model.nv),
            "a": rng.normal(size=model.nv),
            "tau": rng.normal(size=model.nv),
            "dt": 1e-3,
            "params": params,
            "f_ext_dict": forces,
            "f_ext": np.array([forces[n] for n in model.body_names]).reshape(-1, 6),
        })
    return states


def consistent_states(ks: KernelSet, states: list[dict]) -> list[dict]:
    """``states`` at assembled configurations of a model with loop joints (the loop
    analysis' samples along the motion, in turn) with v projected onto the null space of
    the independent loop rows, v − Gᵀ(GGᵀ)⁻¹G v: the states where the closed-loop forward
    dynamics methods agree (registry ``consistent``)."""
    from symgen.loops import LoopClosure, kept_rows
    from symgen.loops.analysis import _samples

    analysis = ks.context.loops
    closure = LoopClosure(ks.model)
    configurations = _samples(closure, analysis.loops, analysis.reference,
                              np.random.default_rng(0))
    rows = list(analysis.rows)
    out = []
    for i, state in enumerate(states):
        q = configurations[i % len(configurations)]
        g = kept_rows(closure, analysis.loops, q)[rows]
        v = np.asarray(state["v"], float)
        out.append({**state, "q": q, "v": v - g.T @ np.linalg.solve(g @ g.T, g @ v)})
    return out


def reference_value(ks: KernelSet, name: str, state: Mapping[str, object]) -> np.ndarray:
    """What program ``name`` of ``ks`` must return at ``state`` in its first output (the
    only one of a tree kernel); :func:`reference_values` gives every output."""
    return next(iter(reference_values(ks, name, state).values()))


def reference_values(ks: KernelSet, name: str, state: Mapping[str, object]
                     ) -> dict[str, np.ndarray]:
    """What program ``name`` of ``ks`` must return at ``state``, per output, from the
    kernel's numpy reference (:data:`.reference_queries.REFERENCES`: :mod:`symgen.reference`
    for the tree kernels)."""
    kernel = ks.kernel_of[name]
    if kernel not in REFERENCES:
        raise ValueError(f"no reference for kernel {kernel!r}")
    return dict(REFERENCES[kernel](reference_query(ks, name, state)))


@dataclass
class PinocchioPeer:
    """Pinocchio as a peer of ``symgen verify``: ``value(program, state)`` (Pinocchio's
    value per output, None where it has no counterpart), ``model`` (which Pinocchio model,
    one line) and, when the model could not be built, ``error`` (one line; ``value`` is then
    None)."""

    value: Callable[[str, Mapping], dict[str, np.ndarray] | None] | None
    model: str
    error: str | None = None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def pinocchio_peer(ks: KernelSet, from_source: bool = True) -> PinocchioPeer | None:
    """Pinocchio's counterpart of ``ks`` (:func:`symgen.peers.pinocchio.pinocchio_counterpart`:
    its own reading of the source URDF when possible, else a model built from symgen's); None
    when Pinocchio is not installed. A failure to build the Pinocchio model is reported in
    ``error``, never raised."""
    try:
        import pinocchio as pin

        from symgen.peers.pinocchio import pinocchio_counterpart
    except ImportError:
        return None
    try:
        br, which = pinocchio_counterpart(ks.model, from_source)
    except Exception as exc:  # noqa: BLE001 - a peer's failure is reported, not raised
        return PinocchioPeer(None, "none", _one_line(exc))

    def value(name: str, state: Mapping) -> dict[str, np.ndarray] | None:
        counterpart = PINOCCHIO.get(ks.kernel_of[name])
        if counterpart is None:
            return None
        query = PinocchioQuery(pin, br.pin_model, br.data, br, state,
                               ks.options.external_forces)
        value = counterpart(query)
        return None if value is None else dict(value)

    return PinocchioPeer(value, which)


@dataclass
class Check:
    """The worst error of one program against one peer over all states; ``skipped`` (one
    line) when the comparison could not be made (e.g. the peer failed), then ``error`` is
    nan and the check counts neither as passed nor as failed."""

    program: str
    peer: str
    error: float
    tolerance: float
    skipped: str | None = None

    @property
    def ok(self) -> bool:
        """Performed and within tolerance."""
        return self.skipped is None and self.error <= self.tolerance

    @property
    def failed(self) -> bool:
        """Performed and not within tolerance (a nan error fails)."""
        return self.skipped is None and not self.error <= self.tolerance

    @property
    def status(self) -> str:
        if self.skipped is not None:
            return f"skipped: {self.skipped}"
        return "ok" if self.ok else "FAIL"


@dataclass
class Report:
    """The checks of one verification and notes on how they were made (which Pinocchio
    model, peers not available)."""

    checks: list[Check]
    notes: list[str] = field(default_factory=list)

    def note(self, peer: str) -> str | None:
        """The first note on ``peer`` ("Pinocchio", "MuJoCo"), None without one."""
        return next((n for n in self.notes if n.startswith(peer)), None)

    @property
    def performed(self) -> list[Check]:
        return [c for c in self.checks if c.skipped is None]

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.failed]

    @property
    def skipped(self) -> list[Check]:
        return [c for c in self.checks if c.skipped is not None]

    def verdict(self) -> str:
        """One line: how many performed checks passed or failed, against which peers, and
        what was skipped."""
        performed = self.performed
        peers = ", ".join(sorted({c.peer for c in performed})) or "no peer"
        if not performed and not self.skipped:
            return "no check performed (see the notes)"
        if self.failed:
            text = f"{len(self.failed)} of {len(performed)} checks FAILED ({peers})"
        else:
            text = f"all {len(performed)} checks passed ({peers})"
        if self.skipped:
            reasons = sorted({f"{c.peer}: {c.skipped}" for c in self.skipped})
            text += f"; {len(self.skipped)} skipped ({'; '.join(reasons)})"
        return text


def _batched(states: list[dict], names: list[str]) -> dict[str, np.ndarray]:
    return {n: np.array([s[n] for s in states]) for n in names}


def verify_compiled(lib, states: list[dict], float_lib=None, pinocchio_from_source: bool = True
                    ) -> Report:
    """Compare every compiled kernel (batch form, all states at once) with the reference,
    Pinocchio where it has the kernel, MuJoCo where it has it and the model was read from
    MJCF, and, given ``float_lib``, the float build with the double one. Pinocchio's model
    is its own reading of the source file when ``pinocchio_from_source`` and possible
    (:func:`pinocchio_peer`); a peer's failure becomes a skipped check, never an exception.
    The report's notes say which peer models were used, or why a peer was not."""
    ks = lib.kernel_set
    report = Report([])
    peers: dict[str, Callable | None] = {}
    if not any(k in PINOCCHIO for k in ks.kernel_of.values()):
        peer = None
        report.notes.append("Pinocchio has none of these kernels: not compared")
    else:
        peer = pinocchio_peer(ks, pinocchio_from_source)
    if peer is None:
        if not report.notes:
            report.notes.append("Pinocchio is not installed (pip install pin): not compared")
    elif peer.error is not None:
        report.checks.append(Check("all kernels", "pinocchio", float("nan"), DOUBLE_TOLERANCE,
                                   skipped=peer.error))
    else:
        report.notes.append(f"Pinocchio model: {peer.model}")
        peers["pinocchio"] = peer.value
    peers["mujoco"] = _mujoco(ks, report)
    masses: list[np.ndarray] | None = None
    all_states = states
    for name, program in ks.programs.items():
        kernel = registry.get(ks.kernel_of[name])
        # without loop joints every configuration is assembled (couplings only: the
        # embedded kernels of a geared model)
        consistent = bool((kernel.consistent or kernel.loop_variants) and ks.model.loop_joints)
        states = consistent_states(ks, all_states) if consistent else all_states
        inputs = _batched(states, [s.name for s in program.inputs])
        outputs = [s.name for s in program.output_specs]
        got = lib[name](**inputs)
        got = dict(zip(outputs, got if len(outputs) > 1 else (got,), strict=True))
        if not program.inputs:  # a constant (nc_mass_matrix): one value for every state
            got = {o: np.stack([value] * len(states)) for o, value in got.items()}
        error = relative_error
        if kernel.comparison == "solve" and not consistent:
            if masses is None:
                masses = [ref.mass_matrix(ks.model, s["q"], params=s.get("params_dict"))
                          for s in states]
            error = partial(solve_error, mass_matrices=masses)
        tolerance = kernel.tolerance or DOUBLE_TOLERANCE
        if kernel.name in REFERENCES:
            values = [reference_values(ks, name, s) for s in states]
            expected = {o: np.array([v[o] for v in values]) for o in outputs}
            own: dict[str, Callable] = {
                o: partial(roundoff_error, roundoff=[v[o + ROUNDOFF] for v in values],
                           tolerance=tolerance)
                for o in outputs if o + ROUNDOFF in values[0]}
            own.update({
                o: partial(through_error, maps=[v[o + THROUGH] for v in values],
                           roundoff=[v[o + ROUNDOFF] for v in values]
                           if o + ROUNDOFF in values[0] else None, tolerance=tolerance)
                for o in outputs if o + THROUGH in values[0]})
            if kernel.comparison == "system":
                error = partial(_system_error, outputs=list(kernel.system_outputs or outputs),
                                systems=[v["system"] for v in values])
            report.checks.append(Check(name, "reference",
                                       _worst(error, got, expected, own), tolerance))
        else:
            why = NO_REFERENCE.get(kernel.name, "no numpy reference")
            report.notes.append(f"{name}: not compared with a reference ({why})")
        for peer_name, value in peers.items():
            check = None if value is None else _peer_check(peer_name, value, name, states,
                                                           got, error)
            if check is not None:
                report.checks.append(check)
        if float_lib is not None and not kernel.float_check:
            report.checks.append(Check(name, "float vs double", float("nan"), FLOAT_TOLERANCE,
                                       skipped="not meaningful in float (see its docs)"))
        elif float_lib is not None:
            low = float_lib[name](**inputs)
            low = dict(zip(outputs, low if len(outputs) > 1 else (low,), strict=True))
            report.checks.append(Check(name, "float vs double", _worst(error, low, got),
                                       FLOAT_TOLERANCE))
    return report


def _worst(error: Callable, got: Mapping[str, np.ndarray],
           expected: Mapping[str, np.ndarray], own: Mapping[str, Callable] | None = None
           ) -> float:
    """The largest error over the outputs: a ``_system_error`` takes its outputs at once,
    the others get ``error`` (relative when it is a system's), or their ``own``."""
    own = own or {}
    worst = []
    rest = list(expected)
    if isinstance(error, partial) and error.func is _system_error:
        worst.append(error(got, expected))
        rest = [o for o in rest if o not in error.keywords["outputs"]]
        error = relative_error
    worst += [own.get(o, error)(got[o], expected[o]) for o in rest]
    return max(worst)


def _system_error(got: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray],
                  outputs: list[str], systems: list[np.ndarray]) -> float:
    """:func:`solve_error` of the outputs concatenated per state, against the system
    matrices ``systems`` (comparison ``"system"``)."""
    def joined(values: Mapping[str, np.ndarray]) -> np.ndarray:
        return np.concatenate([np.asarray(values[o], float).reshape(len(systems), -1)
                               for o in outputs], axis=1)

    return solve_error(joined(got), joined(expected), systems)


def _mujoco(ks: KernelSet, report: Report) -> Callable | None:
    """MuJoCo's value function for ``ks`` (:func:`.mujoco_queries.mujoco_peer`), None when
    MuJoCo is no peer; the reason, or which model MuJoCo compiled, goes to the notes, a
    failure to compile to a skipped check."""
    reason = mujoco_unavailable(ks.model)
    if reason is None and not any(k in MUJOCO for k in ks.kernel_of.values()):
        reason = "MuJoCo has none of these kernels"
    if reason is not None:
        report.notes.append(f"MuJoCo: not compared ({reason})")
        return None
    peer = mujoco_peer(ks)
    if peer.error is not None:
        report.checks.append(Check("all kernels", "mujoco", float("nan"), DOUBLE_TOLERANCE,
                                   skipped=peer.error))
        return None
    report.notes.append(f"MuJoCo model: {peer.model}")
    return peer.value


def _peer_check(peer: str, value: Callable, name: str, states: list[dict],
                got: Mapping[str, np.ndarray], error: Callable = relative_error
                ) -> Check | None:
    """A peer's check of one program, None where it has no counterpart, skipped when it
    raises."""
    try:
        values = [value(name, s) for s in states]
        if values[0] is None:
            return None
        expected = {o: np.array([v[o] for v in values]) for o in values[0]}
        return Check(name, peer, _worst(error, got, expected), DOUBLE_TOLERANCE)
    except Exception as exc:  # noqa: BLE001 - a peer's failure is reported, not raised
        return Check(name, peer, float("nan"), DOUBLE_TOLERANCE, skipped=_one_line(exc))


def check_compiled(lib, states: list[dict], float_lib=None) -> list[Check]:
    """The checks of :func:`verify_compiled`."""
    return verify_compiled(lib, states, float_lib).checks


__all__ = [
    "DOUBLE_TOLERANCE",
    "FLOAT_TOLERANCE",
    "Check",
    "MujocoPeer",
    "PinocchioPeer",
    "Report",
    "check_compiled",
    "consistent_states",
    "mujoco_peer",
    "pinocchio_peer",
    "random_states",
    "reference_value",
    "reference_values",
    "relative_error",
    "roundoff_error",
    "solve_error",
    "verify_compiled",
]
