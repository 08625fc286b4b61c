"""Natural-coordinate reference solvers against the book's worked example 10.5 (García de
Jalón & Bayo 1994, slider-crank, Table 10.1) and an exact one-DOF Lagrangian solution."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from symgen.formulations.natural import (
    NaturalModel,
    StepSettings,
    assemble,
    augmented_lagrangian_accelerations,
    bar_mass_matrix,
    consistent_velocities,
    lagrange_accelerations,
    trapezoidal_step,
)


def slider_crank() -> NaturalModel:
    """Book Ex. 10.5: crank O-1 and rod 1-2 of 1 m and 1 kg (uniform), O fixed at the origin,
    slider point 2 on the x axis; q = (x1, y1, x2); gravity −9.81 m/s² along y.
    M assembled from the bar element (eq. 4.48 with x̄_G = L/2, I_i = mL²/3, eq. 4.86),
    fixed coordinates (O, and y2 = 0) deleted."""
    crank = bar_mass_matrix(1.0, 1.0 / 3.0, 1.0, 0.5)  # (xO, yO, x1, y1)
    rod = bar_mass_matrix(1.0, 1.0 / 3.0, 1.0, 0.5)    # (x1, y1, x2, y2)
    m = np.zeros((3, 3))
    m[:2, :2] += crank[2:, 2:]
    idx = [0, 1, 2]  # rod coordinates x1, y1, x2 (y2 fixed)
    sub = rod[np.ix_([0, 1, 2], [0, 1, 2])]
    m[np.ix_(idx, idx)] += sub
    x1, y1, x2 = (sympy.Symbol(f"q{i}", real=True) for i in range(3))
    phi = [(x1**2 + y1**2 - 1) / 2, ((x2 - x1) ** 2 + y1**2 - 1) / 2]
    # gravity: half of each bar's weight at point 1 (the other halves act on fixed coordinates)
    forces = np.array([0.0, -9.81, 0.0])
    return NaturalModel("slider_crank_ex10_5", ["x1", "y1", "x2"], phi, ["crank", "rod"], m,
                        forces, dof=1)


def test_mass_matrix_is_the_books():
    np.testing.assert_allclose(slider_crank().mass_matrix,
                               np.array([[4, 0, 1], [0, 4, 0], [1, 0, 2]]) / 6, atol=1e-15)


def exact_accelerations(theta: float, theta_d: float) -> np.ndarray:
    """Independent check: one-DOF Lagrangian in the crank angle (sympy), mapped to q̈."""
    t = sympy.Symbol("t")
    th = sympy.Function("th")(t)
    x1, y1 = sympy.cos(th), sympy.sin(th)
    x2 = 2 * sympy.cos(th)
    # crank: rod about O; rod: COM at ((x1+x2)/2, y1/2), inertia m/12 about COM, ω = −θ̇
    kinetic = sympy.Rational(1, 6) * th.diff(t) ** 2 + sympy.Rational(1, 2) * (
        ((x1 + x2) / 2).diff(t) ** 2 + (y1 / 2).diff(t) ** 2) + sympy.Rational(1, 24) * \
        th.diff(t) ** 2
    potential = 9.81 * (y1 / 2 + y1 / 2)
    lag = kinetic - potential
    eq = sympy.diff(lag.diff(th.diff(t)), t) - lag.diff(th)
    thdd = sympy.solve(eq, th.diff(t, 2))[0]
    value = float(thdd.subs({th.diff(t): theta_d}).subs({th: theta}))
    state = {th: theta, th.diff(t): theta_d, th.diff(t, 2): value}
    return np.array([float(e.diff(t, 2).subs(state)) for e in (x1, y1, x2)])


def test_example_10_5_non_singular_position():
    nm = slider_crank()
    s2 = np.sqrt(2) / 2
    q = np.array([s2, s2, 2 * s2])
    qd = np.array([-1.0, 1.0, -2.0])  # slider at −2 m/s, θ̇ = √2 rad/s
    np.testing.assert_allclose(nm.phi(q), 0, atol=1e-15)
    np.testing.assert_allclose(nm.phi_q(q) @ qd, 0, atol=1e-15)
    exact, lam = lagrange_accelerations(nm, q, qd)
    np.testing.assert_allclose(exact, exact_accelerations(np.pi / 4, np.sqrt(2)), rtol=1e-12)
    iterates = augmented_lagrangian_accelerations(nm, q, qd, alpha=1e4, iterations=2)
    errors = [np.linalg.norm(a - exact) for a in iterates]
    # Table 10.1: 6.5792e-4 and 4.3705e-8, to three significant digits
    assert errors[0] == pytest.approx(6.5792e-4, rel=5e-4)
    assert errors[1] == pytest.approx(4.3705e-8, rel=5e-4)


def test_example_10_5_singular_position_converges():
    nm = slider_crank()
    q = np.array([0.0, 1.0, 0.0])
    qd = np.array([-1.0, 0.0, -2.0])
    assert nm.rank(q) == 1  # Φ_q = [[0,1,0],[0,1,0]]: the multiplier form is singular
    iterates = augmented_lagrangian_accelerations(nm, q, qd, alpha=1e4, iterations=4)
    assert abs(iterates[0][1] + 1.0) > 1e-4  # the first (penalty) solve is off
    np.testing.assert_allclose(iterates[-1], [0.0, -1.0, 0.0], atol=1e-12)


def test_assembly_and_consistent_velocities():
    nm = slider_crank()
    q = assemble(nm, np.array([0.6, 0.75, 1.5]), fixed=[0])
    np.testing.assert_allclose(nm.phi(q), 0, atol=1e-12)
    assert q[0] == 0.6 and q[1] == pytest.approx(0.8) and q[2] == pytest.approx(1.2)
    qd = consistent_velocities(nm, q, {2: -2.0})
    np.testing.assert_allclose(nm.phi_q(q) @ qd, 0, atol=1e-12)
    assert qd[2] == pytest.approx(-2.0)


def test_trapezoidal_step_on_a_pendulum():
    """Point mass on a 1 m massless bar: two Newton iterations per step keep the constraint
    at 1e-8 and the energy within the trapezoidal rule's error (h = 1 ms, 3 s)."""
    x, y = sympy.symbols("q0 q1", real=True)
    nm = NaturalModel("pendulum", ["x", "y"], [(x**2 + y**2 - 1) / 2], ["bar"], np.eye(2),
                      np.array([0.0, -9.81]), dof=1)
    q, qd = np.array([1.0, 0.0]), np.zeros(2)
    qdd = augmented_lagrangian_accelerations(nm, q, qd, alpha=1e7, iterations=3)[-1]
    s = StepSettings(h=1e-3, alpha=1e7, iterations=2)
    lam, worst = None, 0.0
    for _ in range(3000):
        q, qd, qdd, lam = trapezoidal_step(nm, q, qd, qdd, s, lam)
        worst = max(worst, abs(0.5 * qd @ qd + 9.81 * q[1]))
    assert np.max(np.abs(nm.phi(q))) < 1e-8
    assert worst < 1e-4  # J, from 0 at rest in the horizontal position


def test_trapezoidal_step_through_singular_positions():
    """Book Ex. 10.6 setting: the crank passes the singular (vertical) position repeatedly;
    with 10 Newton iterations per step the step does not blow up, constraints stay
    satisfied and the energy stays within 1 %."""
    nm = slider_crank()
    s2 = np.sqrt(2) / 2
    q = np.array([s2, s2, 2 * s2])
    qd = np.array([-2.0, 2.0, -4.0])
    qdd = augmented_lagrangian_accelerations(nm, q, qd, alpha=1e7, iterations=3)[-1]

    def energy(q, qd):
        return 0.5 * qd @ nm.mass_matrix @ qd - nm.forces @ q

    e0 = energy(q, qd)
    s = StepSettings(h=1e-3, alpha=1e7, iterations=10)
    lam = None
    crossings = 0
    for _ in range(3000):  # 3 s
        x_before = q[0]
        q, qd, qdd, lam = trapezoidal_step(nm, q, qd, qdd, s, lam)
        crossings += (x_before > 0) != (q[0] > 0)
    assert crossings >= 3  # the book: 11 singular passages in 10 s
    assert np.max(np.abs(nm.phi(q))) < 1e-4
    assert np.max(np.abs(nm.phi_q(q) @ qd)) < 1e-4
    assert abs(energy(q, qd) - e0) / abs(e0) < 1e-2
