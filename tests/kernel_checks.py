"""Compare every program of a :class:`symgen.KernelSet`, evaluated in Python, with the
independent numpy reference (:mod:`symgen.reference`) on given states."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from symgen import KernelSet
from symgen import reference as ref

#: Relative-error bound of the acceptance criterion (issue 3).
TOLERANCE = 1e-10


def relative_error(actual: np.ndarray, expected: np.ndarray) -> float:
    """max|a − b| / max(max|b|, 1)."""
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    return float(np.max(np.abs(actual - expected), initial=0.0) / max(np.max(np.abs(expected),
                                                                            initial=0.0), 1.0))


def reference_value(ks: KernelSet, name: str, state: Mapping[str, object]) -> np.ndarray:
    """What program ``name`` must return, from :mod:`symgen.reference`."""
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
        return np.array([
            ref.kinetic_energy(model, q, v, params=params),
            ref.potential_energy(model, q, params=params),
        ])
    if kernel == "integrate":
        return ref.integrate(model, q, v, float(state["dt"]), params=params)
    raise AssertionError(f"no reference for kernel {kernel!r}")


def program_inputs(ks: KernelSet, name: str, state: Mapping[str, object]) -> dict:
    """The program's inputs taken from ``state`` (f_ext as an nbodies × 6 array)."""
    out = {}
    for spec in ks[name].inputs:
        if spec.name == "f_ext":
            forces = np.zeros((ks.model.nbodies, 6))
            for body, f in (state.get("f_ext_dict") or {}).items():
                forces[ks.model.body_index(body)] = f
            out["f_ext"] = forces
        else:
            out[spec.name] = state[spec.name]
    return out


def check_kernel_set(ks: KernelSet, state: Mapping[str, object]) -> dict[str, float]:
    """Relative error of every program at ``state``; fails past :data:`TOLERANCE`."""
    errors = {}
    for name, program in ks.programs.items():
        result = program.evaluate(**program_inputs(ks, name, state))
        (value,) = result.values()
        errors[name] = relative_error(value, reference_value(ks, name, state))
    worst = max(errors, key=errors.get)
    assert errors[worst] <= TOLERANCE, f"{ks.model.name}: {worst} error {errors[worst]:.2e}"
    return errors
