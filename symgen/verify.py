"""Verification of generated kernels against independent implementations: the numpy
reference algorithms (:mod:`symgen.reference`) and, when PyPI ``pin`` is installed,
Pinocchio (design.md §6). Used by ``symgen verify`` and by the tests.

Errors are relative: max|a − b| / max(max|b|, 1) over every element and state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from . import reference as ref
from .generate import KernelSet

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


def random_states(ks: KernelSet, count: int, seed: int) -> list[dict]:
    """Random states: q uniform on the joint manifolds, v, a, tau and external forces
    standard normal, dt = 0.01, parameters at their defaults."""
    model = ks.model
    rng = np.random.default_rng(seed)
    params = [p.default for p in model.parameters]
    states = []
    for _ in range(count):
        forces = {name: rng.normal(size=6) for name in model.body_names}
        states.append({
            "q": ref.random_configuration(model, rng),
            "v": rng.normal(size=model.nv),
            "a": rng.normal(size=model.nv),
            "tau": rng.normal(size=model.nv),
            "dt": 0.01,
            "params": params,
            "f_ext_dict": forces,
            "f_ext": np.array([forces[n] for n in model.body_names]).reshape(-1, 6),
        })
    return states


def reference_value(ks: KernelSet, name: str, state: Mapping[str, object]) -> np.ndarray:
    """What program ``name`` of ``ks`` must return at ``state``, from symgen.reference."""
    model, kernel = ks.model, ks.kernel_of[name]
    params = state.get("params_dict")
    q, v, a, tau = (state.get(k) for k in ("q", "v", "a", "tau"))
    f_ext = state.get("f_ext_dict") if ks.options.external_forces else None
    frame, reference = ks.frame_of.get(name), ks.options.jacobian_reference
    if kernel == "forward_kinematics":
        poses = ref.forward_kinematics(model, q, params=params)
        return np.array([poses[n][:3, :] for n in ks.pose_names]).reshape(-1, 3, 4)
    if kernel == "frame_jacobian":
        return ref.frame_jacobian(model, q, frame, reference, params=params)
    if kernel == "frame_jacobian_dot_v":
        return ref.frame_jacobian_dot_v(model, q, v, frame, reference, params=params)
    if kernel == "inverse_dynamics":
        return ref.inverse_dynamics(model, q, v, a, f_ext, params=params)
    if kernel == "mass_matrix":
        return ref.mass_matrix(model, q, params=params)
    if kernel == "bias_forces":
        return ref.bias_forces(model, q, v, params=params)
    if kernel == "gravity_forces":
        return ref.gravity_forces(model, q, params=params)
    if kernel.startswith("forward_dynamics"):
        return ref.forward_dynamics(model, q, v, tau, f_ext, params=params)
    if kernel == "mass_matrix_inverse":
        return np.linalg.inv(ref.mass_matrix(model, q, params=params))
    if kernel == "energy":
        return np.array([ref.kinetic_energy(model, q, v, params=params),
                         ref.potential_energy(model, q, params=params)])
    if kernel == "integrate":
        return ref.integrate(model, q, v, float(state["dt"]), params=params)
    raise ValueError(f"no reference for kernel {kernel!r}")


def pinocchio_value_function(ks: KernelSet) -> Callable[[str, Mapping], np.ndarray | None] | None:
    """A function (program name, state) → Pinocchio's value, or None where Pinocchio has no
    counterpart; None when Pinocchio is not installed."""
    try:
        import pinocchio as pin

        from .peers.pinocchio import Bridge, pin_model_from_symgen
    except ImportError:
        return None
    model = ks.model
    br = Bridge(model, pin_model_from_symgen(model))
    pm, pd = br.pin_model, br.data

    def sym(m: np.ndarray) -> np.ndarray:
        return np.triu(m) + np.triu(m, 1).T  # Pinocchio fills the upper triangle

    def value(name: str, state: Mapping) -> np.ndarray | None:
        kernel = ks.kernel_of[name]
        qp, vp = br.q_to_pin(state["q"]), br.v_to_pin(state["v"])
        forces = br.forces_to_pin(state["f_ext_dict"]) if ks.options.external_forces else None
        if kernel == "inverse_dynamics":
            ap = br.v_to_pin(state["a"])
            out = pin.rnea(pm, pd, qp, vp, ap, forces) if forces else pin.rnea(pm, pd, qp, vp, ap)
            return br.v_from_pin(out)
        if kernel == "mass_matrix":
            return br.matrix_from_pin(sym(pin.crba(pm, pd, qp)))
        if kernel == "bias_forces":
            return br.v_from_pin(pin.nonLinearEffects(pm, pd, qp, vp))
        if kernel == "gravity_forces":
            return br.v_from_pin(pin.computeGeneralizedGravity(pm, pd, qp))
        if kernel.startswith("forward_dynamics"):
            taup = br.v_to_pin(state["tau"])
            out = pin.aba(pm, pd, qp, vp, taup, forces) if forces else pin.aba(pm, pd, qp, vp,
                                                                                 taup)
            return br.v_from_pin(out)
        if kernel == "mass_matrix_inverse":
            return br.matrix_from_pin(sym(pin.computeMinverse(pm, pd, qp)))
        return None

    return value


@dataclass
class Check:
    """The worst error of one program against one peer over all states."""

    program: str
    peer: str
    error: float
    tolerance: float

    @property
    def ok(self) -> bool:
        return self.error <= self.tolerance


def _batched(states: list[dict], names: list[str]) -> dict[str, np.ndarray]:
    return {n: np.array([s[n] for s in states]) for n in names}


def check_compiled(lib, states: list[dict], float_lib=None) -> list[Check]:
    """Compare every compiled kernel (batch form, all states at once) with the reference,
    Pinocchio where it has the kernel, and, given ``float_lib``, the float build with the
    double one."""
    ks = lib.kernel_set
    pin_value = pinocchio_value_function(ks)
    checks: list[Check] = []
    for name, program in ks.programs.items():
        inputs = _batched(states, [s.name for s in program.inputs])
        got = lib[name](**inputs)
        expected = np.array([reference_value(ks, name, s) for s in states])
        checks.append(Check(name, "reference", relative_error(got, expected), DOUBLE_TOLERANCE))
        if pin_value is not None:
            values = [pin_value(name, s) for s in states]
            if values[0] is not None:
                checks.append(Check(name, "pinocchio", relative_error(got, np.array(values)),
                                    DOUBLE_TOLERANCE))
        if float_lib is not None:
            low = float_lib[name](**inputs)
            checks.append(Check(name, "float vs double", relative_error(low, got),
                                FLOAT_TOLERANCE))
    return checks


__all__ = [
    "DOUBLE_TOLERANCE",
    "FLOAT_TOLERANCE",
    "Check",
    "check_compiled",
    "pinocchio_value_function",
    "random_states",
    "reference_value",
    "relative_error",
]
