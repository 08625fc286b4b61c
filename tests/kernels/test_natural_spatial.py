"""Automatic spatial natural-coordinate modelling: counts, exact accelerations against the
spatial-operator dynamics, and a 2 s simulation of an open 3-link chain with revolute and
spherical joints with the augmented-Lagrangian trapezoidal step."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

import symgen
from symgen import reference as ref
from symgen.formulations.natural.spatial import spatial_model
from symgen.io.builder import ModelBuilder
from symgen.reference.natural import StepSettings, lagrange_accelerations, trapezoidal_step

INERTIA = ((0.02, 0.001, 0.0), (0.001, 0.03, 0.002), (0.0, 0.002, 0.015))


@cache
def chain() -> symgen.Model:
    """ground -R(y)- l1 -S- l2 -R(skew)- l3, generic COMs and inertias."""
    b = ModelBuilder("rsr_chain", root="ground")
    b.body("l1", mass=1.0, com=(0.05, 0.02, -0.2), inertia=INERTIA)
    b.body("l2", mass=0.8, com=(0.0, 0.03, -0.15), inertia=INERTIA)
    b.body("l3", mass=0.5, com=(0.02, 0.0, -0.1), inertia=INERTIA)
    b.joint("j1", "revolute", "ground", "l1", axis=(0, 1, 0))
    b.joint("j2", "spherical", "l1", "l2", xyz=(0.0, 0.0, -0.4))
    b.joint("j3", "revolute", "l2", "l3", xyz=(0.0, 0.05, -0.3), axis=(1, 0, 0.3))
    return b.build()


def test_counts_and_exact_accelerations():
    model = chain()
    nm = spatial_model(model)
    assert nm.dof == model.nv == 5
    assert nm.rank(nm.q0) == nm.m  # independent constraints
    mod = nm.modeller
    rng = np.random.default_rng(3)
    for _ in range(3):
        jq = ref.random_configuration(model, rng)
        jv = rng.normal(size=model.nv)
        q, qd = mod.coordinates_at(jq), mod.velocities_at(jq, jv)
        np.testing.assert_allclose(nm.phi(q), 0, atol=1e-14)
        np.testing.assert_allclose(nm.phi_q(q) @ qd, 0, atol=1e-14)
        qdd, _ = lagrange_accelerations(nm, q, qd)
        a = ref.forward_dynamics(model, jq, jv, np.zeros(model.nv))

        def velocities(dt, jq=jq, jv=jv, a=a):
            return mod.velocities_at(ref.integrate(model, jq, jv + 0.5 * dt * a, dt),
                                     jv + dt * a)

        eps = 1e-6
        expected = (velocities(eps) - velocities(-eps)) / (2 * eps)
        assert np.max(np.abs(qdd - expected)) < 1e-7 * max(np.max(np.abs(expected)), 1)
        assert abs(nm.joint_values["j1"](q) - jq[0]) < 1e-12
        rel = ref.forward_kinematics(model, jq)
        np.testing.assert_allclose(nm.joint_values["j2"](q),
                                   rel["l1"][:3, :3].T @ rel["l2"][:3, :3], atol=1e-12)


def lie_rk4(model, q, v, duration, h, every):
    """RK4 on the joint manifolds with the generated spatial-operator forward dynamics."""
    fd = symgen.compile_kernels(symgen.generate(model, ["forward_dynamics"])).forward_dynamics
    tau = np.zeros(model.nv)
    out, stride = {}, int(round(every / h))
    for k in range(int(round(duration / h))):
        k1v, k1q = fd(q, v, tau), v
        k2q = v + h / 2 * k1v
        k2v = fd(ref.integrate(model, q, k1q, h / 2), k2q, tau)
        k3q = v + h / 2 * k2v
        k3v = fd(ref.integrate(model, q, k2q, h / 2), k3q, tau)
        k4q = v + h * k3v
        k4v = fd(ref.integrate(model, q, k3q, h), k4q, tau)
        q = ref.integrate(model, q, (k1q + 2 * k2q + 2 * k3q + k4q) / 6, h)
        v = v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        if (k + 1) % stride == 0:
            out[(k + 1) // stride] = q.copy()
    return out


@pytest.mark.slow  # about 70 s: a 2 s simulation of the spatial R-S-R chain
def test_open_chain_matches_spatial_operator_dynamics(monkeypatch, tmp_path):
    """2 s from a generic state: revolute angles and the spherical joint's relative
    rotation from the natural-coordinate step (h = 50 µs, 2 Newton iterations) agree with
    RK4 (h = 0.25 ms) on the generated spatial-operator forward dynamics to ≤ 1e-6 rad."""
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path / "cache"))
    model = chain()
    nm = spatial_model(model)
    quat = np.array([0.1, -0.2, 0.05, 1.0])
    jq = np.concatenate([[0.3], quat / np.linalg.norm(quat), [-0.4]])
    jv = np.array([0.5, 0.3, -0.6, 0.2, -1.0])
    reference = lie_rk4(model, jq, jv, 2.0, 2.5e-4, 0.25)
    mod = nm.modeller
    q, qd = mod.coordinates_at(jq), mod.velocities_at(jq, jv)
    qdd, _ = lagrange_accelerations(nm, q, qd)
    h = 5e-5
    per_sample = int(round(0.25 / h))
    settings = StepSettings(h=h, iterations=2)
    lam, worst = None, 0.0
    for k in range(int(round(2.0 / h))):
        q, qd, qdd, lam = trapezoidal_step(nm, q, qd, qdd, settings, lam)
        if (k + 1) % per_sample:
            continue
        rq = reference[(k + 1) // per_sample]
        poses = ref.forward_kinematics(model, rq)
        rel = poses["l1"][:3, :3].T @ poses["l2"][:3, :3]
        r_err = nm.joint_values["j2"](q).T @ rel
        errors = [
            abs(nm.joint_values["j1"](q) - rq[0]),
            abs((nm.joint_values["j3"](q) - rq[5] + np.pi) % (2 * np.pi) - np.pi),
            float(np.linalg.norm(r_err - r_err.T) / np.sqrt(2)),  # ≈ rotation angle
        ]
        worst = max(worst, *errors)
    assert len(reference) == 8
    assert worst <= 1e-6, worst


def test_every_joint_type_gives_the_spatial_operator_accelerations():
    """A tree with free, universal, cylindrical, prismatic, planar, revolute and spherical
    joints: DOF = nv, and Lagrange-multiplier accelerations in natural coordinates equal the
    spatial-operator forward dynamics (mapped by differentiating the natural velocities)."""
    b = ModelBuilder("all_joint_types", root="ground")
    for k, name in enumerate("abcdefg"):
        b.body(name, mass=1.0 + 0.1 * k, com=(0.03, -0.02, 0.1), inertia=INERTIA)
    b.joint("free", "free", "ground", "a")
    b.joint("uni", "universal", "a", "b", xyz=(0.1, 0.2, 0.3), axis=(0, 0, 1),
            axis2=(0.6, 0.8, 0))
    b.joint("cyl", "cylindrical", "b", "c", xyz=(0.0, 0.1, 0.4), axis=(0.3, 0.4, 1.2))
    b.joint("pri", "prismatic", "a", "d", xyz=(0.2, -0.1, 0.0), axis=(1, 0.2, 0.1))
    b.joint("pla", "planar", "d", "e", xyz=(0.0, 0.0, 0.2), rpy=(0.4, 0, 0), axis=(0, 0, 1))
    b.joint("rev", "revolute", "e", "f", xyz=(0.1, 0.0, 0.2), axis=(0, 1, 0))
    b.joint("sph", "spherical", "c", "g", xyz=(0.1, 0.1, 0.1))
    model = b.build()
    nm = spatial_model(model)
    assert nm.dof == model.nv == 18 and nm.rank(nm.q0) == nm.m
    mod = nm.modeller
    rng = np.random.default_rng(1)
    for _ in range(3):
        jq, jv = ref.random_configuration(model, rng), rng.normal(size=model.nv)
        q, qd = mod.coordinates_at(jq), mod.velocities_at(jq, jv)
        assert np.max(np.abs(nm.phi(q))) < 1e-12
        assert np.max(np.abs(nm.phi_q(q) @ qd)) < 1e-12
        qdd, _ = lagrange_accelerations(nm, q, qd)
        a = ref.forward_dynamics(model, jq, jv, np.zeros(model.nv))

        def velocities(dt, jq=jq, jv=jv, a=a):
            return mod.velocities_at(ref.integrate(model, jq, jv + 0.5 * dt * a, dt),
                                     jv + dt * a)

        expected = (velocities(1e-6) - velocities(-1e-6)) / 2e-6
        assert np.max(np.abs(qdd - expected)) < 1e-7 * max(np.max(np.abs(expected)), 1)
