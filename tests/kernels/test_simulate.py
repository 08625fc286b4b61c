"""``symgen.simulate`` with its default settings on public benchmark problems, against
independent references (tests/benchmark_mechanisms.py, tests/natural_runs.py):

- Andrews' squeezing mechanism to t = 0.03 s: the seven angles of the test set's published
  solution (PSIDE, tolerance 1e-14) to 1e-6 rad, the issue's bound (the default, the
  generated RK4 step with step doubling: measured 3.4e-8; at a fixed 1e-5 s: 1.6e-9);
- the heavy top for 2 s: quaternion and body angular velocity of the numpy Euler-equation
  reference (extrapolation, 1e-12) to 1e-6 (measured 3e-9);
- Bricard's redundant 6R linkage falling from its zero configuration for 10 s: energy
  balance within 1e-6 J (the default: 8.5e-8 J in 1.5 s; at a fixed 0.25 ms: 1.9e-10 J),
  loop residuals at rounding level;
- the IFToMM N-four-bar chain from its benchmark start (cranks vertical, −1 rad/s) for
  20 s at a fixed step (the generated closed-loop steps): the first crank's tip within
  1e-4 m of the reduced 1-DOF reference at 1 ms and closer at 0.25 ms, through the 20
  singular positions where the cranks are horizontal (N = 2: RK4 1.6e-5 and 6e-7 m,
  trapezoidal 1.2e-5 and 6.6e-7; N = 40, slow tier: RK4 3.3e-5 and 5.1e-7).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from benchmark_mechanisms import (
    ANDREWS_JOINTS,
    ANDREWS_T_REF,
    ANDREWS_Y0,
    ANDREWS_Y_REF,
    ANDREWS_YAML,
    BRICARD_YAML,
    TOP_YAML,
    top_initial_state,
    top_reference,
)
from mechanisms import n_four_bar
from natural_runs import ChainReference
from paths import EXAMPLES

import symgen
from symgen.errors import SymgenError


def test_andrews_squeezer_with_default_settings():
    model = symgen.load(ANDREWS_YAML)
    trajectory = symgen.simulate(model, ANDREWS_T_REF, progress=False)
    order = [model.joint_names.index(name) for name in ANDREWS_JOINTS]
    y = ANDREWS_Y0 + trajectory.q[-1][order]
    assert np.max(np.abs(y - ANDREWS_Y_REF)) < 1e-6
    assert trajectory.position_residual.max() < 1e-12
    assert trajectory.method.startswith("loop_rk4")


def test_heavy_top_with_default_settings():
    quat0, omega0 = top_initial_state()
    trajectory = symgen.simulate(TOP_YAML, 2.0, q0=quat0, v0=omega0, progress=False)
    quat, omega, _ = top_reference(2.0)
    got = trajectory.q[-1] * np.sign(trajectory.q[-1] @ quat)
    assert np.max(np.abs(got - quat)) < 1e-6
    assert np.max(np.abs(trajectory.v[-1] - omega)) < 1e-6
    assert np.max(np.abs(trajectory.energy_balance)) < 1e-6


def test_bricard_energy_over_ten_seconds():
    trajectory = symgen.simulate(BRICARD_YAML, 10.0, progress=False)
    assert np.max(np.abs(trajectory.v)) > 1.0  # it moves
    assert np.max(np.abs(trajectory.energy_balance)) <= 1e-6
    assert trajectory.position_residual.max() < 1e-12
    assert trajectory.velocity_residual.max() < 1e-10


def chain_start(n: int):
    model = n_four_bar(n, math.pi / 2)
    v0 = np.zeros(model.nv)
    for i in range(n + 1):
        v0[model.v_slices[f"pivot_{i}"]] = -1.0
    for i in range(n):
        v0[model.v_slices[f"tip_{i}"]] = 1.0  # the couplers translate
    return model, v0


def chain_error(n: int, dt: float, method: str = "auto") -> float:
    """The largest distance over 20 s between the first crank's tip and the reduced
    reference, sampled every 10 steps."""
    model, v0 = chain_start(n)
    trajectory = symgen.simulate(model, 20.0, dt, v0=v0, method=method, progress=False,
                                 record_every=10)
    assert trajectory.position_residual.max() < 1e-12
    reference = ChainReference(n, 20.0, theta0=math.pi / 2, rate0=-1.0)
    assert len(reference.singular_times(20.0)) >= 20
    theta = math.pi / 2 + trajectory.joint("pivot_0")[:, 0]
    expected = reference.angle(trajectory.t)
    return float(np.max(np.hypot(np.cos(theta) - np.cos(expected),
                                 np.sin(theta) - np.sin(expected))))


@pytest.mark.parametrize("method", ["auto", pytest.param("loop_trapezoidal",
                                                         marks=pytest.mark.slow)])
def test_double_four_bar_benchmark_through_singular_positions(method):
    """The generated steps (auto with a fixed dt: loop_rk4) at 1 ms within the benchmark's
    bound 1e-4 m, and closer at 0.25 ms."""
    coarse = chain_error(2, 1e-3, method)
    assert coarse < 1e-4
    assert chain_error(2, 2.5e-4, method) < coarse


@pytest.mark.slow  # about 2 minutes: the 40-loop chain's step compiles in about a minute
def test_forty_loop_chain_benchmark_at_one_and_a_quarter_millisecond():
    coarse = chain_error(40, 1e-3)
    assert coarse < 1e-4
    assert chain_error(40, 2.5e-4) < coarse


def test_generated_steps_on_andrews_and_bricard():
    """The generated RK4 step: Andrews' squeezer at 1e-5 s to the published solution within
    1e-6 rad; Bricard's linkage for 10 s at 0.25 ms within 1e-6 J of energy balance."""
    model = symgen.load(ANDREWS_YAML)
    trajectory = symgen.simulate(model, ANDREWS_T_REF, 1e-5, progress=False,
                                 record_every=100)
    assert trajectory.method.startswith("loop_rk4")
    order = [model.joint_names.index(name) for name in ANDREWS_JOINTS]
    assert np.max(np.abs(ANDREWS_Y0 + trajectory.q[-1][order] - ANDREWS_Y_REF)) < 1e-6
    bricard = symgen.simulate(BRICARD_YAML, 10.0, 2.5e-4, progress=False, record_every=40)
    assert np.max(np.abs(bricard.v)) > 1.0
    assert np.max(np.abs(bricard.energy_balance)) <= 1e-6
    assert bricard.velocity_residual.max() < 1e-10


def test_forces_energy_balance_and_plot(tmp_path):
    """A tree under a controller (a function of t, q, v) and constant joint forces: the work
    done balances the energy (RK4 at 1 ms, pendulum-like double pendulum, 1 s: 1e-8 J)."""
    model = symgen.load(EXAMPLES / "double_pendulum.yaml")

    def controller(t, q, v):
        return -2.0 * q - 0.5 * v + np.sin(t)

    for tau in (controller, np.full(model.nv, 0.3)):
        trajectory = symgen.simulate(model, 1.0, 1e-3, q0=np.full(model.nq, 0.4), tau=tau,
                                     progress=False)
        assert abs(trajectory.work[-1]) > 1e-3
        assert np.max(np.abs(trajectory.energy_balance)) < 1e-8
    pytest.importorskip("matplotlib")
    trajectory.plot(tmp_path / "run.png")
    assert (tmp_path / "run.png").stat().st_size > 1000


def test_bad_arguments_are_one_line_errors():
    model = symgen.load(EXAMPLES / "double_pendulum.yaml")
    for kwargs, message in (({"duration": -1.0}, "positive"),
                            ({"duration": 1.0, "tau": [1.0] * 5}, "expected nv"),
                            ({"duration": 1.0, "method": "euler"}, "unknown method"),
                            ({"duration": 1.0, "dt": 0.3}, "whole number of steps"),
                            ({"duration": 1.0, "q0": [0.0]}, "q0 needs nq")):
        with pytest.raises(SymgenError, match=message):
            symgen.simulate(model, **kwargs)
    loops = symgen.load(EXAMPLES / "four_bar.yaml")
    with pytest.raises(SymgenError, match="has loop joints"):
        symgen.simulate(loops, 1.0, method="tree")


def test_rejected_steps_stay_on_the_published_branch():
    """The Andrews failure seen with minimal coordinates: a rejected step moved time back
    and the dependent coordinates, seeded from the future, closed on another branch. Here
    a rejected step is retried from the same (t, q, v) and the loops are closed by a
    projection from the step's own end: at a tolerance loose enough that steps are rejected,
    the run still ends on the published branch (error far below the branch distance)."""
    model = symgen.load(ANDREWS_YAML)
    trajectory = symgen.simulate(model, ANDREWS_T_REF, tolerance=1e-6, progress=False)
    rejected = int(trajectory.notes[0].split()[0])
    assert rejected > 0
    order = [model.joint_names.index(name) for name in ANDREWS_JOINTS]
    y = ANDREWS_Y0 + trajectory.q[-1][order]
    assert np.max(np.abs(y - ANDREWS_Y_REF)) < 1e-3


def test_simulate_command(tmp_path):
    from cli_runner import run_split

    path = str(EXAMPLES / "four_bar.yaml")
    result = run_split("simulate", path, "--duration", "0.2", "--q0", "0.3,0,0",
                       "--csv", str(tmp_path / "run.csv"))
    assert result.exit_code == 0, result.stderr
    assert "energy balance" in result.stdout and "largest |phi|" in result.stdout
    rows = np.loadtxt(tmp_path / "run.csv", delimiter=",", skiprows=1)
    assert rows.shape[1] == 1 + 3 + 3 and rows[-1, 0] == pytest.approx(0.2)
    bad = run_split("simulate", path, "--duration", "0.2", "--q0", "1,2")
    assert bad.exit_code == 2 and "expected nq = 3" in bad.stderr


def test_energy_balance_with_springs_dampers_loops_and_a_free_body():
    """gripper_arm.xml from its keyframe: dampers draw work, springs hold elastic energy
    (the energy kernel's third entry), a weld holds a free tool and a push rod closes a
    loop; the balance E − E0 − W stays at the integration's accuracy. The default (the
    generated RK4 step, step doubling at tolerance 1e-10, 34 steps of ~6 ms): each step's
    error, 1e-10·(1 + |y|) relative, moves E by at most |∂E/∂y|·that, ~1e-8 J per step here
    (momenta and forces of order 10), so 1e-6 J over the run (measured 4.7e-8 J); the
    Python-driven Dormand-Prince steps (``projected``, the dampers' work with the stages'
    weights) to 1e-8 J (measured 5e-12 J)."""
    from symgen.io.mjcf_state import keyframe

    model = symgen.load(EXAMPLES / "gripper_arm.xml")
    q0, v0 = keyframe(model, "home")
    for method, bound in (("auto", 1e-6), ("projected", 1e-8)):
        trajectory = symgen.simulate(model, 0.2, q0=q0, v0=v0, method=method, progress=False)
        assert trajectory.work[-1] < -0.01  # the dampers dissipate
        assert np.max(np.abs(trajectory.energy_balance)) < bound
        assert trajectory.position_residual.max() < 1e-12


def test_given_kernels_are_used_and_checked():
    """simulate(kernels=...) on closed loops: compiled kernels holding the step's functions
    give the same run as the default (the same programs), and kernels lacking them are a
    one-line error naming what is missing."""
    from symgen.simulation.loop_run import kernel_names

    model = symgen.load(EXAMPLES / "four_bar.yaml")
    lib = symgen.compile_kernels(symgen.generate(model, kernel_names(model, "loop_rk4")))
    given = symgen.simulate(model, 0.1, 1e-3, q0=[0.3, 0.0, 0.0], kernels=lib, progress=False)
    default = symgen.simulate(model, 0.1, 1e-3, q0=[0.3, 0.0, 0.0], progress=False)
    assert np.array_equal(given.q, default.q)
    lacking = symgen.compile_kernels(symgen.generate(model, ["energy"]))
    with pytest.raises(SymgenError, match="lack loop_step_rk4"):
        symgen.simulate(model, 0.1, 1e-3, kernels=lacking, progress=False)
