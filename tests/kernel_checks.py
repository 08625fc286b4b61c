"""Compare every program of a :class:`symgen.KernelSet`, evaluated in Python, with the
independent numpy reference (:mod:`symgen.reference`) on given states."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from symgen import KernelSet, registry
from symgen.apps.verify import DOUBLE_TOLERANCE as TOLERANCE
from symgen.apps.verify import reference_values, relative_error
from symgen.ir.printer import evaluate

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
        elif spec.name in ("v_ind", "a_ind") and spec.name not in state:
            # the embedded kernels' independent rates and accelerations: the state's v and
            # a where every coordinate is independent (a tree with couplings), else seeded
            full = state["v" if spec.name == "v_ind" else "a"]
            out[spec.name] = (np.asarray(full)[:spec.size] if len(full) == spec.size
                              else np.random.default_rng(spec.size).normal(size=spec.size))
        else:
            out[spec.name] = state[spec.name]
    return out


def check_kernel_set(ks: KernelSet, state: Mapping[str, object]) -> dict[str, float]:
    """Relative error of every program at ``state`` (its worst output); fails past
    :data:`TOLERANCE`."""
    errors = {}
    for name, program in ks.programs.items():
        inputs = program_inputs(ks, name, state)
        result = evaluate(program, **inputs)
        expected = reference_values(ks, name, {**state, **inputs,
                                               "f_ext_dict": state.get("f_ext_dict")})
        errors[name] = max(relative_error(result[o], expected[o]) for o in result)
    # a kernel whose reference is coarser (central differences) declares its own bound
    bound = {name: registry.get(ks.kernel_of[name]).tolerance or TOLERANCE for name in errors}
    failed = [name for name in errors if errors[name] > bound[name]]
    assert not failed, ", ".join(f"{ks.model.name}: {name} error {errors[name]:.2e} > "
                                 f"{bound[name]:.0e}" for name in failed)
    return errors
