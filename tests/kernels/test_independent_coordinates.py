"""Options.independent (issue 29): the independent coordinates of the constraint embedding
and of dependent_coordinates, chosen apart from the actuation (Options.actuated, the joints
of constrained_inverse_dynamics).

The physics does not depend on the choice: at the same consistent state (q assembled, G v
= 0) and joint forces, the embedding in any valid set of independent coordinates gives the
same joint accelerations, those of the multipliers (constrained_forward_dynamics); the
actuator forces of constrained_inverse_dynamics depend on the actuated joints only. On the
five-bar (2 DOF, motors motor1 and motor2 on the ground) with the independent coordinates
its motors (the default), its elbows, or one motor and one elbow. States: assembled
configurations with consistent rates (tests/loop_mapping.py, seed 0); bounds as
tests/kernels/test_embedding.py: 1e-9 relative to max(1, |x|∞) between formulations (κ ε
for the condition numbers of these states), 1e-10 for a kernel against itself.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from cli_runner import run, run_split
from loop_mapping import assembled_states, relative_error
from loop_mechanisms import prrr_manipulator
from paths import EXAMPLES

import symgen
from symgen.errors import SymgenError
from symgen.reference.integrate import integrate

TOLERANCE = 1e-9
KERNELS = ["embedded_forward_dynamics", "embedded_inverse_dynamics",
           "forward_dynamics_embedded", "constrained_forward_dynamics",
           "constrained_inverse_dynamics", "dependent_coordinates", "loop_constraints",
           "loop_jacobian"]
#: Options.independent of each build (None: today's default, the actuated motors).
CHOICES = {"motors": None, "elbows": ("elbow1", "elbow2"), "mixed": ("elbow2", "motor1")}


@cache
def five_bar() -> symgen.Model:
    return symgen.load(EXAMPLES / "five_bar.yaml")


@cache
def built(choice: str, actuated: tuple[str, ...] | None = None):
    ks = symgen.generate(five_bar(), KERNELS,
                         symgen.Options(independent=CHOICES[choice], actuated=actuated))
    return ks, symgen.compile_kernels(ks, vectorize=None)


def _states():
    ks, lib = built("motors")
    return assembled_states(five_bar(), lib, list(ks.context.loops.rows), count=4)


def test_the_choice_is_the_embeddings_and_the_actuation_stays():
    model = five_bar()
    expected = {"motors": ("motor1", "motor2"), "elbows": ("elbow1", "elbow2"),
                "mixed": ("elbow2", "motor1")}
    for choice, joints in expected.items():
        ks, _ = built(choice)
        split = ks.context.embedding.split
        assert split.joints == joints
        assert split.source == ("the ground joints" if choice == "motors"
                                else "Options.independent")
        # v_ind and a_ind list the independent coordinates in model order
        assert ks.context.embedding.independent == tuple(sorted(
            model.v_slices[j].start for j in joints))
        assert ks["constrained_inverse_dynamics"].outputs[0][0].shape == (2,)


@pytest.mark.parametrize("choice", ["elbows", "mixed"])
def test_embedded_dynamics_agree_across_independent_coordinates(choice):
    # the same consistent state: the embedding in the motors, in the chosen coordinates and
    # the multipliers give the same q̈ (every coordinate), and the same actuator forces
    _, base = built("motors")
    ks, lib = built(choice)
    ind = list(ks.context.embedding.independent)
    base_ind = list(built("motors")[0].context.embedding.independent)
    assert ind != base_ind
    for q, v, tau in _states():
        a_ind, v_full, a = lib.embedded_forward_dynamics(q, v[ind], tau)
        assert relative_error(v_full, v) <= 1e-12  # the dependent rates recovered
        assert np.array_equal(a_ind, a[ind])
        _, _, a_base = base.embedded_forward_dynamics(q, v[base_ind], tau)
        assert relative_error(a, a_base) <= TOLERANCE
        a_mult, _ = lib.constrained_forward_dynamics(q, v, tau)
        assert relative_error(a, a_mult) <= TOLERANCE
        assert relative_error(lib.forward_dynamics_embedded(q, v, tau), a_base) <= TOLERANCE
        # the actuation is the motors' in every build: the same u and λ at (q, v, a)
        u, lam = lib.constrained_inverse_dynamics(q, v, a)
        u0, lam0 = base.constrained_inverse_dynamics(q, v, a)
        assert relative_error(u, u0) <= 1e-10 and relative_error(lam, lam0) <= 1e-10
        # embedded inverse dynamics in the chosen coordinates inverts their forward dynamics
        tau_ind, a_back = lib.embedded_inverse_dynamics(q, v[ind], a_ind)
        forces = np.zeros(five_bar().nv)
        forces[ind] = tau_ind
        back, _, _ = lib.embedded_forward_dynamics(q, v[ind], forces)
        assert relative_error(back, a_ind) <= 1e-10 and relative_error(a_back, a) <= 1e-10


def test_actuated_and_independent_are_set_apart():
    # actuated (motor2, motor1): tau_act in that order; independent (elbow1, elbow2): the
    # embedding and dependent_coordinates hold the elbows
    ks, lib = built("elbows", ("motor2", "motor1"))
    _, base = built("motors")
    assert ks.context.embedding.split.joints == ("elbow1", "elbow2")
    model = five_bar()
    rng = np.random.default_rng(5)
    for q, v, tau in _states()[:2]:
        a = base.constrained_forward_dynamics(q, v, tau)[0]
        u = lib.constrained_inverse_dynamics(q, v, a)[0]
        assert relative_error(u, base.constrained_inverse_dynamics(q, v, a)[0][::-1]) <= 1e-10
        # dependent_coordinates: the elbows held bitwise, the motors solved back to q
        step = np.zeros(model.nv)
        step[[model.v_slices["motor1"].start, model.v_slices["motor2"].start]] = \
            0.01 * rng.normal(size=2)
        guess = integrate(model, q, step, 1.0)
        closed, status = lib.dependent_coordinates(guess)
        for joint in ("elbow1", "elbow2"):
            s = model.q_slices[joint]
            assert np.array_equal(closed[s], guess[s])
        assert np.max(np.abs(lib.loop_constraints(closed))) <= 1e-10
        assert 1e-8 < status[1] <= 1.0
        assert relative_error(closed, q) <= 1e-8


def test_invalid_choices_are_one_line_errors():
    model = five_bar()
    names = ["embedded_forward_dynamics"]
    cases = [
        (model, ("elbow1", "nope"), "has no joint named 'nope'"),
        (model, ("elbow1",), r"independent joints elbow1 \(Options.independent\) have 1 DOF "
         r"and the mechanism 2"),
        (model, ("elbow1", "effector"), r"independent joint 'effector' .* is a loop joint"),
        # the three revolutes of one 3-PRRR leg: their angles sum to a constant
        (prrr_manipulator(), ("r0a", "r0b", "r0c"),
         r"do not determine the motion.*Options\(independent=\.\.\.\)"),
        # no loop joints: every coordinate is independent
        (symgen.load(EXAMPLES / "geared_arm.yaml"), ("shoulder",), "has no loop joints"),
    ]
    for m, independent, message in cases:
        for kernels in (names, ["dependent_coordinates"]):
            if kernels != names and not m.loop_joints:
                continue
            with pytest.raises(SymgenError, match=message) as info:
                symgen.generate(m, kernels, symgen.Options(independent=independent))
            assert "\n" not in str(info.value)
    for value in ((), ("elbow1", "elbow1")):
        with pytest.raises(SymgenError, match="independent must name distinct joints"):
            symgen.generate(model, names, symgen.Options(independent=value))
    # a single name or a list (from JSON) is a tuple
    assert symgen.Options(independent="elbow1").independent == ("elbow1",)
    assert symgen.Options(independent=["elbow1", "elbow2"]).independent == ("elbow1", "elbow2")


def test_command_line_independent(tmp_path):
    five = str(EXAMPLES / "five_bar.yaml")
    result = run("verify", five, "--kernels",
                 "embedded_forward_dynamics,constrained_inverse_dynamics",
                 "--independent", "elbow1,elbow2", "--states", "3")
    assert result.exit_code == 0, result.output
    assert "all 2 checks passed" in result.output
    bad = run_split("generate", five, "-o", str(tmp_path), "--kernels",
                    "dependent_coordinates", "--independent", "elbow1,nope")
    assert bad.exit_code == 2
    (error,) = [line for line in bad.stderr.splitlines() if line.startswith("symgen: error")]
    assert "has no joint named 'nope' (Options.independent" in error
