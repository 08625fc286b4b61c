"""Compare every program of a :class:`symgen.KernelSet`, evaluated in Python, with the
independent numpy reference (:mod:`symgen.reference`) on given states."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from symgen import KernelSet
from symgen.verify import DOUBLE_TOLERANCE as TOLERANCE
from symgen.verify import reference_value, relative_error

__all__ = ["TOLERANCE", "check_kernel_set", "program_inputs", "relative_error"]


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
