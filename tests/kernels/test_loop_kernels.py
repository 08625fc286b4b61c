"""The loop-closure kernels in joint coordinates (loop_constraints, loop_jacobian, loop_bias),
compiled, against the numeric loop closure (symgen.loops.LoopClosure: Müller 2014 on the
reference kinematics, no symbolic code) and against invariants that need neither:

- Ġ q̇ equals the central difference of G along q̇ (step 1e-6: truncation ~1e-12 |G'''|,
  rounding ~1e-16/1e-6; bound 1e-7 relative to the largest entry);
- at assembled configurations along the motion Φ vanishes and its central-difference
  Jacobian has the null space of G (the kept rows of Müller's analysis lose nothing);
- a model without loop joints has no loop kernels.

Random states: seed 0; tolerance 1e-12 relative to each output's largest entry (the same
formulas evaluated in two orders).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from cli_runner import run
from loop_mechanisms import (
    double_four_bar,
    geared_four_bar,
    prrr_manipulator,
    rsur_linkage,
    spherical_four_bar,
    welded_four_bar,
)
from paths import EXAMPLES

import symgen
from symgen import reference as ref
from symgen.formulations.loop_constraints import ASSEMBLY_DAMPING, ASSEMBLY_ITERATIONS
from symgen.loops import LoopClosure
from symgen.loops.analysis import _samples
from symgen.reference.forces import element_forces
from symgen.reference.integrate import integrate, random_configuration

KERNELS = ["loop_constraints", "loop_jacobian", "loop_bias"]
MODELS = {
    "four_bar": lambda: symgen.load(EXAMPLES / "four_bar.yaml"),
    "slider_crank": lambda: symgen.load(EXAMPLES / "slider_crank.yaml"),
    "rssr": lambda: symgen.load(EXAMPLES / "rssr.yaml"),
    "bricard": lambda: symgen.load(EXAMPLES / "bricard.yaml"),
    "andrews_squeezer": lambda: symgen.load(EXAMPLES / "andrews_squeezer.yaml"),
    "five_bar": lambda: symgen.load(EXAMPLES / "five_bar.yaml"),
    "spherical_four_bar": spherical_four_bar,
    "prrr": prrr_manipulator,
    "double_four_bar": double_four_bar,
    "welded_four_bar": welded_four_bar,
    "geared_four_bar": geared_four_bar,
    "rsur": rsur_linkage,
}


@cache
def built(name: str):
    model = MODELS[name]()
    ks = symgen.generate(model, [*KERNELS, "constrained_forward_dynamics"])
    return model, ks, symgen.compile_kernels(ks, vectorize=None)


def _close(a, b, rel):
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    return float(np.max(np.abs(np.asarray(a) - b), initial=0.0)) <= rel * scale


@pytest.mark.parametrize("name", sorted(MODELS))
def test_kernels_match_the_numeric_loop_closure(name):
    model, ks, lib = built(name)
    closure = LoopClosure(model)
    keep = [loop.selection for loop in ks.context.loops.loops]
    rng = np.random.default_rng(0)
    for _ in range(5):
        q = random_configuration(model, rng)
        v = rng.normal(size=model.nv)
        tk = closure.kinematics(q)
        phi = np.concatenate([u @ closure.raw_residual(c, tk)
                              for u, c in zip(keep, closure.cuts, strict=True)])
        g = np.vstack([u @ h for u, h in zip(keep, closure.jacobians(q), strict=True)])
        gamma = np.concatenate([u @ x for u, x in zip(keep, closure.biases(q, v), strict=True)])
        assert _close(lib.loop_constraints(q), phi, 1e-12)
        assert _close(lib.loop_jacobian(q), g, 1e-12)
        assert _close(lib.loop_bias(q, v), gamma, 1e-12)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_bias_is_the_derivative_of_the_jacobian(name):
    model, _, lib = built(name)
    rng = np.random.default_rng(1)
    step = 1e-6
    for _ in range(3):
        q = random_configuration(model, rng)
        v = rng.normal(size=model.nv)
        plus = lib.loop_jacobian(integrate(model, q, v, step))
        minus = lib.loop_jacobian(integrate(model, q, v, -step))
        assert _close(lib.loop_bias(q, v), (plus - minus) @ v / (2 * step), 1e-7)


@pytest.mark.parametrize("name", ["four_bar", "rssr", "bricard", "spherical_four_bar", "prrr",
                                  "double_four_bar", "welded_four_bar", "geared_four_bar",
                                  "rsur"])
def test_residual_vanishes_and_shares_the_null_space_of_g_when_assembled(name):
    model, ks, lib = built(name)
    analysis = ks.context.loops
    closure = LoopClosure(model)
    step = 1e-6
    for q in _samples(closure, analysis.loops, analysis.reference, np.random.default_rng(2)):
        assert np.max(np.abs(lib.loop_constraints(q)), initial=0.0) <= 1e-9
        g = lib.loop_jacobian(q)
        fd = np.column_stack([
            (lib.loop_constraints(integrate(model, q, e, step))
             - lib.loop_constraints(integrate(model, q, e, -step))) / (2 * step)
            for e in np.eye(model.nv)])

        def rank(m):
            return np.linalg.matrix_rank(m, tol=1e-7 * max(1.0, np.linalg.norm(m, 2)))

        assert rank(g) == rank(fd) == rank(np.vstack([g, fd]))


def test_no_loop_kernels_without_loop_joints():
    ks = symgen.generate(symgen.load(EXAMPLES / "double_pendulum.yaml"))
    assert not any(k.startswith("loop_") for k in ks.programs)
    ks = symgen.generate(symgen.load(EXAMPLES / "four_bar.yaml"))
    assert set(KERNELS) <= set(ks.programs)


@pytest.mark.parametrize("name", ["four_bar", "slider_crank", "rssr", "bricard", "prrr",
                                  "double_four_bar", "andrews_squeezer", "five_bar",
                                  "welded_four_bar", "geared_four_bar", "rsur"])
def test_constrained_forward_dynamics(name):
    # at assembled configurations with velocities along the motion (null space of G) and
    # random torques (seed 4): the saddle-point system [[M, −Gᵀ], [G, 0]] solved densely by
    # numpy with the reference M, C (independent of the LᵀDL and Schur route), and the
    # equations themselves: G q̈ + Ġ q̇ = 0 and M q̈ + C − Gᵀλ = τ + Q (Q of the force
    # elements, Andrews' spring and motor, from the numpy reference)
    model, ks, lib = built(name)
    analysis = ks.context.loops
    keep = list(analysis.rows)
    closure = LoopClosure(model)
    rng = np.random.default_rng(4)
    for q in _samples(closure, analysis.loops, analysis.reference, rng)[:4]:
        g = lib.loop_jacobian(q)
        _, sigma, vt = np.linalg.svd(g)
        tangent = vt[int(np.sum(sigma > 1e-8 * sigma[0])):].T
        v = tangent @ rng.normal(size=tangent.shape[1])
        tau = rng.normal(size=model.nv)
        a, lam = lib.constrained_forward_dynamics(q, v, tau)
        m = ref.mass_matrix(model, q)
        c = ref.bias_forces(model, q, v) - element_forces(model, q, v)
        gk, gamma = g[keep], lib.loop_bias(q, v)[keep]
        kkt = np.block([[m, -gk.T], [gk, np.zeros((len(keep), len(keep)))]])
        x = np.linalg.solve(kkt, np.concatenate([tau - c, -gamma]))
        assert _close(a, x[:model.nv], 1e-10) and _close(lam, x[model.nv:], 1e-10)
        assert _close(g @ a + lib.loop_bias(q, v), np.zeros(len(g)), 1e-10)
        assert _close(m @ a + c - gk.T @ lam, tau, 1e-10)


@pytest.mark.parametrize("name", ["four_bar", "slider_crank", "rssr", "bricard", "prrr",
                                  "spherical_four_bar", "geared_four_bar", "rsur"])
def test_loop_assemble_closes_the_loops_near_the_guess(name):
    # guesses 0.02 (rad or m) off assembled configurations along the motion (seed 5): 8
    # Gauss-Newton iterations close the loops to rounding, and the correction is the
    # least-norm one: to first order in the range of Gᵀ, so that its part along the motion
    # (the null space of G at the guess) is of second order, ≤ 10 % of it here
    model = MODELS[name]()
    ks = symgen.generate(model, ["loop_assemble", *KERNELS])
    lib = symgen.compile_kernels(ks, vectorize=None)
    analysis = ks.context.loops
    closure = LoopClosure(model)
    rng = np.random.default_rng(5)
    for q in _samples(closure, analysis.loops, analysis.reference, rng)[:3]:
        guess = integrate(model, q, 0.02 * rng.normal(size=model.nv), 1.0)
        closed = lib.loop_assemble(guess)
        assert np.max(np.abs(lib.loop_constraints(closed))) <= 1e-10
        # the same steps in numpy on the numeric loop closure (no symbolic code)
        numeric = closure.least_norm_steps(
            guess, [loop.selection for loop in analysis.loops], list(analysis.rows),
            ASSEMBLY_ITERATIONS, ASSEMBLY_DAMPING)
        assert _close(closed, numeric, 1e-10)
        g = lib.loop_jacobian(guess)
        _, sigma, vt = np.linalg.svd(g)
        motion = vt[int(np.sum(sigma > 1e-8 * sigma[0])):]
        delta = closed - guess if model.nq == model.nv else None
        if delta is not None:
            assert np.linalg.norm(motion @ delta) <= 0.1 * np.linalg.norm(delta)


def test_verify_compares_constrained_dynamics_by_backward_error():
    # symgen verify on unassembled random states: the saddle-point matrix of Bricard's
    # linkage is ill-conditioned at some of them (cond up to ~1e10), so the outputs are
    # compared by their backward error in the reference's system, which 1e-10 bounds
    result = run("verify", str(EXAMPLES / "bricard.yaml"), "--kernels",
                 "constrained_forward_dynamics")
    assert result.exit_code == 0, result.output
    assert "constrained_forward_dynamics  reference" in result.output
