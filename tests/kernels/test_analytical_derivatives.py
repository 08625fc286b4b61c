"""The analytical derivatives of inverse dynamics (symgen.formulations.analytical_derivatives:
Carpentier & Mansard 2018's recursions in one frame) against the differentiated Newton-Euler
program (reverse mode, symgen.ir.autodiff), which is itself checked against central
differences and Pinocchio (tests/kernels/test_derivatives.py), and against Pinocchio here.

Every joint type is covered (universal and planar joints split into 1-DOF hinges). Both
sides are programs evaluated in Python in double precision; they compute the same
derivatives by different sums, so they agree to rounding: ∂ID to ~nv·ε of the largest entry
(bound 1e-12 relative to max(1, |J|∞), nv ≤ 18 here); ∂FD, two different solves with M, to
~cond(M)·nv·ε (cond(M) ≤ 4e2 on these trees, ≤ 1e5 on the robots: bound 1e-10, as
tests/kernels/test_derivatives.py bounds the forward derivatives against Pinocchio by 1e-9).
Seeds: trees 0-11 (every joint type, random parents, placements and inertias), states seed
5, external forces on two random bodies.
"""

from __future__ import annotations

import numpy as np
import pytest
from random_models import build, parametric_arm, random_forces, random_spec, random_state

import symgen
from symgen.formulations.tree.context import TreeTarget
from symgen.formulations.tree.options import Options
from symgen.io.robots import robot_urdf
from symgen.ir.printer import evaluate
from symgen.model import Model
from symgen.registry import formulation, get

#: Agreement bound per kernel (module docstring).
AGREEMENT = {"inverse_dynamics_derivatives": 1e-12, "forward_dynamics_derivatives": 1e-10}


def _rel(a, b) -> float:
    b = np.asarray(b)
    return float(np.max(np.abs(np.asarray(a) - b)) / max(1.0, float(np.max(np.abs(b)))))


def _program(model: Model, kernel: str, method: str, forces: bool = False):
    context = formulation("tree").context(model, Options(external_forces=forces))
    spec = get(kernel)
    return spec.derive(context, TreeTarget(spec.name, method=method), spec)


def _inputs(model: Model, program, rng: np.random.Generator) -> dict:
    q, v, a, tau = random_state(model, rng)
    values = {"q": q, "v": v, "a": a, "tau": tau}
    if any(s.name == "f_ext" for s in program.inputs):
        forces = np.zeros((model.nbodies, 6))
        for name, f in random_forces(model, rng).items():
            forces[model.body_index(name)] = f
        values["f_ext"] = forces.ravel()
    if model.parameters:
        values["params"] = np.array([float(p.default) for p in model.parameters]) * \
            rng.uniform(0.5, 1.5, len(model.parameters))
    return {s.name: values[s.name] for s in program.inputs}


def _agree(model: Model, kernel: str, methods: tuple[str, str], forces: bool = False,
           states: int = 2) -> None:
    ours, theirs = (_program(model, kernel, m, forces) for m in methods)
    rng = np.random.default_rng(5)
    for _ in range(states):
        values = _inputs(model, ours, rng)
        got, expected = evaluate(ours, **values), evaluate(theirs, **values)
        for key in expected:
            assert _rel(got[key], expected[key]) <= AGREEMENT[kernel], (model.name, key)


@pytest.mark.parametrize("seed", range(12))
def test_random_trees_agree_with_the_differentiated_program(seed):
    model = build(random_spec(seed))
    _agree(model, "inverse_dynamics_derivatives", ("analytical", "reverse"), forces=True)
    _agree(model, "forward_dynamics_derivatives", ("analytical", "direct"), forces=True)


@pytest.mark.parametrize("jtype", ["revolute", "prismatic", "helical", "cylindrical",
                                   "spherical", "free", "universal", "planar"])
def test_every_joint_type(jtype):
    """Chains of one joint type (universal and planar split into 1-DOF hinges)."""
    model = build(random_spec(3, n_bodies=3, joint_types=(jtype,)))
    _agree(model, "inverse_dynamics_derivatives", ("analytical", "reverse"), states=1)


def test_couplings_and_parameters():
    """A coupled joint adds its entries to its master's DOF (the Panda's mimic finger); a
    model with runtime parameters (gravity, payload, a link length)."""
    panda = symgen.load(robot_urdf("panda"))
    assert panda.coupled
    _agree(panda, "inverse_dynamics_derivatives", ("analytical", "reverse"), states=1)
    _agree(parametric_arm(), "inverse_dynamics_derivatives", ("analytical", "reverse"))
    _agree(parametric_arm(), "forward_dynamics_derivatives", ("analytical", "via_ltdl"))


def test_floating_base_matches_pinocchio():
    """Solo12 with a free-flyer (frame 0 is the base's body frame) against Pinocchio's
    computeRNEADerivatives and computeABADerivatives (bound 1e-9, as in
    test_derivatives.py: cond(M) up to 1e5 for the forward derivatives)."""
    pin = pytest.importorskip("pinocchio")
    from symgen.peers.pinocchio import Bridge, pin_model_from_symgen

    model = symgen.load(robot_urdf("solo12"), floating_base=True, couplings=False)
    br = Bridge(model, pin_model_from_symgen(model))
    id_program = _program(model, "inverse_dynamics_derivatives", "analytical")
    fd_program = _program(model, "forward_dynamics_derivatives", "analytical")
    rng = np.random.default_rng(5)
    for _ in range(2):
        q, v, a, tau = random_state(model, rng)
        qp, vp = br.q_to_pin(q), br.v_to_pin(v)
        got = evaluate(id_program, q=q, v=v, a=a)
        dq, dv, _ = pin.computeRNEADerivatives(br.pin_model, br.data, qp, vp, br.v_to_pin(a))
        assert _rel(got["dtau_dq"], br.matrix_from_pin(dq)) <= 1e-9
        assert _rel(got["dtau_dv"], br.matrix_from_pin(dv)) <= 1e-9
        got = evaluate(fd_program, q=q, v=v, tau=tau)
        dq, dv, dtau = pin.computeABADerivatives(br.pin_model, br.data, qp, vp,
                                                 br.v_to_pin(tau))
        dtau = np.triu(dtau) + np.triu(dtau, 1).T
        for key, theirs in zip(("dqdd_dq", "dqdd_dv", "dqdd_dtau"), (dq, dv, dtau),
                               strict=True):
            assert _rel(got[key], br.matrix_from_pin(theirs)) <= 1e-9
