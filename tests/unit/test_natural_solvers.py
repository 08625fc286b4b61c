"""Natural-coordinate reference solvers against the book's worked example 10.5 (García de
Jalón & Bayo 1994, slider-crank, Table 10.1) and an exact one-DOF Lagrangian solution."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from symgen.formulations.natural import NaturalModel, bar_mass_matrix
from symgen.reference.natural import (
    StepSettings,
    assemble,
    augmented_lagrangian_accelerations,
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


def crossing_times(t_end: float) -> np.ndarray:
    """Exact times at which the crank of Ex. 10.6 passes the vertical (x1 = 0), from energy
    conservation on the branch x2 = 2 x1: the crank angle θ has T = ½ J(θ) θ̇²,
    J = 1/3 (crank about O) + 1/12 + |v_G|²/θ̇² (rod, v_G = (−3/2 sin θ, 1/2 cos θ) θ̇)
    = 2/3 + 2 sin²θ, V = 9.81 sin θ (the Q of :func:`slider_crank`), θ(0) = π/4,
    θ̇(0) = 2√2 (q̇ = (−2, 2, −4)); E > max V, so θ̇ > 0 and
    t(θ) = ∫ √(J / (2(E − V))) dθ (64-point Gauss-Legendre per half turn: the integrand
    is smooth and bounded)."""
    energy = 0.5 * (2 / 3 + 2 * 0.5) * 8 + 9.81 * np.sin(np.pi / 4)
    nodes, weights = np.polynomial.legendre.leggauss(64)

    def duration(a: float, b: float) -> float:
        th = 0.5 * (b - a) * nodes + 0.5 * (a + b)
        rate = np.sqrt(2 * (energy - 9.81 * np.sin(th)) / (2 / 3 + 2 * np.sin(th) ** 2))
        return float(0.5 * (b - a) * np.sum(weights / rate))

    times = [duration(np.pi / 4, np.pi / 2)]
    while True:
        k = len(times)
        nxt = times[-1] + duration(np.pi / 2 + (k - 1) * np.pi, np.pi / 2 + k * np.pi)
        if nxt > t_end:
            return np.array(times)
        times.append(nxt)


def test_book_example_10_6_has_eleven_singular_passages_in_ten_seconds():
    """The book reports 11 passages through the singular position in 10 s (Ex. 10.6), and
    spikes of its acceleration-based method near t = 9.25 s: the 11th passage."""
    times = crossing_times(10.0)
    assert len(times) == 11
    assert times[-1] == pytest.approx(9.25, abs=0.02)


def simulate_slider_crank(settings: StepSettings, steps: int, scale: float = 1.0):
    """Ex. 10.6's initial state (q̇ scaled by ``scale``, still consistent: Φ_q q̇ is linear)
    stepped ``steps`` times; returns per-step q, q̇ and the (relative) energy error."""
    nm = slider_crank()
    s2 = np.sqrt(2) / 2
    q = np.array([s2, s2, 2 * s2])
    qd = np.array([-2.0, 2.0, -4.0]) * scale
    qdd = lagrange_accelerations(nm, q, qd)[0]  # q̈(0) of the exact equations

    def energy(q, qd):
        return 0.5 * qd @ nm.mass_matrix @ qd - nm.forces @ q

    e0 = energy(q, qd)
    lam, qs, qds, err = None, [], [], []
    for _ in range(steps):
        q, qd, qdd, lam = trapezoidal_step(nm, q, qd, qdd, settings, lam)
        qs.append(q)
        qds.append(qd)
        err.append((energy(q, qd) - e0) / e0)
    return nm, np.array(qs), np.array(qds), np.array(err)


def test_trapezoidal_step_through_singular_positions():
    """Book Ex. 10.6 setting (slider-crank of Ex. 10.5, θ(0) = π/4, ẋ2(0) = −4 m/s), 3 s at
    h = 1 ms with the default penalty rule of :class:`StepSettings` and 2 iterations (what
    ``nc_step`` bakes in). Crank and rod are equally long, so at every vertical crank
    position Φ_q = [[0, ±1, 0], [0, ±1, 0]] has rank 1 and the configuration space
    bifurcates: x2 = 2 x1 (slider) or x2 = 0 (rod folded on the crank). The exact motion
    cannot change branch there (the branches cross transversally, so switching would need
    a jump of ẋ2 − 2ẋ1, and a reaction impulse lies in range(Φ_qᵀ) = (0, 1, 0)), and since
    E = 13.6 J > 9.81 J (potential at the top) it passes with θ̇ > 0.

    What a correct implementation guarantees on any machine, and is asserted:
    - the branch: x2 = 2 x1 to the constraint tolerance at every step (|x1| > 0.01);
    - the crossing steps are those of the exact solution (:func:`crossing_times`) within
      one step: the trapezoidal rule's phase error after 2.2 s is ~ t (hω)²/12 ≈ 1e-5 s;
    - |ΔE|/E < 1e-3: the trapezoidal rule does not drift, its energy error is
      O((hω)²) = 1.8e-5 (ω = θ̇_max = 4.2 rad/s; measured 4.2e-5 with every BLAS);
    - |Φ| < 1e-7 and |Φ_q q̇| < 1e-5 at every step, both ≥ 50 × the measured maxima
      (1.7e-9, 2.1e-7): the penalty leaves |Φ| ~ |Δλ per step| / (α σ²), the
      mass-orthogonal projection |Φ_q q̇| ~ (h²α/4)⁻¹ of the unprojected residual.

    Why not the book's α = 10⁷ at h = 1 ms (this test's former setting, which failed with
    OpenBLAS's Prescott/Nehalem/Sandybridge kernels and passed with Haswell/Zen): where
    α σ₂(Φ_q)² ≲ (4/h²) M — |x1| < 0.12 around each singular position for α = 10⁷, < 0.015
    for the default α = 2.7e9 — two fixed iterations cannot converge the multipliers, and the
    multipliers carried over from step to step act as an undamped integral feedback on the
    constraint: the linearised step map has spectral radius up to 1.37 per step there for
    α = 10⁷ (an oscillating λ1 − λ2 mode), i.e. rounding amplified by ~1e10 over one passage.
    Prescott and Haswell trajectories then differ by 1e-12 at step 128, 1e-3 at step 421,
    O(1) after (energy lost: 27 % vs 0.4 %). With the default α the amplification over a
    passage is O(1): :func:`test_singular_passage_does_not_amplify_rounding`."""
    h, steps = 1e-3, 3000
    nm, q, qd, err = simulate_slider_crank(StepSettings(h=h), steps)
    x1, x2 = q[:, 0], q[:, 2]
    away = np.abs(x1) > 0.01
    np.testing.assert_allclose(x2[away], 2 * x1[away], atol=1e-6)
    crossed = np.nonzero(np.sign(x1[1:]) != np.sign(x1[:-1]))[0] + 2  # step numbers
    expected = np.ceil(crossing_times(steps * h) / h)
    assert len(crossed) == len(expected) == 3
    np.testing.assert_allclose(crossed, expected, atol=1)
    assert np.max(np.abs(err)) < 1e-3
    assert max(np.max(np.abs(nm.phi(x))) for x in q) < 1e-7
    assert max(np.max(np.abs(nm.phi_q(x) @ v)) for x, v in zip(q, qd, strict=True)) < 1e-5


def test_singular_passage_does_not_amplify_rounding():
    """Perturbing the initial velocity by 1e-12 (relative) changes the state after the first
    singular passage (0.6 s; passage at 0.39 s) by ≲ 1e-12 × O(1): the result does not
    depend on rounding (BLAS kernel, compiler, machine). Bound 1e-9, a factor 10³ of
    amplification; with the default penalty, and with the book's α = 10⁷ too since the
    carried multipliers are re-fitted to their force at each step and the projections are
    exact (``StepSettings.refit``, what ``nc_step`` does). With the step before
    (``refit=False``: multipliers carried as they are, penalised projections) and α = 10⁷ at
    h = 1 ms the same perturbation grows to > 1e-4 (measured 6e1 with 2 iterations): the
    mechanism the bound guards against (see
    :func:`test_trapezoidal_step_through_singular_positions`)."""
    def spread(settings):
        runs = [simulate_slider_crank(settings, 600, scale)[1:3] for scale in (1.0, 1 + 1e-12)]
        return max(np.max(np.abs(a[-1] - b[-1])) for a, b in zip(*runs, strict=True))

    assert spread(StepSettings(h=1e-3)) < 1e-9
    assert spread(StepSettings(h=1e-3, alpha=1e7)) < 1e-9
    assert spread(StepSettings(h=1e-3, alpha=1e7, refit=False)) > 1e-4
