"""The natural-coordinate step's penalty matrix, redundant constraints, the saddle-point
solvers and the fourth-order step: independent checks (numpy references written from the
book, spectral bounds, the constraint equations themselves)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from benchmark_mechanisms import BRICARD_YAML, zero_axial_inertia_rod
from mechanisms import n_four_bar
from paths import EXAMPLES

import symgen
from symgen.formulations.natural import kernels as nk
from symgen.formulations.natural.penalty import TARGET, choose_penalty, constraint_compliance
from symgen.formulations.natural.step import step_program
from symgen.ir.printer import evaluate
from symgen.natural import NaturalOptions, natural_model
from symgen.reference.dynamics import forward_dynamics
from symgen.reference.natural import (
    StepSettings,
    consistent_velocities,
    lagrange_accelerations,
    rk4_step,
    trapezoidal_step,
)


@pytest.mark.parametrize("name", ["four_bar", "slider_crank", "rssr", "andrews_squeezer"])
def test_penalty_contracts_the_multiplier_iteration(name):
    """At the assembled configuration, the multiplier update's error factor
    (I + A S')⁻¹ has spectral radius ≤ 1/(1 + 10⁴), computed directly from its definition
    (eigenvalues of A^½ S' A^½), and the Newton matrix's condition relative to (4/h²)M
    stays ≤ 1e9."""
    nm = natural_model(symgen.load(EXAMPLES / f"{name}.yaml"))
    h, mu = 1e-3, 1e-3 / 50
    choice = choose_penalty(nm, h, mu)
    assert choice.warning is None
    s = constraint_compliance(nm, h)
    root = np.sqrt(choice.alpha)
    eig = np.linalg.eigvalsh(root[:, None] * s * root[None, :])
    nonzero = eig[eig > 1e-10 * eig[-1]]
    assert 1 / (1 + nonzero[0]) <= 1.0001 / (1 + TARGET)
    assert 1 + (1 + 2 * mu / h) * eig[-1] <= 1e9 * 1.0001


def test_penalty_warns_near_a_singular_assembly():
    """A parallelogram chain assembled 1e-4 rad from its singular (horizontal) position: the
    scaled constraint spectrum spans more than 1e5, so no penalty meets both the contraction
    and the roundoff cap, and generation says so."""
    nm = natural_model(n_four_bar(2, angle=1e-4))
    choice = choose_penalty(nm, 1e-3, 1e-3 / 50)
    assert choice.warning is not None and "singular" in choice.warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        step_program(nm, NaturalOptions())
    assert any("penalty" in str(w.message) for w in caught)


@pytest.mark.slow
def test_redundant_constraints_accelerations():
    """The Bricard linkage (24 constraints of rank 23): the generated accelerations satisfy
    the acceleration-level constraints with Baumgarte terms and equal the least-squares
    solution of the singular KKT system (q̈ is unique; seed 3)."""
    ks = symgen.generate(symgen.load(BRICARD_YAML), ["nc_accelerations"],
                         options=NaturalOptions())
    nm = ks.context.nm
    q = nm.q0
    _, sigma, vt = np.linalg.svd(nm.phi_q(q))
    rank = int(np.sum(sigma > 1e-10 * sigma[0]))
    assert nm.m - rank == 1
    rng = np.random.default_rng(3)
    qd = vt[rank:].T @ rng.normal(size=nm.n - rank)
    tau = rng.normal(size=len(nm.actuated))
    got = ks.evaluate("nc_accelerations", q=q, qd=qd, tau=tau)
    expected, _ = lagrange_accelerations(nm, q, qd, 10.0, 10.0, tau=tau)
    scale = np.abs(expected).max()
    assert np.abs(got["qdd"] - expected).max() <= 1e-10 * scale
    residual = (nm.phi_q(q) @ got["qdd"] + nm.phi_q_dot_qdot(q, qd) + 20 * nm.phi_q(q) @ qd
                + 100 * nm.phi(q))
    assert np.abs(residual).max() <= 1e-10 * scale * np.abs(nm.phi_q(q)).max()
    # the generalized force balance M q̈ + Φ_qᵀλ = Q holds with the multipliers returned
    balance = nm.mass_matrix @ got["qdd"] + nm.phi_q(q).T @ got["lam"] \
        - nm.generalized_forces(q, qd, tau)
    assert np.abs(balance).max() <= 1e-9 * max(np.abs(nm.mass_matrix @ got["qdd"]).max(), 1)


@pytest.mark.parametrize("sparse_kkt", [False, True])
def test_both_saddle_point_solvers_give_the_lagrange_accelerations(sparse_kkt, monkeypatch):
    """The range-space and the sparse KKT factorizations, each forced, reproduce numpy's
    dense KKT solve on the slider-crank and Andrews' squeezer (seed 11)."""
    monkeypatch.setattr(nk, "_use_sparse_saddle", lambda nm: sparse_kkt)
    for name in ("slider_crank", "andrews_squeezer"):
        nm = natural_model(symgen.load(EXAMPLES / f"{name}.yaml"))
        program = nk.accelerations_program(nm, NaturalOptions())
        rng = np.random.default_rng(11)
        q = nm.q0
        qd = consistent_velocities(nm, q, {0: 1.3})
        tau = rng.normal(size=len(nm.actuated))
        got = evaluate(program, q=q, qd=qd, tau=tau)
        qdd, lam = lagrange_accelerations(nm, q, qd, 10.0, 10.0, tau=tau)
        assert np.abs(got["qdd"] - qdd).max() <= 1e-10 * np.abs(qdd).max()
        assert np.abs(got["lam"] - lam).max() <= 1e-10 * np.abs(lam).max()


def test_saddle_ordering_keeps_the_chain_linear():
    """The KKT factorization of a row of parallelogram four-bars costs O(N): doubling N from
    10 to 20 at most doubles its symbolic operation count (+10%), and it is the one chosen,
    while the range-space estimate (m³/3 for the LDLᵀ of S) grows at least fivefold."""
    saddle, schur = [], []
    for n in (10, 20):
        nm = natural_model(n_four_bar(n))
        assert nk._use_sparse_saddle(nm)
        saddle.append(nk._saddle_cost(nm))
        schur.append(nk._schur_cost(nm))
    assert saddle[1] <= 2.2 * saddle[0]
    assert schur[1] >= 5 * schur[0]


def test_rk4_step_is_fourth_order_on_the_four_bar():
    """On the Grashof four-bar (no singular position), halving h divides the error at
    t = 0.2 s by ≥ 13 (16 for order 4, less the projections' higher-order terms), the error
    measured against a run at h/8; the positions stay on the constraints to roundoff."""
    nm = natural_model(symgen.load(EXAMPLES / "four_bar.yaml"))
    q0 = nm.q0
    qd0 = consistent_velocities(nm, q0, {0: 2.0})

    def run(h: float) -> np.ndarray:
        q, qd = q0.copy(), qd0.copy()
        qdd, _ = lagrange_accelerations(nm, q, qd)
        for _ in range(int(round(0.2 / h))):
            q, qd, qdd, _ = rk4_step(nm, q, qd, qdd, h)
        return q

    fine = run(0.004 / 8)
    e1 = np.abs(run(0.004) - fine).max()
    e2 = np.abs(run(0.002) - fine).max()
    assert e1 / e2 >= 13
    assert np.abs(nm.phi(run(0.004))).max() <= 1e-13


@pytest.mark.slow
def test_rod_without_axial_inertia_simulates():
    """The slender rod held by perpendicular revolute joints: its natural step follows the
    tree formulation's joint trajectory (the spin it cannot have is fixed by the joints)
    over 0.5 s at h = 1 ms to the trapezoidal rule's accuracy (≤ 1e-4 rad)."""
    model = zero_axial_inertia_rod(constrained=True)
    nm = natural_model(model)
    jq, jv = np.array([0.4, -0.7]), np.array([1.3, -2.1])
    q, qd = nm.modeller.coordinates_at(jq), nm.modeller.velocities_at(jq, jv)
    qdd, _ = lagrange_accelerations(nm, q, qd)
    lam = np.zeros(nm.m)
    h = 1e-3
    for _ in range(500):
        q, qd, qdd, lam = trapezoidal_step(nm, q, qd, qdd, StepSettings(h), lam)
    y = np.concatenate([jq, jv])
    dt = 2.5e-4  # RK4: error ~ (dt ω)⁴ ≪ 1e-8 rad over 0.5 s

    def f(y):
        return np.concatenate([y[2:], forward_dynamics(model, y[:2], y[2:], np.zeros(2))])

    for _ in range(2000):
        k1 = f(y)
        k2 = f(y + dt / 2 * k1)
        k3 = f(y + dt / 2 * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    angles = np.array([nm.joint_values[name](q) for name in model.joint_names])
    wrapped = np.array([math.remainder(a - b, 2 * math.pi)
                        for a, b in zip(angles, y[:2], strict=True)])
    assert np.abs(wrapped).max() <= 1e-4
