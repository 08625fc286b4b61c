"""Derivatives and linearisation of closed-loop models in the independent coordinates of the
constraint embedding (embedded_inverse_dynamics_derivatives,
embedded_forward_dynamics_derivatives, embedded_linearization: the embedded programs
differentiated along the loop manifold, symgen.formulations.derivatives), compiled, against

- central differences of the compiled embedded kernels with the configuration moved *on*
  the manifold: an independent coordinate moved by ±h, the dependent ones closed again by
  the compiled ``dependent_coordinates`` (Newton to ~1e-15), h = 1e-6: truncation h²|f'''|
  and rounding ε|f|/h leave ~1e-9 of unit-scale values; bound 1e-6 relative to
  max(1, |J|∞);
- the identities of the embedded equations: with forces on the independent coordinates only
  (Xᵀτ = τ_R, independent of the configuration), ∂θ̈_R/∂x = −M_R⁻¹ ∂T_R/∂x at
  θ̈_R = FD(q, θ̇_R, τ) for x = θ_R, θ̇_R, M_R = XᵀMX the compiled ``embedded_mass_matrix``
  (bound max(1e-9, 10³ ε cond(M_R)): both sides solve with M_R, whose condition reaches 8e5
  on the Delta's states); and ∂θ̈_R/∂τ · τ = FD(q, θ̇_R, τ) − FD(q, θ̇_R, 0) (forward
  dynamics is affine in τ; bound 1e-9);
- physics: at the four-bar's equilibria (symgen.apps.equilibrium) A = [[0, 1], [−ω², 0]]
  with ω² = V''(s)/M_R, V'' from second differences (step 1e-4) of the numpy potential
  energy (symgen.reference) along the motion, the loop closed by the compiled
  ``dependent_coordinates`` (position level only): bound
  1e-5 relative (truncation h²|V''''| of the second difference).

States: tests/loop_mapping.py's assembled_states (seed 0); models: the four-bar, the
four-bar knee (default tier), the slider-crank, the five-bar and the Delta robot (slow).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from loop_mapping import assembled_states, relative_error
from loop_mechanisms import four_bar_chain
from paths import EXAMPLES

import symgen
from symgen import reference as ref
from symgen.apps.equilibrium import static_equilibrium
from symgen.loops import LoopClosure

KERNELS = ["embedded_inverse_dynamics_derivatives", "embedded_forward_dynamics_derivatives",
           "embedded_linearization", "embedded_forward_dynamics", "embedded_inverse_dynamics",
           "embedded_mass_matrix", "dependent_coordinates", "integrate", "loop_jacobian"]
STEP = 1e-6
DIFFERENCE_TOLERANCE = 1e-6
IDENTITY_TOLERANCE = 1e-9


def load(name: str) -> symgen.Model:
    return four_bar_chain(1) if name == "four_bar" else symgen.load(EXAMPLES / f"{name}.yaml")


@cache
def built(name: str):
    model = load(name)
    ks = symgen.generate(model, KERNELS)
    return model, ks, symgen.compile_kernels(ks, vectorize=None)


def manifold_differences(model, lib, ind, fn, q, v_ind):
    """(∂f/∂θ_R, ∂f/∂θ̇_R) of ``fn(q, v_ind)`` by central differences, q kept on the loop
    manifold by the compiled dependent_coordinates."""
    dq, dv = [], []
    for k, coordinate in enumerate(ind):
        step = np.zeros(model.nv)
        step[coordinate] = 1.0
        moved = [lib.dependent_coordinates(lib.integrate(q, step, [s]))[0]
                 for s in (STEP, -STEP)]
        dq.append((fn(moved[0], v_ind) - fn(moved[1], v_ind)) / (2 * STEP))
        e = np.eye(len(ind))[k]
        dv.append((fn(q, v_ind + STEP * e) - fn(q, v_ind - STEP * e)) / (2 * STEP))
    return np.array(dq).T, np.array(dv).T


def _rel(a, b) -> float:
    b = np.asarray(b)
    return float(np.max(np.abs(np.asarray(a) - b)) / max(1.0, float(np.max(np.abs(b)))))


MODELS = ["four_bar", "four_bar_knee",
          *(pytest.param(n, marks=pytest.mark.slow)
            for n in ("slider_crank", "five_bar", "delta_robot"))]


@pytest.mark.parametrize("name", MODELS)
def test_embedded_derivatives_match_differences_along_the_manifold(name):
    model, ks, lib = built(name)
    keep = list(ks.context.loops.rows)
    ind = list(ks.context.embedding.independent)
    rng = np.random.default_rng(1)
    for q, v, tau in assembled_states(model, lib, keep, count=2):
        v_ind, a_ind = v[ind], rng.normal(size=len(ind))
        d_q, d_v = lib.embedded_inverse_dynamics_derivatives(q, v_ind, a_ind)
        f_q, f_v = manifold_differences(
            model, lib, ind,
            lambda q_, v_, a_ind=a_ind: lib.embedded_inverse_dynamics(q_, v_, a_ind)[0], q, v_ind)
        assert _rel(d_q, f_q) <= DIFFERENCE_TOLERANCE
        assert _rel(d_v, f_v) <= DIFFERENCE_TOLERANCE
        a_q, a_v, a_tau = lib.embedded_forward_dynamics_derivatives(q, v_ind, tau)
        f_q, f_v = manifold_differences(
            model, lib, ind, lambda q_, v_, tau=tau: lib.embedded_forward_dynamics(q_, v_, tau)[0],
            q, v_ind)
        assert _rel(a_q, f_q) <= DIFFERENCE_TOLERANCE
        assert _rel(a_v, f_v) <= DIFFERENCE_TOLERANCE
        # forward dynamics is affine in τ
        probe = rng.normal(size=model.nv)
        zero = lib.embedded_forward_dynamics(q, v_ind, np.zeros(model.nv))[0]
        assert relative_error(a_tau @ probe,
                              lib.embedded_forward_dynamics(q, v_ind, probe)[0] - zero) \
            <= IDENTITY_TOLERANCE
        # A, B assemble the same blocks
        a_mat, b_mat = lib.embedded_linearization(q, v_ind, tau)
        r = len(ind)
        assert np.array_equal(a_mat[r:], np.hstack([a_q, a_v]))
        assert np.array_equal(a_mat[:r], np.hstack([np.zeros((r, r)), np.eye(r)]))
        assert np.array_equal(b_mat[r:], a_tau) and not np.any(b_mat[:r])


@pytest.mark.parametrize("name", MODELS)
def test_embedded_forward_derivatives_are_minus_inverse_mass_times_inverse_ones(name):
    model, ks, lib = built(name)
    keep = list(ks.context.loops.rows)
    ind = list(ks.context.embedding.independent)
    for q, v, tau_all in assembled_states(model, lib, keep, count=2, seed=4):
        tau = np.zeros(model.nv)
        tau[ind] = tau_all[ind]  # on the independent coordinates only: Xᵀτ = τ_R
        a_ind = lib.embedded_forward_dynamics(q, v[ind], tau)[0]
        a_q, a_v, _ = lib.embedded_forward_dynamics_derivatives(q, v[ind], tau)
        d_q, d_v = lib.embedded_inverse_dynamics_derivatives(q, v[ind], a_ind)
        m_r = lib.embedded_mass_matrix(q)
        bound = max(IDENTITY_TOLERANCE, 1e3 * np.finfo(float).eps * np.linalg.cond(m_r))
        assert relative_error(a_q, -np.linalg.solve(m_r, d_q)) <= bound
        assert relative_error(a_v, -np.linalg.solve(m_r, d_v)) <= bound


def test_four_bar_linearization_at_its_equilibria():
    """Small motions about an equilibrium: ẍ = −ω² x with ω² = V''(s) / M_R, s the crank
    angle (ω² < 0 at an unstable one: A's eigenvalues ±√−ω² are then real)."""
    model, ks, lib = built("four_bar")
    closure = LoopClosure(model)
    (crank,) = ks.context.embedding.independent
    signs = set()
    for start in (0.5, 1.5, 2.5):
        q = static_equilibrium(model, closure.assemble(np.array([start, 0.0, 0.0]))).q
        a_mat, _ = lib.embedded_linearization(q, [0.0], np.zeros(model.nv))

        def energy(s: float, q: np.ndarray = q) -> float:
            moved = q.copy()
            moved[crank] += s
            return ref.potential_energy(model, lib.dependent_coordinates(moved)[0])

        h = 1e-4
        curvature = (energy(h) - 2 * energy(0.0) + energy(-h)) / h**2
        omega2 = curvature / lib.embedded_mass_matrix(q)[0, 0]
        assert a_mat[0, 1] == 1.0 and a_mat[0, 0] == 0.0 and abs(a_mat[1, 1]) <= 1e-12
        assert abs(-a_mat[1, 0] - omega2) <= 1e-5 * abs(omega2)
        signs.add(bool(omega2 > 0))
    assert signs == {True, False}  # both a stable and an unstable equilibrium were checked
