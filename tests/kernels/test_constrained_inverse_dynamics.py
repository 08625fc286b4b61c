"""Actuated inverse dynamics of closed loops (constrained_inverse_dynamics), Baumgarte's
stabilisation of constrained_forward_dynamics (Options.baumgarte) and the dependent
coordinates from the independent ones (dependent_coordinates), compiled.

States: assembled configurations along the motion (the loop analysis' random moves,
symgen.loops.analysis._samples), velocities in the null space of G and accelerations with
G a + Ġ v = 0 plus a random part along the motion (seeds per test). There the systems
solved are well conditioned: cond([B, Gᵀ]) ≤ 5e3 (the 3-PRRR; ≤ 25 on the others) and
cond of the saddle-point matrix ≤ 3e3 on these mechanisms, so that two backward-stable
solves agree to cond·ε ≈ 1e-12; the bounds are 1e-10 relative to each output's largest
entry (or 1).
"""

from __future__ import annotations

import subprocess
from functools import cache

import numpy as np
import pytest
from loop_mechanisms import prrr_manipulator, spherical_four_bar
from paths import EXAMPLES

import symgen
from symgen import reference as ref
from symgen.apps.verify import random_states, verify_compiled
from symgen.errors import SymgenError
from symgen.formulations.loop_constraints import ASSEMBLY_DAMPING, ASSEMBLY_ITERATIONS
from symgen.formulations.tree.context import TreeTarget
from symgen.formulations.tree.derivation import tree_program
from symgen.ir.printer import program_lines
from symgen.loops import LoopClosure
from symgen.loops.actuation import actuation, independent_coordinates
from symgen.loops.analysis import _samples
from symgen.reference.integrate import integrate
from symgen.reference.kinematics import tree_kinematics
from symgen.registry import Kernel, get

KERNELS = ["loop_constraints", "loop_jacobian", "loop_bias", "constrained_forward_dynamics",
           "constrained_inverse_dynamics", "dependent_coordinates"]
#: The strict flags of tests/build/test_c_build.py.
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Werror"]
#: model factory and Options.actuated (None: the ground joints, which have the DOF)
MODELS = {
    "five_bar": (lambda: symgen.load(EXAMPLES / "five_bar.yaml"), None),  # motor1, motor2
    "four_bar": (lambda: symgen.load(EXAMPLES / "four_bar.yaml"), ("crank_joint",)),
    "slider_crank": (lambda: symgen.load(EXAMPLES / "slider_crank.yaml"), ("crank_joint",)),
    "spherical_four_bar": (spherical_four_bar, ("j1",)),
    "prrr": (prrr_manipulator, None),  # the three prismatic joints p0, p1, p2
}


#: Models whose dependent_coordinates is evaluated in Python rather than compiled:
#: the 3-PRRR's (8 Newton steps on 10 coordinates, 8400 operations) takes 3 s to compile.
INTERPRETED = {"prrr"}


@cache
def built(name: str):
    factory, actuated = MODELS[name]
    model = factory()
    kernels = KERNELS[:-1] if name in INTERPRETED else KERNELS
    ks = symgen.generate(model, kernels, symgen.Options(actuated=actuated))
    return model, ks, symgen.compile_kernels(ks, vectorize=None)


def _close(a, b, rel):
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    return float(np.max(np.abs(np.asarray(a) - b), initial=0.0)) <= rel * scale


def _states(name: str, seed: int, count: int = 4):
    """(q, v, a): assembled q, G v = 0, G a + Ġ v = 0."""
    model, ks, lib = built(name)
    analysis = ks.context.loops
    keep = list(analysis.rows)
    rng = np.random.default_rng(seed)
    out = []
    for q in _samples(LoopClosure(model), analysis.loops, analysis.reference, rng)[:count]:
        g = lib.loop_jacobian(q)[keep]
        tangent = np.linalg.svd(g)[2][len(keep):].T
        v = tangent @ rng.normal(size=tangent.shape[1])
        gamma = lib.loop_bias(q, v)[keep]
        a = np.linalg.lstsq(g, -gamma, rcond=None)[0] + tangent @ rng.normal(
            size=tangent.shape[1])
        out.append((q, v, a))
    return out


@pytest.mark.parametrize("name", sorted(MODELS))
def test_actuated_inverse_dynamics_round_trips_through_forward_dynamics(name):
    # u, λ = ID(q, v, a); FD(q, v, B u) returns a and λ; u, λ also solve the square system
    # [B, Gᵀ][u; λ] = M a + C assembled from the reference dynamics and the numeric loop
    # closure and solved densely by numpy (seed 10)
    model, ks, lib = built(name)
    split = actuation(model, ks.context.loops, ks.context.actuated)
    keep = list(ks.context.loops.rows)
    closure = LoopClosure(model)
    selection = [loop.selection for loop in ks.context.loops.loops]
    for q, v, a in _states(name, 10):
        u, lam = lib.constrained_inverse_dynamics(q, v, a)
        tau = np.zeros(model.nv)
        tau[list(split.active)] = u
        a_fd, lam_fd = lib.constrained_forward_dynamics(q, v, tau)
        assert _close(a_fd, a, 1e-10) and _close(lam_fd, lam, 1e-10)
        g = np.vstack([s @ h for s, h in zip(selection, closure.jacobians(q),
                                             strict=True)])[keep]
        system = np.hstack([np.eye(model.nv)[:, list(split.active)], g.T])
        x = np.linalg.solve(system, ref.inverse_dynamics(model, q, v, a))
        assert _close(u, x[:len(u)], 1e-10) and _close(lam, x[len(u):], 1e-10)


def test_the_actuated_set_and_its_errors():
    model, ks, _ = built("five_bar")
    analysis = ks.context.loops
    assert actuation(model, analysis).joints == ("motor1", "motor2")  # the ground joints
    # the order of Options.actuated is the order of tau_act
    swapped = symgen.generate(model, ["constrained_inverse_dynamics"],
                              symgen.Options(actuated=("motor2", "motor1")))
    q, v, a = _states("five_bar", 11, 1)[0]
    u = built("five_bar")[2].constrained_inverse_dynamics(q, v, a)[0]
    got = swapped.evaluate("constrained_inverse_dynamics", q=q, v=v, a=a)["tau_act"]
    assert _close(got, u[::-1], 1e-12)
    four_bar = symgen.load(EXAMPLES / "four_bar.yaml")
    cases = [
        (four_bar, None, r"declares no actuated joints .*Options\(actuated"),
        (model, ("motor1",), "have 1 DOF and the mechanism 2"),
        (model, ("motor1", "effector"), "is a loop joint"),
        (model, ("motor1", "nope"), "has no joint named 'nope'"),
        # the three revolutes of one 3-PRRR leg: the platform does not turn, so their
        # angles sum to a constant and cannot be independent
        (prrr_manipulator(), ("r0a", "r0b", "r0c"), "do not determine the motion"),
    ]
    for m, actuated, message in cases:
        with pytest.raises(SymgenError, match=message) as info:
            symgen.generate(m, ["constrained_inverse_dynamics"],
                            symgen.Options(actuated=actuated))
        assert "\n" not in str(info.value)
    for options, message in [(dict(actuated=()), "actuated must name distinct joints"),
                             (dict(actuated=("a", "a")), "actuated must name distinct"),
                             (dict(baumgarte=(1.0,)), "baumgarte must be"),
                             (dict(baumgarte=(1.0, -2.0)), "finite and >= 0")]:
        with pytest.raises(SymgenError, match=message):
            symgen.generate(four_bar, ["constrained_forward_dynamics"],
                            symgen.Options(**options))
    # Andrews' squeezer declares a motor on beta: its actuated joint
    squeezer = symgen.load(EXAMPLES / "andrews_squeezer.yaml")
    from symgen.loops import analyse_loops

    assert actuation(squeezer, analyse_loops(squeezer)).joints == ("beta",)


@cache
def stabilised():
    """The four-bar with Baumgarte (α = β = 10/s), external forces and its crank actuated."""
    model = symgen.load(EXAMPLES / "four_bar.yaml")
    options = symgen.Options(actuated=("crank_joint",), baumgarte=(10.0, 10.0),
                             external_forces=True)
    ks = symgen.generate(model, ["loop_constraints", "loop_jacobian",
                                 "constrained_forward_dynamics",
                                 "constrained_inverse_dynamics"], options)
    return model, ks, symgen.compile_kernels(ks, vectorize=None)


def _simulate(fd, model, q, v, duration=1.0, dt=2e-3):
    """RK4 on (q, v) (revolute joints only: q ⊕ v dt = q + v dt), zero torques."""
    def f(x):
        return np.concatenate([x[model.nv:], fd(x[:model.nv], x[model.nv:])])

    x = np.concatenate([q, v])
    for _ in range(round(duration / dt)):
        k1 = f(x)
        k2 = f(x + dt / 2 * k1)
        k3 = f(x + dt / 2 * k2)
        k4 = f(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x[:model.nv], x[model.nv:]


def test_baumgarte_pulls_a_drifting_state_back_and_is_off_by_default():
    model, ks, lib = stabilised()
    _, _, plain = built("four_bar")
    f_ext = np.zeros((model.nbodies, 6))
    rng = np.random.default_rng(12)
    q0, v0, _ = _states("four_bar", 12, 1)[0]
    q = q0 + 1e-3 * rng.normal(size=model.nv)  # 1 mrad off the loop closure
    phi0 = np.linalg.norm(lib.loop_constraints(q))
    assert phi0 > 1e-5

    def on(q, v):
        return lib.constrained_forward_dynamics(q, v, np.zeros(model.nv), f_ext)[0]

    def off(q, v):
        return plain.constrained_forward_dynamics(q, v, np.zeros(model.nv))[0]

    # e'' + 2α e' + β² e = 0 with α = β = 10/s: e(1 s) = e(0)(1 + 10) e^-10 = 5e-4 e(0)
    # to first order; without stabilisation G q̈ + Ġ q̇ = 0 keeps Φ where it was
    q_on, v_on = _simulate(on, model, q, v0)
    q_off, v_off = _simulate(off, model, q, v0)
    assert np.linalg.norm(lib.loop_constraints(q_on)) <= 2e-3 * phi0
    assert np.linalg.norm(lib.loop_constraints(q_off)) >= 0.5 * phi0
    assert np.linalg.norm(lib.loop_jacobian(q_on) @ v_on) <= 1e-2 * phi0
    # at a closed, consistent state the stabilisation terms vanish
    for q, v, _ in _states("four_bar", 13, 2):
        tau = rng.normal(size=model.nv)
        a, lam = lib.constrained_forward_dynamics(q, v, tau, f_ext)
        a0, lam0 = plain.constrained_forward_dynamics(q, v, tau)
        assert _close(a, a0, 1e-10) and _close(lam, lam0, 1e-10)
    # off (the default) is the program of the kernel before Baumgarte: the same statements
    from symgen.formulations import constrained

    old = Kernel("constrained_forward_dynamics", "tree", "", ("q", "v", "tau"),
                 get("constrained_forward_dynamics").outputs,
                 tree_program(lambda d: dict(zip(("a", "lam"), constrained.forward_dynamics(
                     d.b, d.tree, d.get("v"), d.get("tau"), d.loop_rows, d.loop_keep,
                     d.get("f_ext")), strict=True))), loops=True)
    context = built("four_bar")[1].context
    target = TreeTarget("constrained_forward_dynamics")
    new = get("constrained_forward_dynamics")
    new_lines = program_lines(new.derive(context, target, new))
    assert new_lines == program_lines(old.derive(context, target, old))


def test_verify_compares_the_stabilised_and_actuated_kernels_with_their_references():
    # random, unassembled states with external forces: the references (dense numpy solves)
    # include Baumgarte's terms and f_ext; compared by backward error (comparison "system")
    _, ks, lib = stabilised()
    report = verify_compiled(lib, random_states(ks, 20, 0))
    assert not report.failed and len(report.performed) == 4, report.checks


@pytest.mark.parametrize("real", ["double", "float"])
def test_generated_c_compiles_strictly(real, tmp_path):
    _, ks, _ = stabilised()
    source = symgen.write_c(ks, tmp_path, real=real)[1]
    run = subprocess.run(["gcc", *STRICT, "-O0", "-c", str(source), "-o",
                          str(tmp_path / "k.o")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[:3000]


def _newton(model, analysis, q, dependent):
    """The numeric counterpart of dependent_coordinates: Newton steps on the dependent
    columns with the numeric loop closure (no symbolic code)."""
    closure = LoopClosure(model)
    selection = [loop.selection for loop in analysis.loops]
    keep = list(analysis.rows)
    held = [name for name, vs in model.v_slices.items()
            if not set(range(model.nv)[vs]) & set(dependent)]
    start = np.array(q, float)
    q = start.copy()
    for _ in range(ASSEMBLY_ITERATIONS):
        tk = tree_kinematics(closure.nm, q)
        phi = np.concatenate([u @ closure.raw_residual(c, tk)
                              for u, c in zip(selection, closure.cuts, strict=True)])[keep]
        g = np.vstack([u @ closure.loop_jacobian(c, tk)
                       for u, c in zip(selection, closure.cuts, strict=True)])[keep]
        gd = g[:, list(dependent)]
        normal = gd @ gd.T
        normal += ASSEMBLY_DAMPING * np.trace(normal) * np.eye(len(keep))
        step = np.zeros(model.nv)
        step[list(dependent)] = -gd.T @ np.linalg.solve(normal, phi)
        q = integrate(model, q, step, 1.0)
        for name in held:
            q[model.q_slices[name]] = start[model.q_slices[name]]
    return q


#: How far the dependent coordinates are moved from an assembled configuration: well within
#: Newton's basin (the other assembly nearest to a configuration bounds it). The 3-PRRR's
#: sampled configurations come closer to other assemblies: along its motion (seeds 10-29,
#: 60 states) Newton from moves of 0.01 reached one 0.009-0.107 away at 4, from 0.003 at
#: 1, from 0.001 at none (its kept rows are the cut frames' force and moment components;
#: which of its two equal moment rows is dropped as redundant shapes the basin).
MOVE = {"prrr": 0.001}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_dependent_coordinates_close_the_loops_from_near_guesses(name):
    # the dependent coordinates of assembled configurations moved by 0.01 rad (or m), or
    # MOVE (seed 14): 8 Newton steps return them (the nearby solution is the configuration
    # itself) to rounding, hold the independent ones bitwise, and agree with the same steps
    # in numpy. (Within the basin: at one of these configurations of the spherical four-bar
    # the other assembly branch of the same crank angle lies 0.2 rad away, and 0.05 rad
    # reaches it.)
    model, ks, lib = built(name)
    split = independent_coordinates(model, ks.context.loops, ks.context.actuated)
    interpreted = symgen.generate(model, ["dependent_coordinates"], ks.options) \
        if name in INTERPRETED else None
    rng = np.random.default_rng(14)
    for q, _, _ in _states(name, 14, 3):
        step = np.zeros(model.nv)
        step[list(split.passive)] = MOVE.get(name, 0.01) * rng.normal(size=len(split.passive))
        guess = integrate(model, q, step, 1.0)
        closed, status = ((lambda out: (out["q_closed"], out["status"]))(
            interpreted.evaluate("dependent_coordinates", q=guess))
            if interpreted else lib.dependent_coordinates(guess))
        assert np.max(np.abs(lib.loop_constraints(closed))) <= 1e-10
        # the status: the largest |Φ| of the independent rows left, and G_D regular
        keep = list(ks.context.loops.rows)
        assert status[0] == pytest.approx(np.max(np.abs(lib.loop_constraints(closed)[keep])),
                                          abs=1e-15)
        assert 1e-8 < status[1] <= 1.0
        for joint in split.joints:
            s = model.q_slices[joint]
            assert np.array_equal(closed[s], guess[s])
        assert _close(closed, q, 1e-8)
        assert _close(closed, _newton(model, ks.context.loops, guess, split.passive), 1e-10)


def test_dependent_coordinates_chosen_by_pivoting_without_a_declaration():
    # the four-bar declares no actuator and its ground joints have 2 DOF for 1: the
    # independent coordinate is chosen by pivoting G at the reference configuration
    model = symgen.load(EXAMPLES / "four_bar.yaml")
    ks = symgen.generate(model, ["dependent_coordinates"])
    split = independent_coordinates(model, ks.context.loops)
    assert split.source == "chosen by pivoting G" and len(split.joints) == 1
    rng = np.random.default_rng(15)
    for q, _, _ in _states("four_bar", 15, 2):
        step = np.zeros(model.nv)
        step[list(split.passive)] = 0.01 * rng.normal(size=len(split.passive))
        guess = integrate(model, q, step, 1.0)
        closed = ks.evaluate("dependent_coordinates", q=guess)["q_closed"]
        assert _close(closed, q, 1e-8)
