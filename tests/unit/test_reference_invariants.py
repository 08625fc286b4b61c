"""Invariants of symgen.reference that need no other implementation: M symmetric positive
definite, ID ∘ FD = identity, energy conservation, T = ½ vᵀ M v, power balance, and
finite-difference checks of the Jacobians and J̇v."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from random_models import random_forces, random_model, random_state

import symgen.reference as ref
from symgen.io.builder import ModelBuilder

SEEDS = range(24)
VECTOR_JOINTS = (
    "revolute",
    "continuous",
    "prismatic",
    "helical",
    "cylindrical",
    "universal",
    "planar",
)


def rel(a, b) -> float:
    """max|a − b| / max(max|b|, 1)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1.0))


@cache
def tree(seed: int):
    return random_model(seed)


def states(model, seed: int, n: int = 2):
    rng = np.random.default_rng(seed)
    return [random_state(model, rng) for _ in range(n)]


def vee(w: np.ndarray) -> np.ndarray:
    return np.array([w[2, 1] - w[1, 2], w[0, 2] - w[2, 0], w[1, 0] - w[0, 1]]) / 2.0


# --------------------------------------------------------------------------- dynamics
@pytest.mark.parametrize("seed", SEEDS)
def test_mass_matrix_symmetric_positive_definite(seed):
    model = tree(seed)
    for q, *_ in states(model, seed, 3):
        m = ref.mass_matrix(model, q)
        assert rel(m, m.T) <= 1e-14
        assert np.min(np.linalg.eigvalsh(m)) > 0.0


@pytest.mark.parametrize("seed", SEEDS)
def test_inverse_dynamics_inverts_forward_dynamics(seed):
    model = tree(seed)
    rng = np.random.default_rng(100 + seed)
    for q, v, _, tau in states(model, seed, 3):
        qdd = ref.forward_dynamics(model, q, v, tau)
        assert rel(ref.inverse_dynamics(model, q, v, qdd), tau) <= 1e-9
        f_ext = random_forces(model, rng)
        qdd = ref.forward_dynamics(model, q, v, tau, f_ext)
        assert rel(ref.inverse_dynamics(model, q, v, qdd, f_ext), tau) <= 1e-9


@pytest.mark.parametrize("seed", SEEDS[:8])
def test_crba_rnea_aba_are_consistent(seed):
    """M e_k = ID(q, 0, e_k) − g(q); FD = M⁻¹ (τ − C v − g); bias = ID(q, v, 0)."""
    model = tree(seed)
    for q, v, _, tau in states(model, seed):
        m, g = ref.mass_matrix(model, q), ref.gravity_forces(model, q)
        zero = np.zeros(model.nv)
        cols = np.column_stack(
            [ref.inverse_dynamics(model, q, zero, e) - g for e in np.eye(model.nv)]
        )
        assert rel(cols, m) <= 1e-12
        b = ref.bias_forces(model, q, v)
        assert rel(b, ref.inverse_dynamics(model, q, v, zero)) == 0.0
        assert rel(ref.forward_dynamics(model, q, v, tau), np.linalg.solve(m, tau - b)) <= 1e-9


@pytest.mark.parametrize("seed", SEEDS[:8])
def test_kinetic_energy_is_half_v_m_v(seed):
    model = tree(seed)
    for q, v, *_ in states(model, seed):
        expected = 0.5 * v @ ref.mass_matrix(model, q) @ v
        assert abs(ref.kinetic_energy(model, q, v) - expected) <= 1e-12 * max(expected, 1.0)


@pytest.mark.parametrize("seed", SEEDS[:8])
def test_potential_energy_rate_is_minus_gravity_power(seed):
    """dU/dt along q ⊕ t v equals g(q)ᵀ v, i.e. minus the power of gravity."""
    model = tree(seed)
    h = 1e-5
    for q, v, *_ in states(model, seed):
        rate = (
            ref.potential_energy(model, ref.integrate(model, q, v, h))
            - ref.potential_energy(model, ref.integrate(model, q, v, -h))
        ) / (2 * h)
        expected = ref.gravity_forces(model, q) @ v
        assert abs(rate - expected) <= 1e-6 * max(abs(expected), 1.0)


# --------------------------------------------------------------------------- kinematics
@pytest.mark.parametrize("seed", SEEDS[:8])
def test_jacobian_matches_finite_differences_of_placements(seed):
    model = tree(seed)
    h = 1e-6
    for q, v, *_ in states(model, seed):
        plus = ref.forward_kinematics(model, ref.integrate(model, q, v, h))
        minus = ref.forward_kinematics(model, ref.integrate(model, q, v, -h))
        here = ref.forward_kinematics(model, q)
        for name in [*model.body_names, *model.frame_names]:
            rot = here[name][:3, :3]
            omega = vee((plus[name][:3, :3] - minus[name][:3, :3]) / (2 * h) @ rot.T)
            lin = (plus[name][:3, 3] - minus[name][:3, 3]) / (2 * h)
            twist = np.concatenate([omega, lin])
            assert rel(ref.frame_jacobian(model, q, name) @ v, twist) <= 1e-7
            local = ref.frame_jacobian(model, q, name, "local") @ v
            assert rel(local, np.concatenate([rot.T @ omega, rot.T @ lin])) <= 1e-7
            world = ref.frame_jacobian(model, q, name, "world") @ v
            p = here[name][:3, 3]
            assert rel(world, np.concatenate([omega, lin - np.cross(omega, p)])) <= 1e-7


@pytest.mark.parametrize("seed", SEEDS[:8])
def test_jacobian_dot_v_matches_finite_differences(seed):
    """J̇v = d/dt (J(q ⊕ t v) v) at t = 0 (the velocity v is constant along that curve)."""
    model = tree(seed)
    h = 1e-6
    for q, v, *_ in states(model, seed):
        qp, qm = ref.integrate(model, q, v, h), ref.integrate(model, q, v, -h)
        rot = ref.forward_kinematics(model, q)
        for name in [*model.body_names, *model.frame_names]:
            fd = (ref.frame_jacobian(model, qp, name) - ref.frame_jacobian(model, qm, name)) @ v
            jdv = ref.frame_jacobian_dot_v(model, q, v, name)
            assert rel(jdv, fd / (2 * h)) <= 1e-6
            r = rot[name][:3, :3]
            local = ref.frame_jacobian_dot_v(model, q, v, name, "local")
            assert rel(local, np.concatenate([r.T @ jdv[:3], r.T @ jdv[3:]])) <= 1e-12


# --------------------------------------------------------------------------- integration
def test_integrate_round_trip_and_unit_quaternions():
    for seed in SEEDS[:8]:
        model = tree(seed)
        for q, v, *_ in states(model, seed):
            q1 = ref.integrate(model, q, v, 0.3)
            assert rel(ref.integrate(model, q1, v, -0.3), q) <= 1e-12
            assert rel(ref.integrate(model, q, v, 0.0), q) == 0.0
            for joint in model.joints:
                if joint.type.value in ("spherical", "free"):
                    quat = q1[model.q_slices[joint.name]][-4:]
                    assert abs(np.linalg.norm(quat) - 1.0) <= 1e-14


def test_neutral_configuration_puts_bodies_at_their_placements():
    model = tree(1)
    fk = ref.forward_kinematics(model, ref.neutral_configuration(model))
    for i, joint in enumerate(model.joints):
        parent = fk[joint.parent]
        pose = np.eye(4)
        pose[:3, :3] = np.array(joint.placement.rotation)
        pose[:3, 3] = joint.placement.translation
        assert rel(fk[model.bodies[i].name], parent @ pose) <= 1e-14


# --------------------------------------------------------------------------- energy
def rk4(model, q, v, dt, steps):
    """Classical RK4 on (q, v) for vector joints (q̇ = v), τ = 0; yields every state."""
    tau = np.zeros(model.nv)
    fd = ref.forward_dynamics
    for _ in range(steps):
        k1q, k1v = v, fd(model, q, v, tau)
        k2q, k2v = v + 0.5 * dt * k1v, fd(model, q + 0.5 * dt * k1q, v + 0.5 * dt * k1v, tau)
        k3q, k3v = v + 0.5 * dt * k2v, fd(model, q + 0.5 * dt * k2q, v + 0.5 * dt * k2v, tau)
        k4q, k4v = v + dt * k3v, fd(model, q + dt * k3q, v + dt * k3v, tau)
        q = q + dt / 6.0 * (k1q + 2 * k2q + 2 * k3q + k4q)
        v = v + dt / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v)
        yield q, v


def energy_drift(model, q, v, dt, steps, every=50):
    """max |E − E0| / max(|E0|, max T), and the range of T along the trajectory."""

    def energy(q, v):
        t = ref.kinetic_energy(model, q, v)
        return t, t + ref.potential_energy(model, q)

    t0, e0 = energy(q, v)
    drift, t_min, t_max = 0.0, t0, t0
    for k, (qk, vk) in enumerate(rk4(model, q, v, dt, steps)):
        if k % every == every - 1:
            t, e = energy(qk, vk)
            drift, t_min, t_max = max(drift, abs(e - e0)), min(t_min, t), max(t_max, t)
    return drift / max(abs(e0), t_max), t_min, t_max


def spatial_chain():
    """Three links, non-parallel axes (a universal joint at the base), gravity on."""
    b = ModelBuilder("chain3", root="world")
    b.body("l1", mass=1.0, com=(0.1, 0.05, -0.3), inertia=(0.03, 0.025, 0.01, 0.002, 0.001, -0.001))
    b.body("l2", mass=0.8, com=(0.0, 0.1, -0.25), inertia=(0.02, 0.02, 0.008))
    b.body("l3", mass=0.5, com=(0.05, 0.0, -0.2), inertia=(0.01, 0.012, 0.004))
    b.joint("j1", "universal", "world", "l1", axis=(0, 0, 1), axis2=(1, 0, 0))
    b.joint("j2", "revolute", "l1", "l2", xyz=(0, 0, -0.6), rpy=(0.3, 0.2, 0), axis=(0, 1, 0.3))
    b.joint("j3", "revolute", "l2", "l3", xyz=(0.05, 0, -0.5), axis=(1, 0.2, 0))
    return b.build()


@pytest.mark.slow  # about 40 s of reference RK4
def test_energy_is_conserved_by_a_swinging_spatial_chain():
    model = spatial_chain()
    q0, v0 = np.array([0.3, 0.9, -0.4, 0.7]), np.array([1.0, -0.5, 2.0, 0.3])
    drift, t_min, t_max = energy_drift(model, q0, v0, dt=1e-4, steps=20000)
    assert t_max > 2.0 * t_min + 0.5  # a real swing, energy moves between T and U
    assert drift <= 1e-6


@pytest.mark.parametrize("seed", [3, 11])
def test_energy_is_conserved_with_every_vector_joint_type(seed):
    model = random_model(seed, n_bodies=7, joint_types=VECTOR_JOINTS)
    rng = np.random.default_rng(seed)
    q0, v0 = rng.uniform(-1, 1, model.nq), rng.uniform(-1, 1, model.nv)
    drift, _, _ = energy_drift(model, q0, v0, dt=1e-3, steps=300, every=10)
    assert drift <= 1e-6


# --------------------------------------------------------------------------- inputs
def test_inputs_are_validated_with_clear_errors():
    model = tree(2)
    q, v, a, _ = states(model, 0, 1)[0]
    with pytest.raises(ValueError, match=rf"q must have shape \({model.nq},\), got \(3,\)"):
        ref.mass_matrix(model, np.zeros(3))
    with pytest.raises(ValueError, match=rf"v must have shape \({model.nv},\)"):
        ref.inverse_dynamics(model, q, v[:-1], a)
    with pytest.raises(ValueError, match="no body or frame named 'nope'"):
        ref.frame_jacobian(model, q, "nope")
    with pytest.raises(ValueError, match="reference must be one of"):
        ref.frame_jacobian(model, q, model.bodies[0].name, "global")
    with pytest.raises(ValueError, match="not a moving body"):
        ref.inverse_dynamics(model, q, v, a, {"nope": np.zeros(6)})
    with pytest.raises(ValueError, match=r"f_ext\['b0'\] must have shape \(6,\)"):
        ref.forward_dynamics(model, q, v, a, {"b0": np.zeros(3)})
