"""The inertial-parameter regressor (``regressor``: the Newton-Euler program differentiated
along the parameters, symgen.formulations.regressor) and the base parameters
(symgen.reference.base_parameters, ``base_regressor``), compiled, against

- Pinocchio's computeJointTorqueRegressor (same parameter order per body; rows and blocks
  matched by joint names) on the UR5, the Panda (fingers as independent joints) and the
  PUMA 560: 1e-10 relative (the same Newton-Euler sums in another order);
- inverse dynamics: Y π = τ on random trees with every joint type and the robots (1e-12
  relative: a linear map evaluated two ways);
- the number of base parameters: the numerical rank of Pinocchio's regressor stacked over
  40 random states (seed 1), with a clear gap in its singular values;
- identification (examples/identify_robot.py): least squares on simulated torques recovers
  the base parameters to 1e-8 noise-free, and within 5 standard deviations of the
  estimate's own covariance σ²(WᵀW)⁻¹ with noise.

States: seed 2 (random configurations on the joint manifolds, v and a standard normal).
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest
from paths import EXAMPLES, ROOT
from random_models import build, random_spec, random_state

import symgen
from symgen.io.robots import robot_urdf
from symgen.reference import random_configuration
from symgen.reference.base_parameters import base_parameters, inertial_parameters

pin = pytest.importorskip("pinocchio")

from symgen.peers.pinocchio import Bridge, pin_model_from_symgen  # noqa: E402

KERNELS = ["regressor", "base_regressor", "inverse_dynamics"]


def _rel(a, b) -> float:
    b = np.asarray(b)
    return float(np.max(np.abs(np.asarray(a) - b)) / max(1.0, float(np.max(np.abs(b)))))


def load(name: str) -> symgen.Model:
    if name == "puma560":
        return symgen.load(EXAMPLES / "puma560.yaml")
    return symgen.load(robot_urdf(name), couplings=False)


@cache
def robot(name: str):
    model = load(name)
    lib = symgen.compile_kernels(symgen.generate(model, KERNELS), vectorize=None)
    return model, lib, Bridge(model, pin_model_from_symgen(model))


ROBOTS = ["ur5", "panda", "puma560"]


@pytest.mark.parametrize("name", ROBOTS)
def test_regressor_matches_pinocchio_and_inverse_dynamics(name):
    model, lib, br = robot(name)
    pi = inertial_parameters(model)
    rng = np.random.default_rng(2)
    for _ in range(3):
        q = random_configuration(model, rng)
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        y = lib.regressor(q, v, a)
        expected = pin.computeJointTorqueRegressor(br.pin_model, br.data, br.q_to_pin(q),
                                                   br.v_to_pin(v), br.v_to_pin(a))
        assert _rel(y, br.regressor_from_pin(np.asarray(expected))) <= 1e-10
        tau = lib.inverse_dynamics(q, v, a)
        assert _rel(y @ pi, tau) <= 1e-12
        base = base_parameters(model)
        assert _rel(lib.base_regressor(q, v, a) @ base.of(pi), tau) <= 1e-10


@pytest.mark.parametrize("name", ROBOTS)
def test_base_parameter_count_is_the_rank_of_pinocchios_regressor(name):
    model, _, br = robot(name)
    rng = np.random.default_rng(1)
    stacked = []
    for _ in range(40):
        q = random_configuration(model, rng)
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        stacked.append(np.asarray(pin.computeJointTorqueRegressor(
            br.pin_model, br.data, br.q_to_pin(q), br.v_to_pin(v), br.v_to_pin(a))))
    sigma = np.linalg.svd(np.vstack(stacked), compute_uv=False)
    count = base_parameters(model).count
    # a clear gap: the last base singular value far above the first dependent one
    assert sigma[count - 1] > 1e-6 * sigma[0] > 1e3 * sigma[count]


@pytest.mark.parametrize("seed", range(3))
def test_random_tree_regressor_reproduces_inverse_dynamics(seed):
    model = build(random_spec(seed))
    ks = symgen.generate(model, ["regressor", "inverse_dynamics"])
    lib = symgen.compile_kernels(ks, vectorize=None)
    pi = inertial_parameters(model)
    armature = np.array([float(x) for x in model.armature])
    rng = np.random.default_rng(2)
    for _ in range(2):
        q, v, a, _ = random_state(model, rng)
        tau = lib.inverse_dynamics(q, v, a)
        assert _rel(lib.regressor(q, v, a) @ pi + armature * a, tau) <= 1e-12


def test_identification_example_recovers_the_base_parameters(tmp_path):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(ROOT / "examples" / "identify_robot.py"), "ur5",
                          "--samples", "120"], capture_output=True, text=True, timeout=600,
                         cwd=tmp_path).stdout
    exact = float(re.search(r"noise-free: largest relative error of the base parameters "
                            r"([0-9.e+-]+)", out).group(1))
    sigmas = float(re.search(r"largest error ([0-9.e+-]+) standard deviations", out).group(1))
    assert exact <= 1e-8 and sigmas <= 5.0, out
