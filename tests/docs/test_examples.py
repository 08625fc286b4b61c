"""The example scripts run (short versions) and report what they promise."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT


def run_example(tmp_path: Path, script: str, *args: str, timeout: float = 600) -> str:
    env = dict(os.environ, SYMGEN_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, str(ROOT / "examples" / script), *args],
                            capture_output=True, text=True, timeout=timeout, env=env,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


SCRIPTS = sorted(p.name for p in (ROOT / "examples").glob("*.py"))
#: Seconds an example may take with its defaults (others: 900): verify_robot_data verifies
#: every URDF of example-robot-data, about a minute each, two at a time on two cores.
EXAMPLE_TIMEOUT = {"verify_robot_data.py": 3600}


@pytest.mark.slow  # 10 s to 2 minutes each (natural_mechanisms: four mechanisms over 2 s)
@pytest.mark.parametrize("script", SCRIPTS)
def test_every_example_runs_with_its_documented_defaults(tmp_path, script):
    """Each example as its docstring's usage line runs it, no argument given (the default
    robot, model, duration and step), exits 0 — every example reports a failed check by
    its exit code."""
    run_example(tmp_path, script, timeout=EXAMPLE_TIMEOUT.get(script, 900))


def test_simulation_conserves_energy(tmp_path):
    out = run_example(tmp_path, "simulate_panda.py", "--duration", "0.5", "--dt", "1e-3")
    drift = float(re.search(r"relative ([0-9.e+-]+)\)", out).group(1))
    assert drift < 1e-6, out  # τ = 0, no friction: energy is conserved up to RK4's error


def test_pinocchio_crosscheck(tmp_path):
    out = run_example(tmp_path, "crosscheck_pinocchio.py", "ur5", "--states", "50")
    errors = [float(x) for x in re.findall(r"max rel. error ([0-9.e+-]+)", out)]
    assert len(errors) == 4 and max(errors) < 1e-10, out


@pytest.mark.parametrize("robot", ["ur5"])
def test_reference_check(tmp_path, robot):
    out = run_example(tmp_path, "reference_check.py", robot, "--states", "3")
    assert "passed" in out


@pytest.mark.slow  # about 35 s: four mechanisms generated, compiled and simulated
def test_natural_mechanisms(tmp_path):
    out = run_example(tmp_path, "natural_mechanisms.py", "--duration", "0.2")
    for name, dof in (("four_bar", 1), ("slider_crank", 1), ("rssr", 2), ("double_pendulum", 2)):
        assert f"{name}: " in out and f"DOF = {dof}" in out.split(f"{name}: ")[1].split("\n")[0]
    worst = [float(x) for x in re.findall(r"worst \|Phi\| ([0-9.e+-]+)", out)]
    assert len(worst) == 4 and max(worst) < 1e-5, out


def test_parallel_robot(tmp_path):
    """The five-bar's motor torques along a motion, fed back through forward dynamics."""
    out = run_example(tmp_path, "parallel_robot.py", "--samples", "10")
    assert "DOF 4 - 2 = 2" in out and "motor1, motor2" in out, out
    phi = float(re.search(r"\|Phi\| ≤ ([0-9.e+-]+)", out).group(1))
    back = float(re.search(r"returns a to ([0-9.e+-]+)", out).group(1))
    assert phi < 1e-12 and back < 1e-10, out  # Newton closes to rounding; an exact inverse


def test_minimal_coordinates(tmp_path):
    out = run_example(tmp_path, "minimal_coordinates.py", "--duration", "0.2")
    drift = float(re.search(r"relative ([0-9.e+-]+)\)", out).group(1))
    residual = float(re.search(r"largest loop residual ([0-9.e+-]+)", out).group(1))
    assert drift < 1e-6 and residual < 1e-10, out  # RK4 at 1 ms; loops closed by Newton
    assert "independent: hip, knee_shank, ankle" in out, out


DAMPED_FORCES = """
forces:
  - {name: pull, type: spring, body_a: ground, point_a: [0.2, 0.3], body_b: coupler,
     point_b: [0.25, 0.05], stiffness: 40, damping: 0.5}
  - {name: crank_damper, type: joint_spring, joint: crank_joint, stiffness: 0, damping: 0.05}
  - {name: crank_motor, type: actuator, joint: crank_joint, force: 0.7}
"""


def test_minimal_coordinates_with_force_elements(tmp_path):
    """The energy balance with springs and actuators (Andrews' squeezer: the ``energy``
    kernel's elements entry) and with dampers (a loaded four-bar: E − W_d, the dampers'
    work integrated with the RK4 weights), at steps where RK4 is accurate."""
    andrews = ROOT / "examples" / "models" / "andrews_squeezer.yaml"
    out = run_example(tmp_path, "minimal_coordinates.py", str(andrews), "--duration", "0.01",
                      "--dt", "2e-5")
    assert float(re.search(r"relative ([0-9.e+-]+)\)", out).group(1)) < 1e-9, out
    damped = tmp_path / "four_bar_damped.yaml"
    damped.write_text((ROOT / "examples" / "models" / "four_bar.yaml").read_text().replace(
        "name: four_bar", "name: four_bar_damped") + DAMPED_FORCES)
    out = run_example(tmp_path, "minimal_coordinates.py", str(damped), "--duration", "0.5",
                      "--dt", "5e-4")
    drift = float(re.search(r"damper work drift ([0-9.e+-]+) J", out).group(1))
    drawn = float(re.search(r"the dampers drew ([0-9.e+-]+) J", out).group(1))
    assert drift < 1e-8 and drawn > 1.0, out  # the balance holds to 1e-8 of a 3.5 J loss


@pytest.mark.parametrize("model", [None, "gripper_arm.xml"], ids=["default", "gripper_arm"])
def test_mjcf_robot(tmp_path, model):
    """An MJCF robot's compiled kernels against MuJoCo: the default (gymnasium's ant or
    dm_control's humanoid when installed, else the gripper arm) and the gripper arm, whose
    loops, coupling and free tool go through the generic velocity map."""
    args = [] if model is None else [str(ROOT / "examples" / "models" / model)]
    out = run_example(tmp_path, "mjcf_robot.py", *args)
    diffs = [float(x) for x in re.findall(r"largest relative difference ([0-9.e+-]+)", out)]
    assert len(diffs) == 2 and max(diffs) < 1e-12, out  # both double precision, ~1e-16
    assert "PASS" in out and "q, v, _ = symgen.from_mujoco(model, d.qpos, d.qvel)" in out, out


def test_mjcf_four_bar(tmp_path):
    """The MJCF four-bar in minimal coordinates, with the documented defaults."""
    out = run_example(tmp_path, "mjcf_four_bar.py")
    drift = float(re.search(r"relative ([0-9.e+-]+)\)", out).group(1))
    residual = float(re.search(r"largest loop residual ([0-9.e+-]+)", out).group(1))
    assert drift < 1e-6 and residual < 1e-12, out  # RK4 at 1 ms; loops closed by Newton
    assert "independent: crank_joint" in out and "final state for MuJoCo: qpos [" in out, out
    stiff = re.search(r"constraints stiffened .* largest difference ([0-9.e+-]+) rad", out)
    assert stiff and float(stiff.group(1)) < 1e-4, out  # MuJoCo's motion as its loop stiffens


def test_mjcf_four_bar_plot(tmp_path):
    pytest.importorskip("matplotlib")
    out = run_example(tmp_path, "mjcf_four_bar.py", "--duration", "0.05", "--no-mujoco",
                      "--plot", str(tmp_path / "four_bar.png"))
    assert (tmp_path / "four_bar.png").stat().st_size > 0, out
