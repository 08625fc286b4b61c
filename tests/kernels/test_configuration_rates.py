"""configuration_rates (issue 29): q̇ = rate(q, v), the right-hand side of q for standard
ODE solvers, compiled, against

- the numpy reference (symgen.reference.configuration_rates: ½ Ω(ω) q, Solà 2017) through
  ``symgen verify``'s comparison, on the spinning top (a spherical joint) and the same top
  on a floating base (a free joint);
- ``symgen.simulation.rates.ConfigurationRates`` (numpy, the simulate helper's), on random
  trees with every joint type;
- integrate: q ⊕ v·δ = q + δ q̇ + O(δ²) (the error falls 4× per halving of δ);
- scipy's solve_ivp on q̇ = rate(q, v) at a constant body twist, whose exact solution is
  q ⊕ v·T (the exponential integrate applies).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from paths import EXAMPLES
from random_models import random_model
from scipy.integrate import solve_ivp

import symgen
from symgen import reference as ref
from symgen.apps.verify import random_states, verify_compiled
from symgen.model import JointType
from symgen.simulation.rates import ConfigurationRates

KERNELS = ["configuration_rates", "integrate"]
#: Random trees that together hold every joint type (tests/random_models.py).
SEEDS = range(6)


@cache
def top(floating: bool):
    model = symgen.load(EXAMPLES / "spinning_top.yaml", floating_base=floating)
    ks = symgen.generate(model, KERNELS)
    return model, ks, symgen.compile_kernels(ks, vectorize=None)


@cache
def tree(seed: int):
    model = random_model(seed)
    return model, symgen.generate(model, KERNELS)


def _quaternions(model: symgen.Model) -> list[slice]:
    """The q slices of the unit quaternions (spherical and free joints)."""
    out = []
    for joint in model.independent_joints:
        qs = model.q_slices[joint.name]
        if joint.type in (JointType.SPHERICAL, JointType.FREE):
            out.append(slice(qs.stop - 4, qs.stop))
    return out


@pytest.mark.parametrize("floating", [False, True])
def test_verify_passes_with_a_spherical_and_a_free_joint(floating):
    model, ks, lib = top(floating)
    types = {j.type for j in model.independent_joints}
    assert JointType.SPHERICAL in types and (JointType.FREE in types) == floating
    report = verify_compiled(lib, random_states(ks, 20, 0))
    assert not report.failed and len(report.performed) == 2, report.checks


def test_the_numpy_helpers_of_simulate_agree_on_every_joint_type():
    seen = set()
    for seed in SEEDS:
        model, ks = tree(seed)
        seen |= {j.type for j in model.independent_joints}
        rates = ConfigurationRates(model)
        rng = np.random.default_rng(seed)
        for _ in range(3):
            q = ref.random_configuration(model, rng)
            v = rng.normal(size=model.nv)
            qdot = ks.evaluate("configuration_rates", q=q, v=v)["qdot"]
            assert np.allclose(qdot, rates.rate(q, v), rtol=0, atol=1e-14)
            assert np.allclose(qdot, ref.configuration_rates(model, q, v), rtol=0, atol=1e-14)
            for s in _quaternions(model):  # tangent to the unit sphere: q·q̇ = 0
                assert abs(q[s] @ qdot[s]) <= 1e-15
    assert seen >= set(JointType) - {JointType.FIXED}


@pytest.mark.parametrize("floating", [False, True])
def test_rates_are_the_derivative_of_integrate(floating):
    # |q ⊕ v·δ − (q + δ q̇)| = O(δ²): a quarter per halving of δ, in every entry the
    # exponential moves (the vector joints' entries are exact: q + v·δ)
    model, _, lib = top(floating)
    rng = np.random.default_rng(3)
    for _ in range(4):
        q = ref.random_configuration(model, rng)
        v = rng.normal(size=model.nv)
        qdot = lib.configuration_rates(q, v)
        errors = []
        for delta in (1e-2, 5e-3, 2.5e-3, 1.25e-3):
            step = lib.integrate(q, v, [delta])
            errors.append(float(np.max(np.abs(step - (q + delta * qdot)))))
        assert errors[0] <= 1e-2**2 * float(np.sum(v * v))  # |q̈| ≤ |v|² on these joints
        ratios = [errors[k] / errors[k + 1] for k in range(3)]
        assert all(3.8 < r < 4.2 for r in ratios), ratios


@pytest.mark.parametrize("floating", [False, True])
def test_solve_ivp_on_the_rates_reaches_the_exponential(floating):
    # a constant body twist v: q(T) = q ⊕ v·T exactly (integrate's exponential); scipy's
    # DOP853 on q̇ = rate(q, v) reaches it to its tolerance, the quaternions' norm drifting
    # from 1 by no more
    model, _, lib = top(floating)
    rng = np.random.default_rng(4)
    q0 = ref.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    duration = 2.0
    run = solve_ivp(lambda t, q: lib.configuration_rates(q, v), (0.0, duration), q0,
                    method="DOP853", rtol=1e-12, atol=1e-12)
    assert run.success
    q_end = run.y[:, -1]
    assert np.max(np.abs(q_end - lib.integrate(q0, v, [duration]))) <= 1e-9
    for s in _quaternions(model):
        assert abs(np.linalg.norm(q_end[s]) - 1.0) <= 1e-10
