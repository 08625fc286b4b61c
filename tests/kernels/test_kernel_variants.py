"""Kernel variants: runtime parameters, joint partitioning, the choice of forward-dynamics
method, and linear growth of the programs with the number of links."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from kernel_checks import check_kernel_set, relative_error
from random_models import parametric_arm, random_model, random_state

import symgen
from symgen import reference as ref
from symgen.formulations.tree.hinges import PARTITIONABLE
from symgen.io.builder import ModelBuilder
from symgen.io.robots import spatial_chain
from symgen.ir.printer import program_lines
from symgen.kernels import DEFAULT_KERNELS, KERNELS

#: The catalogue without the programs built from others (derivatives, linearization,
#: regressors: their own tests, tests/kernels/test_derivatives.py, test_linearization.py and
#: test_regressor.py), for the checks of partitioning and of the forward-dynamics method.
VARIANT_KERNELS = [k for k, spec in KERNELS.items() if not spec.on_request]

# ---------------------------------------------------------------- runtime parameters
PARAMETER_SETS = [None, {"payload": 0.0}, {"payload": 3.0, "g": -1.62},
                  {"reach": 0.8, "g": 9.81, "payload": 1.2}]


@cache
def parametric_kernels() -> symgen.KernelSet:
    return symgen.generate(parametric_arm(), list(KERNELS), symgen.Options(external_forces=True))


@pytest.mark.parametrize("params", PARAMETER_SETS)
def test_runtime_parameters_are_read_from_params(params):
    ks = parametric_kernels()
    model = ks.model
    values = model.parameter_values(params)
    vector = [values[name] for name in model.parameter_names]
    rng = np.random.default_rng(21)
    for _ in range(2):
        q, v, a, tau = random_state(model, rng)
        state = {"q": q, "v": v, "a": a, "tau": tau, "dt": 0.01, "params": vector,
                 "params_dict": params, "f_ext_dict": {"l2": rng.normal(size=6)}}
        check_kernel_set(ks, state)


def test_parameters_stay_symbolic_in_the_program():
    ks = parametric_kernels()
    program = ks["inverse_dynamics"]
    assert [s.name for s in program.inputs][-1] == "params"
    text = "\n".join(program_lines(program))
    assert all(f"params[{i}]" in text for i in range(3))


# ---------------------------------------------------------------- partitioning
def multi_dof_model() -> symgen.Model:
    """One joint of each partitionable type, in a tree with generic geometry."""
    b = ModelBuilder("multi_dof")
    inertia = ((0.05, 0.002, 0.001), (0.002, 0.04, 0.003), (0.001, 0.003, 0.06))
    for i, name in enumerate(("a", "b", "c", "d", "e")):
        b.body(name, mass=1.0 + 0.2 * i, com=(0.03, -0.02, 0.1), inertia=inertia)
    b.joint("float", "free", "world", "a")
    b.joint("ball", "spherical", "a", "b", xyz=(0.1, 0.2, 0.3), rpy=(0.3, 0.1, 0.2))
    b.joint("cardan", "universal", "b", "c", xyz=(0.0, 0.1, 0.4), axis=(0, 0, 1),
            axis2=(0.6, 0.8, 0))
    b.joint("slider", "cylindrical", "a", "d", xyz=(0.2, -0.1, 0.0), axis=(0.3, 0.4, 1.2))
    b.joint("table", "planar", "d", "e", xyz=(0.0, 0.0, 0.2), rpy=(0.4, 0.0, 0.0),
            axis=(0, 0, 1))
    return b.build()


@cache
def partition_variants() -> dict[str, symgen.KernelSet]:
    model = multi_dof_model()
    assert {j.type for j in model.joints} == set(PARTITIONABLE)
    return {
        mode: symgen.generate(model, VARIANT_KERNELS, symgen.Options(partition=mode))
        for mode in ("never", "always", "auto")
    }


@pytest.mark.slow  # 16 s: the default tier keeps its margin under 5 minutes
def test_partitioned_and_unpartitioned_kernels_agree():
    variants = partition_variants()
    model = variants["never"].model
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, v, a, tau = random_state(model, rng)
        state = {"q": q, "v": v, "a": a, "tau": tau, "dt": 0.01}
        for ks in variants.values():
            check_kernel_set(ks, state)
        for name in variants["never"].programs:
            inputs = {s.name: state[s.name] for s in variants["never"][name].inputs}
            (plain,) = variants["never"].evaluate(name, **inputs).values()
            (split,) = variants["always"].evaluate(name, **inputs).values()
            assert relative_error(split, plain) < 1e-12, name


def test_partitioning_changes_the_programs_and_auto_keeps_the_cheaper():
    variants = partition_variants()
    never, always, auto = (variants[m].op_counts() for m in ("never", "always", "auto"))
    assert never["forward_dynamics_aba"] != always["forward_dynamics_aba"]
    for name in never:
        assert auto[name]["total"] == min(never[name]["total"], always[name]["total"]), name
    choice = variants["auto"].choices["forward_dynamics_aba"]
    cheaper = "partitioned" if always["forward_dynamics_aba"]["total"] < \
        never["forward_dynamics_aba"]["total"] else "unpartitioned"
    assert choice == cheaper


# ---------------------------------------------------------------- forward-dynamics method
def test_forward_dynamics_default_is_the_method_with_fewer_operations():
    ks = symgen.generate(random_model(4), VARIANT_KERNELS)
    counts = ks.op_counts()
    aba, ltdl = counts["forward_dynamics_aba"]["total"], counts["forward_dynamics_ltdl"]["total"]
    assert counts["forward_dynamics"]["total"] == min(aba, ltdl)
    assert ks.choices["forward_dynamics"].split(",")[0] == ("aba" if aba < ltdl else "ltdl")
    forced = symgen.generate(ks.model, ["forward_dynamics"],
                             symgen.Options(forward_dynamics="aba"))
    assert forced.op_counts()["forward_dynamics"]["total"] == \
        counts["forward_dynamics_aba"]["total"]


def test_default_kernels_leave_out_the_method_variants():
    assert "forward_dynamics" in DEFAULT_KERNELS
    assert "forward_dynamics_aba" not in DEFAULT_KERNELS


def test_bad_options_and_names_are_clear_errors():
    model = random_model(1)
    with pytest.raises(symgen.SymgenError, match="unknown kernel 'nope'"):
        symgen.generate(model, ["nope"])
    with pytest.raises(symgen.SymgenError, match="partition must be one of"):
        symgen.generate(model, options=symgen.Options(partition="sometimes"))
    with pytest.raises(symgen.SymgenError, match="no body or frame named 'ghost'"):
        symgen.generate(model, ["frame_jacobian"], symgen.Options(frames=("ghost",)))


# ---------------------------------------------------------------- linear growth
CHAIN_SIZES = (5, 10, 20, 40, 80)


@cache
def ops_per_link(kernel: str) -> dict[int, float]:
    return {
        n: symgen.generate(spatial_chain(n), [kernel]).op_counts()[kernel]["total"] / n
        for n in CHAIN_SIZES
    }


@pytest.mark.parametrize("kernel", ["inverse_dynamics", "forward_dynamics_aba"])
def test_programs_grow_linearly_with_the_number_of_links(kernel):
    per_link = ops_per_link(kernel)
    assert abs(per_link[80] / per_link[10] - 1) <= 0.20, per_link


def test_chain_kernels_are_correct():
    """The chain used for the growth test is itself checked (n = 10)."""
    ks = symgen.generate(spatial_chain(10), ["inverse_dynamics", "forward_dynamics_aba"])
    rng = np.random.default_rng(2)
    q, v, a, tau = random_state(ks.model, rng)
    check_kernel_set(ks, {"q": q, "v": v, "a": a, "tau": tau})
    assert relative_error(ks.evaluate("forward_dynamics_aba", q=q, v=v, tau=tau)["a"],
                          ref.forward_dynamics(ks.model, q, v, tau)) < 1e-10
