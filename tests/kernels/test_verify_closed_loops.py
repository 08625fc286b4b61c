"""``symgen verify`` on the natural-coordinate and closed-loop kernels (issue 29, "verify
bugs"): each kernel passes or fails for a real reason.

- Redundant constraints (Bricard's linkage: 24 natural constraints of rank 23): the
  multipliers are not unique (the kernels set a dependent constraint's multiplier to 0, the
  reference takes the least-norm set), q̈ and the constraint forces Φ_qᵀλ are. ``nc_accelerations``
  is compared by its backward error in [[M, Φ_qᵀ], [Φ_q, 0]], which vanishes exactly when q̈
  and Φ_qᵀλ agree (they were reported FAIL with λ 116 % apart); ``nc_step_rk4``, whose
  augmented-Lagrangian solves carry the dependent multipliers they start from, by q̈ and the
  force Φ_qᵀλ of its multipliers.
- The reference RK4 step solved its accelerations by the range-space method with a
  pseudo-inverse of Φ_q M⁻¹Φ_qᵀ (condition 1e7 on Bricard besides its zero eigenvalue), whose
  backward error reached 7e-10: ``nc_step_rk4`` failed against a reference less accurate
  than itself. It now takes the backward-stable least-squares solve (bound 1e-14).
- ``nc_step``'s multipliers carry the rounding of Φ times the penalty (up to 1.5e15 on the
  double pendulum), 1e-3 of λ there: they are compared relative to max(|λ|, 1, r / tol),
  r = 16 ε max_i α_i Σ|terms of Φ_i| (measured differences at most 0.82 ε max_i α_i ...).
- The embedded derivatives are derivatives along the loop manifold, on which only assembled
  configurations lie: compared there (they failed at verify's random, unassembled
  configurations: 6e-5 on the five-bar, 2e-2 on the Delta robot).
  A model with couplings and no loop joint (the geared arm) is assembled everywhere.
- Their reference differences θ̇_R with a unit step: the embedded dynamics are quadratic in
  θ̇_R, so that is exact, while the step 1e-6 carried the rounding ε|q̈|/h, 8e-5 on Andrews'
  squeezer (|q̈| ~ 1e5) against derivatives of 7e-3.
- ``nc_velocities`` has a reference (it had none): the least-squares solution of
  [Φ_q; ∇θ] q̇ = [0; ż], compared by the backward error in the normal equations.
- A kernel without a numpy reference is named with the reason; alone, it ended in an
  internal error (``max() arg is an empty sequence``, exit 3).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from cli_runner import run
from paths import EXAMPLES

import symgen
from symgen import registry
from symgen.apps.verify import random_states, reference_values, verify_compiled
from symgen.apps.verify.checks import relative_error
from symgen.formulations.natural.kernels import NaturalOptions
from symgen.reference.derivatives import central_differences
from symgen.reference.natural import rk4_step


@cache
def _natural(model: str, kernels: tuple[str, ...]):
    ks = symgen.generate(symgen.load(EXAMPLES / f"{model}.yaml"), kernels,
                         options=NaturalOptions())
    return ks, symgen.compile_kernels(ks)


def _saddle(nm, q: np.ndarray) -> np.ndarray:
    pq = nm.phi_q(q)
    return np.block([[nm.mass_matrix, pq.T], [pq, np.zeros((nm.m, nm.m))]])


def test_redundant_multipliers_are_compared_by_what_is_unique():
    ks, lib = _natural("bricard", ("nc_accelerations",))
    nm = ks.context.nm
    states = random_states(ks, 8, 0)
    report = verify_compiled(lib, states)
    assert [c.program for c in report.performed] == ["nc_accelerations"]
    assert not report.failed, report.checks
    # λ itself differs (not unique), q̈ and Φ_qᵀλ agree
    got = [lib.nc_accelerations(s["q"], s["qd"], s["tau"]) for s in states]
    want = [reference_values(ks, "nc_accelerations", s) for s in states]
    assert max(relative_error(g[1], w["lam"]) for g, w in zip(got, want, strict=True)) > 1e-3
    for s, (qdd, lam), w in zip(states, got, want, strict=True):
        pq = nm.phi_q(s["q"])
        assert relative_error(qdd, w["qdd"]) < 1e-10
        assert relative_error(pq.T @ lam, pq.T @ w["lam"]) < 1e-10


def test_the_reference_rk4_step_solves_its_saddle_point_systems_backward_stably():
    ks = symgen.generate(symgen.load(EXAMPLES / "bricard.yaml"), ["nc_step_rk4"],
                         options=NaturalOptions())
    nm = ks.context.nm
    for s in random_states(ks, 8, 0):
        q, qd, qdd, lam = rk4_step(nm, s["q"], s["qd"], s["qdd"], s["dt"][0], s["tau"])
        k = _saddle(nm, q)
        rhs = np.concatenate([nm.generalized_forces(q, qd, s["tau"]),
                              -nm.phi_q_dot_qdot(q, qd)])
        x = np.concatenate([qdd, lam])
        backward = (np.max(np.abs(k @ x - rhs))
                    / (np.max(np.sum(np.abs(k), axis=1)) * max(np.max(np.abs(x)), 1.0)))
        assert backward < 1e-14


def test_rk4_step_multipliers_are_compared_by_their_force():
    """Bricard's linkage (a redundant constraint): the compiled step and its numpy twin
    agree on q, q̇, q̈ and Φ_qᵀλ at t + h."""
    kernel = registry.get("nc_step_rk4")
    assert kernel.comparison != "system"
    ks, lib = _natural("bricard", ("nc_step_rk4",))
    states = random_states(ks, 4, 0)
    report = verify_compiled(lib, states)
    assert [c.program for c in report.performed] == ["nc_step_rk4"]
    assert not report.failed, report.checks
    nm = ks.context.nm
    for s in states:
        got = lib.nc_step_rk4(s["q"], s["qd"], s["qdd"], s["lam"], s["dt"], s["tau"])
        want = reference_values(ks, "nc_step_rk4", s)
        pq = nm.phi_q(want["q_next"])
        assert np.array_equal(want["lam_next:through"], pq.T)
        assert relative_error(pq.T @ got[3], pq.T @ want["lam_next"]) < 1e-10


def test_step_multipliers_are_compared_above_their_roundoff():
    ks, lib = _natural("double_pendulum", ("nc_step",))
    states = random_states(ks, 8, 0)
    report = verify_compiled(lib, states)
    assert not report.failed, report.checks
    # a plain relative comparison of λ would fail: the penalties reach 1.5e15 here
    worst = 0.0
    for s in states:
        got = lib.nc_step(s["q"], s["qd"], s["qdd"], s["lam"], s["tau"])
        want = reference_values(ks, "nc_step", s)
        worst = max(worst, relative_error(got[3], want["lam_next"]))
        roundoff = float(want["lam_next:roundoff"])
        assert np.max(np.abs(got[3] - want["lam_next"])) <= roundoff
        for output, value in zip(("q_next", "qd_next", "qdd_next"), got, strict=False):
            assert relative_error(value, want[output]) < 1e-6
    assert worst > registry.get("nc_step").tolerance


def test_embedded_derivatives_are_compared_on_the_loop_manifold():
    names = ("embedded_inverse_dynamics_derivatives", "embedded_forward_dynamics_derivatives",
             "embedded_linearization")
    assert all(registry.get(name).consistent for name in names)
    result = run("verify", str(EXAMPLES / "five_bar.yaml"), "--kernels", ",".join(names))
    assert result.exit_code == 0, result.output
    assert "all 3 checks passed (reference)" in result.output


def test_embedded_derivatives_of_a_coupled_model_without_loops():
    result = run("verify", str(EXAMPLES / "geared_arm.yaml"), "--kernels",
                 "embedded_inverse_dynamics_derivatives,embedded_forward_dynamics_derivatives")
    assert result.exit_code == 0, result.output
    assert "all 2 checks passed (reference)" in result.output


def test_rate_derivatives_are_differenced_exactly():
    result = run("verify", str(EXAMPLES / "andrews_squeezer.yaml"), "--kernels",
                 "embedded_forward_dynamics_derivatives")
    assert result.exit_code == 0, result.output
    # a quadratic in v: the central difference with a unit step is exact
    model = symgen.load(EXAMPLES / "four_bar.yaml")
    v0 = np.array([0.3, -1.2, 0.7])

    def quadratic(q, v):
        return np.array([v @ v + 2 * v[0], 3 * v[1] * v[2]])

    _, dv = central_differences(model, np.zeros(3), v0, quadratic, v_step=1.0)
    np.testing.assert_allclose(dv, [[2 * v0[0] + 2, 2 * v0[1], 2 * v0[2]],
                                    [0, 3 * v0[2], 3 * v0[1]]], rtol=0, atol=1e-15)


def test_natural_velocities_have_a_reference():
    for model in ("four_bar", "bricard"):
        result = run("verify", str(EXAMPLES / f"{model}.yaml"), "--kernels", "nc_velocities")
        assert result.exit_code == 0, result.output
        assert "nc_velocities  reference" in result.output
        assert "all 1 checks passed (reference)" in result.output


def test_kernels_without_a_reference_are_named():
    result = run("verify", str(EXAMPLES / "four_bar.yaml"), "--kernels",
                 "nc_mass_matrix,nc_assemble")
    assert result.exit_code == 0, result.output
    assert "nc_mass_matrix  reference" in result.output
    assert "nc_assemble: not compared with a reference (a setup kernel" in result.output
    alone = run("verify", str(EXAMPLES / "five_bar.yaml"), "--kernels",
                "dependent_coordinates")
    assert alone.exit_code == 0, alone.output
    assert "dependent_coordinates: not compared with a reference" in alone.output
    assert "no check performed" in alone.output
