"""Every generated kernel, evaluated from its Program, against the independent numpy
reference (symgen.reference) and, for forward dynamics and the mass-matrix inverse, against
Pinocchio: real robots from example-robot-data and random trees with every joint type.

Tolerance: relative error ≤ 1e-10 (max|a − b| / max(max|b|, 1)); seeds are fixed."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from kernel_checks import TOLERANCE, check_kernel_set, relative_error
from random_models import JOINT_TYPES, build, pin_model_from_spec, random_forces, random_spec
from random_models import random_state as random_tree_state

import symgen
from symgen import reference as ref
from symgen.io.robots import robot_urdf
from symgen.kernels import KERNELS
from symgen.peers.pinocchio import Bridge, pin_model_from_symgen

ROBOTS = [("panda", False), ("ur5", False), ("xarm7", False), ("solo12", True)]
TREE_SEEDS = range(24)
#: Seeds checked in the default tier (they already cover every joint type); the others run
#: in the slow tier (``pytest -m slow``), which CI also runs.
FAST_TREE_SEEDS = range(6)
SEED_PARAMS = [s if s in FAST_TREE_SEEDS else pytest.param(s, marks=pytest.mark.slow)
               for s in TREE_SEEDS]
#: Every tree kernel but those built from other programs (derivatives, linearization,
#: regressors: their own tests, tests/kernels/test_derivatives.py, test_linearization.py,
#: test_regressor.py, against Pinocchio, differences and hand values).
DERIVED = tuple(k for k, spec in KERNELS.items() if spec.on_request)
ALL_KERNELS = [k for k in KERNELS if k not in DERIVED]
WITH_FORCES = symgen.Options(external_forces=True)


@cache
def robot(name: str, floating: bool) -> symgen.Model:
    return symgen.load(robot_urdf(name), floating_base=floating)


FD_KERNELS = ("forward_dynamics", "forward_dynamics_aba", "forward_dynamics_ltdl")


@cache
def robot_kernels(name: str, floating: bool) -> symgen.KernelSet:
    """Every kernel; a model with couplings (the Panda's fingers) has no articulated-body
    variant (one hinge per DOF is what that recursion needs)."""
    model = robot(name, floating)
    names = [k for k in ALL_KERNELS if not (model.coupled and k.endswith("_aba"))]
    return symgen.generate(model, names, WITH_FORCES)


def robot_state(model: symgen.Model, rng: np.random.Generator) -> dict:
    return {
        "q": ref.random_configuration(model, rng),
        "v": rng.normal(size=model.nv),
        "a": rng.normal(size=model.nv),
        "tau": rng.normal(size=model.nv),
        "dt": 0.02,
        "f_ext_dict": {model.body_names[-1]: rng.normal(size=6),
                       model.body_names[0]: rng.normal(size=6)},
    }


@pytest.mark.parametrize(("name", "floating"), ROBOTS)
def test_robot_kernels_match_reference(name, floating):
    ks = robot_kernels(name, floating)
    # every tree kernel but the loop-closure ones, which a model without loops has not
    # (and, with couplings, but the articulated-body variant; without, the embedding ones)
    assert set(ks.kernel_of.values()) == {
        k for k, spec in KERNELS.items()
        if not spec.loops and not (ks.model.coupled and k.endswith("_aba"))
        and not (spec.embedding and not ks.model.coupled) and k not in DERIVED}
    rng = np.random.default_rng(7)
    for _ in range(5):
        check_kernel_set(ks, robot_state(ks.model, rng))


@cache
def tree(seed: int) -> tuple[dict, symgen.KernelSet]:
    spec = random_spec(seed)
    return spec, symgen.generate(build(spec), ALL_KERNELS, WITH_FORCES)


def tree_state(model: symgen.Model, rng: np.random.Generator) -> dict:
    q, v, a, tau = random_tree_state(model, rng)
    return {"q": q, "v": v, "a": a, "tau": tau, "dt": 0.05,
            "f_ext_dict": random_forces(model, rng)}


def test_random_trees_cover_every_joint_type():
    seen = {j.type.value for seed in FAST_TREE_SEEDS for j in build(random_spec(seed)).joints}
    assert seen >= set(JOINT_TYPES) - {"fixed"}  # fixed joints are merged at load time


@pytest.mark.parametrize("seed", SEED_PARAMS)
def test_random_tree_kernels_match_reference(seed):
    _, ks = tree(seed)
    rng = np.random.default_rng(100 + seed)
    for _ in range(2):
        check_kernel_set(ks, tree_state(ks.model, rng))


# ---------------------------------------------------------------- Pinocchio
def compare_with_pinocchio(ks: symgen.KernelSet, br: Bridge, rng: np.random.Generator,
                           state: dict) -> dict[str, float]:
    """forward_dynamics (both methods, with external forces; the articulated-body one only
    without couplings) and mass_matrix_inverse against pin.aba and pin.computeMinverse (for
    mimic joints, which those reject, Pinocchio's crba and rnea: Bridge.forward_dynamics)."""
    q, v, tau = state["q"], state["v"], state["tau"]
    qp, vp, taup = br.q_to_pin(q), br.v_to_pin(v), br.v_to_pin(tau)
    forces = state["f_ext_dict"]
    f_array = np.zeros((ks.model.nbodies, 6))
    for body, f in forces.items():
        f_array[ks.model.body_index(body)] = f
    expected_fd = br.v_from_pin(br.forward_dynamics(qp, vp, taup, br.forces_to_pin(forces)))
    errors = {}
    for name in FD_KERNELS:
        if name not in ks.programs:
            continue
        out = ks.evaluate(name, q=q, v=v, tau=tau, f_ext=f_array)["a"]
        errors[name] = relative_error(out, expected_fd)
    minv = ks.evaluate("mass_matrix_inverse", q=q)["Minv"]
    expected_minv = br.matrix_from_pin(br.mass_matrix_inverse(qp))
    errors["mass_matrix_inverse"] = relative_error(minv, expected_minv)
    return errors


@pytest.mark.parametrize(("name", "floating"), ROBOTS)
def test_robot_forward_dynamics_and_inverse_match_pinocchio(name, floating):
    ks = robot_kernels(name, floating)
    br = Bridge(ks.model, pin_model_from_symgen(ks.model))
    rng = np.random.default_rng(11)
    for _ in range(5):
        errors = compare_with_pinocchio(ks, br, rng, robot_state(ks.model, rng))
        assert max(errors.values()) <= TOLERANCE, errors


@pytest.mark.parametrize("seed", SEED_PARAMS)
def test_random_tree_forward_dynamics_and_inverse_match_pinocchio(seed):
    spec, ks = tree(seed)
    br = Bridge(ks.model, pin_model_from_spec(spec))  # Pinocchio built from the raw spec
    rng = np.random.default_rng(200 + seed)
    for _ in range(2):
        errors = compare_with_pinocchio(ks, br, rng, tree_state(ks.model, rng))
        assert max(errors.values()) <= TOLERANCE, errors


def test_comparison_detects_a_wrong_kernel():
    """The checks can fail: a program of another model's state gives a large error."""
    ks = robot_kernels("panda", False)
    rng = np.random.default_rng(3)
    state = robot_state(ks.model, rng)
    wrong = dict(state, q=ref.random_configuration(ks.model, rng))
    out = ks.evaluate("mass_matrix", q=wrong["q"])["M"]
    assert relative_error(out, ref.mass_matrix(ks.model, state["q"])) > 1e-3
