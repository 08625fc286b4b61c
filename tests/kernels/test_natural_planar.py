"""Automatic planar natural-coordinate modelling: coordinate and constraint counts of the
example mechanisms, and a 2 s simulation of an open planar double pendulum with the
augmented-Lagrangian trapezoidal step against the spatial-operator forward dynamics."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from paths import EXAMPLES

import symgen
from symgen.formulations.natural.planar import planar_model
from symgen.io.builder import ModelBuilder
from symgen.reference.natural import (
    StepSettings,
    augmented_lagrangian_accelerations,
    trapezoidal_step,
)


@pytest.mark.parametrize(("name", "coordinates", "constraints"),
                         [("four_bar", 4, 3), ("slider_crank", 8, 7)])
def test_example_mechanisms_have_one_degree_of_freedom(name, coordinates, constraints):
    nm = planar_model(symgen.load(EXAMPLES / f"{name}.yaml"))
    assert (nm.n, nm.m) == (coordinates, constraints)
    assert nm.dof == 1  # coordinates − independent constraints
    assert nm.rank(nm.q0) == constraints
    np.testing.assert_allclose(nm.phi(nm.q0), 0, atol=1e-14)
    for read in nm.joint_values.values():
        assert abs(read(nm.q0)) < 1e-12


@cache
def double_pendulum() -> symgen.Model:
    b = ModelBuilder("planar_double_pendulum", root="ground", plane="xy",
                     gravity=(0.0, -9.81, 0.0))
    b.body("upper", mass=1.0, com=(0.25, 0.0, 0.0), inertia=(1e-4, 0.0208, 0.0208))
    b.body("lower", mass=0.7, com=(0.2, 0.05, 0.0), inertia=(0.01, 0.015, 0.02))
    b.joint("shoulder", "revolute", "ground", "upper", axis=(0, 0, 1))
    b.joint("elbow", "revolute", "upper", "lower", xyz=(0.5, 0.0, 0.0), axis=(0, 0, 1))
    return b.build()


def rk4_trajectory(model, q, v, duration: float, h: float, every: float) -> dict:
    """Joint angles from the generated spatial-operator forward dynamics, classical RK4."""
    fd = symgen.compile_kernels(symgen.generate(model, ["forward_dynamics"])).forward_dynamics
    tau = np.zeros(model.nv)
    out = {}
    stride = int(round(every / h))
    for k in range(int(round(duration / h))):
        k1 = (v, fd(q, v, tau))
        k2 = (v + h / 2 * k1[1], fd(q + h / 2 * k1[0], v + h / 2 * k1[1], tau))
        k3 = (v + h / 2 * k2[1], fd(q + h / 2 * k2[0], v + h / 2 * k2[1], tau))
        k4 = (v + h * k3[1], fd(q + h * k3[0], v + h * k3[1], tau))
        q = q + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        v = v + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        if (k + 1) % stride == 0:
            out[k + 1] = q.copy()
    return out, stride


@pytest.mark.slow  # 40,000 numpy steps: ~20 s
def test_open_chain_matches_spatial_operator_dynamics(monkeypatch, tmp_path):
    """2 s, from q = (0.3, −0.5) rad, q̇ = (0.5, −1) rad/s: the natural-coordinate
    trapezoidal step (h = 50 µs, 2 Newton iterations) reproduces the joint angles of RK4 on
    the generated spatial-operator forward dynamics (h = 1 ms) to ≤ 1e-6 rad."""
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path / "cache"))
    model = double_pendulum()
    nm = planar_model(model)
    jq, jv = np.array([0.3, -0.5]), np.array([0.5, -1.0])
    reference, stride = rk4_trajectory(model, jq, jv, 2.0, 1e-3, 0.25)
    modeller = nm.modeller
    q, qd = modeller.coordinates_at(jq), modeller.velocities_at(jq, jv)
    np.testing.assert_allclose(nm.phi(q), 0, atol=1e-14)
    qdd = augmented_lagrangian_accelerations(nm, q, qd, alpha=1e9, iterations=3)[-1]
    h = 5e-5
    ratio = int(round(1e-3 / h))
    settings = StepSettings(h=h, iterations=2)
    lam, worst = None, 0.0
    readers = [nm.joint_values[name] for name in model.joint_names]
    for k in range(int(round(2.0 / h))):
        q, qd, qdd, lam = trapezoidal_step(nm, q, qd, qdd, settings, lam)
        step = (k + 1) // ratio
        if (k + 1) % ratio == 0 and step in reference:
            angles = np.array([read(q) for read in readers])
            diff = (angles - reference[step] + np.pi) % (2 * np.pi) - np.pi
            worst = max(worst, float(np.max(np.abs(diff))))
    assert len(reference) == 8
    assert worst <= 1e-6, worst
    assert np.max(np.abs(nm.phi(q))) < 1e-9
