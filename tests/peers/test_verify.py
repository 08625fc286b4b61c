"""``symgen verify`` on real robots: a Pinocchio failure is reported, never raised; Pinocchio's
own URDF reading is the peer for URDF models (and catches a wrong reading); a model without a
moving joint ends with one line; default frames and the fixed/floating base line."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest
from cli_runner import run_split
from paths import EXAMPLES, ROOT

import symgen
import symgen.apps.verify
import symgen.io.builder_checks as builder_module
import symgen.peers.pinocchio as peer_module
from symgen.apps.summary import base_description, mobile_base_hint
from symgen.apps.verify import random_states, verify_compiled
from symgen.build.compiler import compile_kernels
from symgen.generate import default_frames
from symgen.io.robots import example_robot_data_dir

PENDULUM = str(EXAMPLES / "double_pendulum.yaml")
FAST = ("-O0", "-std=c99")

#: A one-legged robot on a fixed base: a camera fixed on the base, a rotor link fixed on the
#: thigh (an end of the tree, but not of a limb), a shank and a foot fixed on the shank. The
#: foot's mass matters: dropping it changes M.
LEG_URDF = """<robot name="leg">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" ixy="0" ixz="0"
    iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="camera"/>
  <link name="thigh"><inertial><origin xyz="0 0 -0.1"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.002"/></inertial></link>
  <link name="rotor"><inertial><mass value="0.1"/><inertia ixx="1e-4" ixy="0" ixz="0"
    iyy="1e-4" iyz="0" izz="2e-4"/></inertial></link>
  <link name="shank"><inertial><origin xyz="0 0 -0.1"/><mass value="0.5"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.005" iyz="0" izz="0.001"/></inertial></link>
  <link name="foot"><inertial><mass value="0.3"/><inertia ixx="1e-3" ixy="0" ixz="0"
    iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>
  <joint name="camera_mount" type="fixed"><parent link="base"/><child link="camera"/>
    <origin xyz="0.2 0 0.1"/></joint>
  <joint name="hip" type="revolute"><parent link="base"/><child link="thigh"/>
    <origin xyz="0 0.1 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="10"/></joint>
  <joint name="rotor_mount" type="fixed"><parent link="thigh"/><child link="rotor"/>
    <origin xyz="0 0.05 0"/></joint>
  <joint name="knee" type="revolute"><parent link="thigh"/><child link="shank"/>
    <origin xyz="0 0 -0.2"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="10"/></joint>
  <joint name="ankle" type="fixed"><parent link="shank"/><child link="foot"/>
    <origin xyz="0.02 0 -0.2" rpy="0.3 0 0"/></joint>
</robot>
"""


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture
def leg_urdf(tmp_path):
    path = tmp_path / "leg.urdf"
    path.write_text(LEG_URDF)
    return path


def _verify(model, kernels=("mass_matrix", "inverse_dynamics"), states=3):
    ks = symgen.generate(model, list(kernels))
    lib = compile_kernels(ks, flags=FAST)
    return verify_compiled(lib, random_states(ks, states, seed=11))


# ---------------------------------------------------------------- peer failures
def test_pinocchio_model_failure_is_a_skipped_check_not_an_exception(monkeypatch):
    def broken(*_args, **_kwargs):
        raise RuntimeError("The 3d inertia should be positive.")

    monkeypatch.setattr(peer_module, "pinocchio_counterpart", broken)
    report = _verify(symgen.load(PENDULUM), kernels=("mass_matrix",))
    (skipped,) = report.skipped
    assert skipped.peer == "pinocchio" and "3d inertia" in skipped.skipped
    assert not skipped.ok and not skipped.failed
    assert not report.failed and [c.peer for c in report.performed] == ["reference"]
    verdict = report.verdict()
    assert verdict.startswith("all 1 checks passed (reference)")
    assert "1 skipped (pinocchio: The 3d inertia should be positive.)" in verdict


def test_pinocchio_evaluation_failure_skips_that_kernel_only(monkeypatch):
    def broken(*_args):
        raise RuntimeError("crba exploded")

    monkeypatch.setattr(pin, "crba", broken)
    report = _verify(symgen.load(PENDULUM))
    status = {(c.program, c.peer): c.status for c in report.checks}
    assert status["mass_matrix", "pinocchio"] == "skipped: crba exploded"
    assert status["inverse_dynamics", "pinocchio"] == "ok"
    assert not report.failed


def test_cli_reports_a_skipped_pinocchio_and_exits_zero(monkeypatch):
    def broken(*_args, **_kwargs):
        raise RuntimeError("no model\nfor you")

    monkeypatch.setattr(peer_module, "pinocchio_counterpart", broken)
    result = run_split("verify", PENDULUM, "--states", "2", "--kernels", "mass_matrix")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "skipped: no model for you" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == (
        "all 1 checks passed (reference); 1 skipped (pinocchio: no model for you)"
    )


# ---------------------------------------------------------------- iCub's inertia
def _icub(name: str = "icub_reduced.urdf"):
    return symgen.load(example_robot_data_dir() / "icub_description" / "robots" / name,
                       floating_base=True)


def test_icub_inertia_is_psd_up_to_rounding_and_pinocchio_accepts_it():
    """r_hip_2 carries ixx = iyy = -5.42101e-20 kg m² in the file: a point mass up to
    rounding. pin.Inertia's constructor refuses it, Pinocchio's URDF parser and symgen's
    validation (tolerance 1e-12 kg m² here) accept it, and so does pin_inertia."""
    model = _icub()
    body = model.bodies[model.body_index("r_hip_2")]
    moments = np.linalg.eigvalsh(np.array(body.inertia, dtype=float))
    assert -1e-18 < moments[0] < 0.0
    with pytest.raises(RuntimeError, match="inertia should be positive"):
        pin.Inertia(float(body.mass), np.array(body.com, float), np.array(body.inertia, float))
    inertia = peer_module.pin_inertia(body.mass, body.com, body.inertia)
    np.testing.assert_array_equal(inertia.inertia, np.array(body.inertia, dtype=float))
    pm = peer_module.pin_model_from_symgen(model)  # raised before
    assert pm.nv == model.nv == 35


@pytest.mark.slow
def test_icub_floating_base_verifies_against_pinocchio():
    report = _verify(_icub(), kernels=("mass_matrix",), states=2)
    assert not report.failed and not report.skipped, report.checks
    assert {c.peer for c in report.performed} == {"reference", "pinocchio"}
    assert any("buildModelFromUrdf" in note for note in report.notes), report.notes


# ---------------------------------------------------------------- nothing moves
def test_model_without_moving_joint_is_one_line_with_a_hint():
    path = example_robot_data_dir() / "hector_description" / "robots" / "quadrotor_base.urdf"
    result = run_split("verify", str(path), "--kernels", "mass_matrix")
    assert result.exit_code == 2, result.stdout + result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("symgen: error: ") and "no moving joint" in last
    assert "--floating-base" in last and "Traceback" not in result.stderr
    floating = run_split("verify", str(path), "--floating-base", "--kernels", "mass_matrix",
                         "--states", "2")
    assert floating.exit_code == 0, floating.stdout + floating.stderr


# ---------------------------------------------------------------- Pinocchio's URDF reading
def test_urdf_models_are_compared_with_pinocchios_own_reading(leg_urdf):
    result = run_split("verify", str(leg_urdf), "--states", "3", "--kernels",
                       "mass_matrix,inverse_dynamics,forward_dynamics")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "Pinocchio's own reading of leg.urdf (pinocchio.buildModelFromUrdf)" in result.stdout
    report = _verify(symgen.load(leg_urdf, floating_base=True))
    assert not report.failed and {c.peer for c in report.performed} == {"reference", "pinocchio"}
    assert any("leg.urdf" in n for n in report.notes)


def test_locked_joints_compare_with_pinocchios_reduced_model(leg_urdf):
    model = symgen.load(leg_urdf, lock={"knee": [0.3]})
    report = _verify(model)
    assert not report.failed and {c.peer for c in report.performed} == {"reference", "pinocchio"}
    assert any("buildModelFromUrdf + buildReducedModel" in n for n in report.notes), report.notes


def test_yaml_models_fall_back_to_a_pinocchio_model_built_from_symgens():
    report = _verify(symgen.load(PENDULUM), kernels=("mass_matrix",))
    note = report.note("Pinocchio")
    assert note is not None and "built from symgen's model" in note
    assert "not read from a URDF" in note


def test_a_wrong_reading_of_the_file_fails_against_pinocchios_reading(leg_urdf, monkeypatch):
    """Lumping that drops the links merged by fixed joints (here the foot and the rotor)
    agrees with symgen's own reference but not with Pinocchio's reading of the file."""
    right = builder_module.lump

    def drop_merged_links(parts):
        return right(parts[:1])

    monkeypatch.setattr(builder_module, "lump", drop_merged_links)
    report = _verify(symgen.load(leg_urdf))
    failed = {(c.program, c.peer) for c in report.failed}
    assert failed == {("mass_matrix", "pinocchio"), ("inverse_dynamics", "pinocchio")}
    worst = max(c.error for c in report.failed)
    assert worst > 1e-3  # 0.3 kg of foot at 0.2 m: not rounding


# ---------------------------------------------------------------- defaults on real robots
def test_default_frames_are_the_tips_never_frames_on_the_root(leg_urdf):
    model = symgen.load(leg_urdf)
    frames = {f.name: f for f in model.frames}
    assert frames["camera"].link and frames["camera"].leaf and frames["camera"].body == "base"
    assert frames["rotor"].leaf and frames["rotor"].body == "thigh"
    assert frames["foot"].leaf and frames["foot"].body == "shank"
    assert default_frames(model) == ("foot",)
    ks = symgen.generate(model, ["frame_jacobian"])
    assert list(ks.programs) == ["frame_jacobian_foot"]
    every = symgen.generate(model, ["frame_jacobian"],
                            symgen.Options(frames=tuple(model.frame_names)))
    assert len(every.programs) == 3


def test_default_frames_of_known_robots():
    root = example_robot_data_dir()
    go1 = symgen.load(root / "go1_description/urdf/go1.urdf")
    assert default_frames(go1) == ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
    panda = symgen.load(root / "panda_description/urdf/panda.urdf")
    assert default_frames(panda) == ("panda_hand_tcp",)  # above the finger bodies
    ur5 = symgen.load(root / "ur_description/urdf/ur5_robot.urdf")
    assert default_frames(ur5) == ("ee_link", "tool0")


def test_declared_frames_stay_and_bare_leaves_give_their_body():
    b = symgen.ModelBuilder("arm", root="world")
    for name in ("a", "b", "c"):
        b.body(name, mass=1.0, inertia=((0.1, 0, 0), (0, 0.1, 0), (0, 0, 0.1)))
    b.joint("j1", "revolute", "world", "a")
    b.joint("j2", "revolute", "a", "b", xyz=(0, 0, 0.5))
    b.joint("j3", "revolute", "a", "c", xyz=(0, 0.3, 0.5))
    b.frame("marker", "a", xyz=(0.1, 0, 0))
    b.frame("fixed_on_world", "world", xyz=(1, 0, 0))
    model = b.build()
    assert default_frames(model) == ("marker", "b", "c")


def test_info_and_generate_say_fixed_or_floating(leg_urdf, tmp_path):
    fixed, floating = symgen.load(leg_urdf), symgen.load(leg_urdf, floating_base=True)
    assert base_description(fixed).startswith("fixed: root 'base' is welded to the world")
    assert "--floating-base" in base_description(fixed)
    assert base_description(floating) == (
        "floating: free joint 'root_joint' attaches 'base' to 'world'")
    assert mobile_base_hint(fixed) is None  # one limb: an arm or a single leg
    result = run_split("info", str(leg_urdf))
    assert "base       fixed: root 'base'" in result.stdout
    solo = example_robot_data_dir() / "solo_description/robots/solo12.urdf"
    out = run_split("generate", str(solo), "-o", str(tmp_path), "--kernels", "mass_matrix")
    assert out.exit_code == 0, out.stderr
    hints = [line for line in out.stderr.splitlines() if line.startswith("hint:")]
    assert len(hints) == 1 and "4 limbs" in hints[0] and "--floating-base" in hints[0]
    out = run_split("generate", str(solo), "--floating-base", "-o", str(tmp_path),
                    "--kernels", "mass_matrix")
    assert out.exit_code == 0 and "hint:" not in out.stderr


def test_robot_data_tally_script_runs(tmp_path):
    script = ROOT / "examples" / "verify_robot_data.py"
    env = dict(os.environ, SYMGEN_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, str(script), "--only", "double_pendulum_simple",
                           "--states", "2", "--kernels", "mass_matrix"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    first, *_ = done.stdout.splitlines()
    assert first.startswith("pass    double_pendulum_description/urdf/double_pendulum_simple")
    assert "[pinocchio: URDF]" in first
    assert "1 files" in done.stdout and "1 passed" in done.stdout and "0 crashes" in done.stdout


def test_solves_are_compared_by_backward_error():
    """M = diag(1, 1e-12): an error of 1e-3 along the soft direction is what cond(M) = 1e12
    allows a correct solve, and has backward error 1e-15; the same error along the stiff
    direction is a wrong solution."""
    m = np.diag([1.0, 1e-12])
    b = np.array([1.0, 2.0])
    soft, stiff = b + [0.0, 1e-3], b + [1e-3, 0.0]
    assert symgen.apps.verify.relative_error(soft, b) == pytest.approx(5e-4)
    assert symgen.apps.verify.solve_error([soft], [b], [m]) == pytest.approx(5e-16)
    assert symgen.apps.verify.solve_error([stiff], [b], [m]) == pytest.approx(5e-4)


def test_forward_dynamics_derivatives_are_compared_by_backward_error(tmp_path):
    """A finger whose last link weighs 1 g: cond(M) ~ 1e6 amplifies the reference's central
    differences of ID (relative error ~1e-10) in −M⁻¹ ∂ID past the 1e-6 bound, which the
    backward error ‖M (a − b)‖ / (‖M‖ ‖b‖) does not (with the relative error this fails at
    1.7e-5); Pinocchio's computeABADerivatives is met to 1e-10 by the same measure."""
    link = ("  - name: {name}\n    mass: {m}\n    com: [0, 0, {c}]\n"
            "    inertia: [{i}, {i}, {i}]\n")
    joint = ("  - name: j{k}\n    type: revolute\n    parent: {parent}\n    child: {child}\n"
             "    origin: {{xyz: [0, 0, {z}]}}\n    axis: [{axis}]\n")
    sizes = [(1.0, 0.2, 1e-2), (0.05, 0.03, 1e-5), (0.001, 0.01, 1e-9)]
    names = ["l0", "l1", "l2"]
    axes = ["0, 1, 0", "1, 0, 0", "0, 1, 0"]
    text = "name: finger\ngravity: [0, 0, -9.81]\nbodies:\n" + "".join(
        link.format(name=n, m=m, c=c, i=i) for n, (m, c, i) in zip(names, sizes, strict=True))
    text += "joints:\n" + "".join(
        joint.format(k=k, parent="ground" if k == 0 else names[k - 1], child=names[k],
                     z=0 if k == 0 else 2 * sizes[k - 1][1], axis=axes[k]) for k in range(3))
    path = tmp_path / "finger.yaml"
    path.write_text(text)
    model = symgen.load(path)
    ks = symgen.generate(model, ["forward_dynamics_derivatives"])
    states = random_states(ks, 5, seed=3)
    masses = [symgen.reference.mass_matrix(model, s["q"]) for s in states]
    assert max(np.linalg.cond(m) for m in masses) > 1e5
    report = verify_compiled(compile_kernels(ks), states)
    assert not report.failed, report.verdict()
    assert {c.peer for c in report.performed} == {"reference", "pinocchio"}
