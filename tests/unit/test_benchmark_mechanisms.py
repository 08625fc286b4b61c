"""The benchmark mechanisms' model files against their independent references
(tests/benchmark_mechanisms.py): Andrews' squeezing mechanism against the published test-set
equations and solution, the spinning top against Euler's equations, Bricard's linkage
against its Denavit-Hartenberg closure, and the rod without axial inertia."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
from benchmark_mechanisms import (
    ANDREWS_JOINTS,
    ANDREWS_LAMBDA0,
    ANDREWS_T_REF,
    ANDREWS_Y0,
    ANDREWS_Y_REF,
    ANDREWS_YAML,
    ANDREWS_YD_REF,
    ANDREWS_YDD0,
    BRICARD_THETA0,
    BRICARD_YAML,
    TOP_YAML,
    andrews_accelerations,
    andrews_angles,
    andrews_constraints,
    andrews_mass_matrix,
    andrews_reference,
    andrews_tree_configuration,
    bricard_loop,
    top_initial_state,
    top_invariants,
    top_reference,
    top_rhs,
    zero_axial_inertia_rod,
)

import symgen
from symgen.errors import SymgenError
from symgen.formulations.natural.model import tree_poses
from symgen.natural import natural_model
from symgen.reference.dynamics import forward_dynamics, mass_matrix
from symgen.reference.natural import assemble, lagrange_accelerations

EPS = np.finfo(float).eps


def _frame(placement) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = np.asarray(placement.rotation, float)
    out[:3, 3] = np.asarray(placement.translation, float)
    return out


def _loop_mismatch(model) -> tuple[float, float]:
    """Largest difference of the loop joints' frames placed from their two sides at the zero
    configuration: (position, rotation entries)."""
    poses = tree_poses(model, np.zeros(model.nq))
    dp = dr = 0.0
    for lj in model.loop_joints:
        a = poses[lj.parent] @ _frame(lj.placement)
        b = poses[lj.child] @ _frame(lj.child_placement)
        dp = max(dp, float(np.abs(a[:3, 3] - b[:3, 3]).max()))
        dr = max(dr, float(np.abs(a[:3, :3] - b[:3, :3]).max()))
    return dp, dr


def _joint_acceleration(nm, name: str, q: np.ndarray, qd: np.ndarray,
                        qdd: np.ndarray) -> float:
    """θ̈ of revolute joint ``name`` of a natural model, θ = sign·(atan2(s, c) − offset) with
    s, c polynomials of q: θ̈ = sign·((c s̈ − s c̈)/r² − 2(c ṡ − s ċ)(s ṡ + c ċ)/r⁴),
    r² = s² + c², ṡ = ∇s·q̇, s̈ = ∇s·q̈ + q̇ᵀ∇²s q̇."""
    jc = nm.joint_coordinates[name]
    assert jc.kind == "angle"
    values = []
    for part in jc.parts:
        grad = sympy.lambdify([nm.symbols], [sympy.diff(part, x) for x in nm.symbols])(q)
        hess = sympy.lambdify([nm.symbols], sympy.hessian(part, nm.symbols))(q)
        value = float(sympy.lambdify([nm.symbols], part)(q))
        rate = float(np.dot(grad, qd))
        values.append((value, rate, float(np.dot(grad, qdd) + qd @ np.asarray(hess, float) @ qd)))
    (s, sd, sdd), (c, cd, cdd) = values
    r2 = s * s + c * c
    return jc.sign * ((c * sdd - s * cdd) / r2 - 2 * (c * sd - s * cd) * (s * sd + c * cd) / r2**2)


# ------------------------------------------------------------------------------ Andrews


@pytest.fixture(scope="module")
def andrews():
    return symgen.load(ANDREWS_YAML)


@pytest.fixture(scope="module")
def andrews_nm(andrews):
    return natural_model(andrews)


@pytest.fixture(scope="module")
def andrews_solution():
    return andrews_reference()


def test_andrews_equations_reproduce_the_published_initial_state():
    # the test set's consistent initial values: g(y0) = 0 (to the digits of y0) and its
    # initial accelerations and multipliers (M ÿ + Gᵀλ = f at rest)
    g, _, _ = andrews_constraints(ANDREWS_Y0)
    assert np.abs(g).max() < 10 * EPS * 0.1
    ydd, lam = andrews_accelerations(ANDREWS_Y0, np.zeros(7))
    assert np.abs(ydd - ANDREWS_YDD0).max() <= 1e-13 * np.abs(ANDREWS_YDD0).max()
    assert np.abs(lam - ANDREWS_LAMBDA0).max() <= 1e-13 * np.abs(ANDREWS_LAMBDA0).max()


def test_andrews_yaml_zero_configuration_closes_the_loops(andrews):
    # the joint origins hold the test set's initial angles: the three pins at E coincide
    # to rounding (scale 0.1 m; rotation entries of size 1)
    position, rotation = _loop_mismatch(andrews)
    assert position <= 1e-15 * 0.1
    assert rotation <= 4 * EPS


def test_andrews_yaml_mass_matrix_is_the_benchmarks(andrews):
    # the tree kernels' joint-space M on the tree angles (β, Θ, γ, δ, Φ, ε, Ω relative to
    # y0) equals the benchmark's M(y) term by term: the COM placements are right
    rng = np.random.default_rng(7)
    order = [ANDREWS_JOINTS.index(name) for name in andrews.joint_names]
    for _ in range(4):
        y = ANDREWS_Y0 + rng.uniform(-np.pi, np.pi, 7)
        m_tree = mass_matrix(andrews, andrews_tree_configuration(andrews, y))
        m_bench = andrews_mass_matrix(y)[np.ix_(order, order)]
        assert np.abs(m_tree - m_bench).max() <= 100 * EPS * np.abs(m_bench).max()


def test_andrews_natural_model_has_one_dof_and_the_benchmarks_accelerations(andrews_nm):
    nm = andrews_nm
    assert nm.dof == 1
    # at rest, θ̈ = ∂θ/∂q q̈ for every joint; the YAML's spring and motor enter through the
    # model's force elements
    rest = np.zeros(nm.n)
    qdd, _ = lagrange_accelerations(nm, nm.q0, rest)
    ydd = np.array([_joint_acceleration(nm, name, nm.q0, rest, qdd) for name in ANDREWS_JOINTS])
    pq = nm.phi_q(nm.q0)
    kkt = np.block([[nm.mass_matrix, pq.T], [pq, np.zeros((nm.m, nm.m))]])
    tol = 10 * np.linalg.cond(kkt) * EPS
    assert np.abs(ydd - ANDREWS_YDD0).max() <= tol * np.abs(ANDREWS_YDD0).max()


def test_andrews_reference_reproduces_the_published_solution(andrews_solution):
    y, yd, _ = andrews_solution
    # positions to 1e-9 relative, component by component
    assert np.all(np.abs(y - ANDREWS_Y_REF) <= 1e-9 * np.abs(ANDREWS_Y_REF))
    # the crank's and the coupler's rates to 1e-9 relative; the five slow rates (|ẏ| of
    # 0.3-20 rad/s beside the crank's 1e3) to 1e-9 of max|ẏ|: the published values of those
    # differ by 2-5e-8 relative from this integration and from DOP853 alike (which agree to
    # 1e-10), a phase difference of ~1e-12 s at accelerations of ~1e5 rad/s²
    assert np.all(np.abs(yd[:2] - ANDREWS_YD_REF[:2]) <= 1e-9 * np.abs(ANDREWS_YD_REF[:2]))
    assert np.abs(yd - ANDREWS_YD_REF).max() <= 1e-9 * np.abs(ANDREWS_YD_REF).max()
    g, jac, _ = andrews_constraints(y)
    assert np.abs(g).max() <= 1e-14
    assert np.abs(jac @ yd).max() <= 1e-12 * np.abs(yd).max()


def test_andrews_reference_with_scipy_dop853():
    integrate = pytest.importorskip("scipy.integrate")

    def rhs(_t, x):
        return np.concatenate([x[7:], andrews_accelerations(x[:7], x[7:])[0]])

    sol = integrate.solve_ivp(rhs, (0.0, ANDREWS_T_REF), np.concatenate([ANDREWS_Y0,
                              np.zeros(7)]), method="DOP853", rtol=1e-12, atol=1e-12)
    y = sol.y[:7, -1]
    assert np.all(np.abs(y - ANDREWS_Y_REF) <= 1e-9 * np.abs(ANDREWS_Y_REF))


def test_andrews_angles_from_natural_coordinates(andrews, andrews_nm, andrews_solution):
    # the reference state at t = 0.03 placed on the natural model, read back as the angles
    y, _, _ = andrews_solution
    q = andrews_nm.modeller.coordinates_at(andrews_tree_configuration(andrews, y))
    assert np.abs(andrews_nm.phi(q)).max() <= 1e-15
    back = andrews_angles(andrews_nm, q, near=y)
    assert np.abs(back - y).max() <= 1e-12
    assert np.abs(andrews_angles(andrews_nm, andrews_nm.q0) - ANDREWS_Y0).max() <= 1e-14


# ------------------------------------------------------------------------------ spinning top


@pytest.fixture(scope="module")
def top():
    return symgen.load(TOP_YAML)


def test_top_yaml_matches_eulers_equations(top):
    # the tree formulation's forward dynamics of the YAML equals the reference's Euler
    # equations about the fixed point at random states
    rng = np.random.default_rng(3)
    for _ in range(5):
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        omega = 20 * rng.normal(size=3)
        tree = forward_dynamics(top, quat, omega, np.zeros(3))
        euler = top_rhs(0.0, np.concatenate([quat, omega]))[4:]
        assert np.abs(tree - euler).max() <= 1e-12 * np.abs(euler).max()
    assert natural_model(top).dof == 3


def test_top_reference_conserves_its_invariants():
    quat0, omega0 = top_initial_state()
    before = top_invariants(quat0, omega0)
    quat, omega, _ = top_reference(1.0)
    after = top_invariants(quat, omega)
    # energy, vertical angular momentum and axial spin, to 100 times the step tolerance
    for name in before:
        assert abs(after[name] - before[name]) <= 1e-10 * abs(before[name]), name
    assert abs(np.linalg.norm(quat) - 1) <= 4 * EPS
    # the top has moved: it precesses (fast-top estimate m g l/(I3 ω3) = 2.45 rad/s)
    assert np.abs(quat - quat0).max() > 0.1


# ------------------------------------------------------------------------------ Bricard


def test_bricard_is_closed_and_mobile_although_gruebler_says_rigid():
    model = symgen.load(BRICARD_YAML)
    position, rotation = _loop_mismatch(model)
    assert position <= 4 * EPS * 0.2 and rotation <= 4 * EPS
    assert np.abs(bricard_loop(BRICARD_THETA0) - np.eye(4)).max() <= 4 * EPS
    nm = natural_model(model)
    # as many constraints as coordinates (the count says 0 DOF), one of them redundant
    assert nm.m == nm.n
    assert nm.rank(nm.q0) == nm.n - 1 and nm.dof == 1
    # a finite motion, not only an infinitesimal one: follow the null space of Φ_q with one
    # coordinate held, reassemble, and read the joint angles back: the Denavit-Hartenberg
    # loop closes with them and the redundancy persists
    _, _, vt = np.linalg.svd(nm.phi_q(nm.q0))
    tangent = vt[-1]
    held = int(np.argmax(np.abs(tangent)))
    q = nm.q0.copy()
    for _ in range(6):
        q = assemble(nm, q + 0.05 * tangent / abs(tangent[held]), fixed=[held])
        _, s, vt = np.linalg.svd(nm.phi_q(q))
        tangent = vt[-1] if vt[-1] @ tangent > 0 else -vt[-1]
        assert s[-1] <= 1e-12 * s[0] and s[-2] >= 1e-3 * s[0]
    theta = BRICARD_THETA0 + [nm.joint_values[f"j{k}"](q) for k in range(1, 7)]
    assert np.abs(theta - BRICARD_THETA0).max() > 0.2
    assert np.abs(bricard_loop(theta) - np.eye(4)).max() <= 1e-13


# ------------------------------------------------------------------------------ rod


def test_rod_without_axial_inertia():
    # held by revolute joints: the natural model is regular and its accelerations are the
    # tree formulation's
    model = zero_axial_inertia_rod(constrained=True)
    nm = natural_model(model)
    jq, jv = np.array([0.4, -0.7]), np.array([1.3, -2.1])
    q, qd = nm.modeller.coordinates_at(jq), nm.modeller.velocities_at(jq, jv)
    qdd, _ = lagrange_accelerations(nm, q, qd)
    tree = forward_dynamics(model, jq, jv, np.zeros(2))
    natural = [_joint_acceleration(nm, name, q, qd, qdd) for name in model.joint_names]
    assert np.abs(np.array(natural) - tree).max() <= 1e-10 * np.abs(tree).max()
    # between spherical joints the rod's spin has no inertia: undetermined, a one-line error
    with pytest.raises(SymgenError, match="body 'rod' has no rotational inertia"):
        natural_model(zero_axial_inertia_rod(constrained=False))
