"""MJCF reader: what it maps, the names it gives, its notes and its one-line errors.

The dynamics of what it maps are checked against MuJoCo in tests/peers/test_mjcf_mujoco.py
and tests/peers/test_mjcf_loops.py; this file checks the reader's decisions."""

from __future__ import annotations

import numpy as np
import pytest
from cli_runner import run_split
from model_files import line_of, write

import symgen
from symgen.errors import ModelError, SymgenError
from symgen.io.mjcf_state import keyframe
from symgen.model import JointType

pytest.importorskip("mujoco")


def mjcf(tmp_path, body: str, extra: str = "", option: str = "") -> str:
    text = (f"<mujoco model=\"m\">\n{option}\n<worldbody>\n{body}\n</worldbody>\n{extra}\n"
            "</mujoco>\n")
    return write(tmp_path, text, "model.xml")


ARM = """<body name="upper" pos="0 0 1">
  <joint name="shoulder" axis="0 1 0" damping="0.5" stiffness="3" springref="30" ref="10"/>
  <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04"/>
  <site name="elbow_site" pos="0 0 -0.4"/>
  <body name="lower" pos="0 0 -0.4">
    <joint name="elbow" axis="0 1 0" armature="0.02"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
  </body>
</body>"""


def test_joints_springs_armature_motors_keyframes(tmp_path):
    path = mjcf(tmp_path, ARM, """<actuator><motor name="m" joint="elbow" gear="7"/></actuator>
<keyframe><key name="bent" qpos="0.5 1.0" qvel="0.1 0.2"/></keyframe>""")
    model = symgen.load(path)
    assert model.joint_names == ["shoulder", "elbow"]
    assert [j.type for j in model.joints] == [JointType.REVOLUTE] * 2
    assert model.joints[1].armature_values == (0.02,)
    [spring] = model.force_elements
    # springref is absolute (degrees here): rest = springref − ref in symgen's coordinate
    assert spring.joint == "shoulder" and spring.stiffness == 3 and spring.damping == 0.5
    assert spring.rest == pytest.approx(np.radians(30 - 10), rel=1e-12)
    [motor] = model.motors
    assert (motor.name, motor.joint, motor.gear) == ("m", "elbow", 7.0)
    q, v = keyframe(model, "bent")
    np.testing.assert_allclose(q, [0.5 - np.radians(10), 1.0], rtol=1e-14)
    np.testing.assert_allclose(v, [0.1, 0.2])
    with pytest.raises(SymgenError, match="no keyframe 'home' \\(keyframes: bent\\)"):
        keyframe(model, "home")
    assert {f.name for f in model.frames} >= {"elbow_site"}
    assert any("2 geoms" in note for note in model.notes)


def test_several_joints_in_one_body_are_a_chain_with_massless_links(tmp_path):
    path = mjcf(tmp_path, """<body name="hip" pos="0 0 1">
  <joint name="abduct" axis="1 0 0" pos="0 0 0.05"/>
  <joint name="flex" axis="0 1 0"/>
  <geom type="sphere" size="0.1"/>
</body>""")
    model = symgen.load(path)
    assert model.joint_names == ["abduct", "flex"]
    assert [b.name for b in model.bodies] == ["hip__abduct", "hip"]
    assert model.bodies[0].mass == 0 and model.bodies[1].mass > 0
    # the second joint's anchor is the body origin: Tr(p2 − p1) = (0, 0, −0.05)
    assert np.allclose(model.joints[1].placement.translation, (0, 0, -0.05))


def test_body_frame_off_the_joint_anchor_is_a_frame(tmp_path):
    path = mjcf(tmp_path, """<body name="arm" pos="0 0 1">
  <joint name="j" axis="0 1 0" pos="0 0 0.2"/><geom type="sphere" size="0.1"/>
</body>""")
    model = symgen.load(path)
    assert [b.name for b in model.bodies] == ["arm__j"]
    [frame] = [f for f in model.frames if f.name == "arm"]
    assert np.allclose(frame.placement.translation, (0, 0, -0.2))


def test_joint_equalities_couple_lock_or_are_refused(tmp_path):
    two = ARM.replace('damping="0.5" stiffness="3" springref="30" ref="10"', "")
    path = mjcf(tmp_path, two, "<equality><joint joint1='elbow' joint2='shoulder' "
                "polycoef='0.2 -1.5 0 0 0'/></equality>")
    [c] = symgen.load(path).couplings
    assert (c.joint, c.master, c.ratio, c.offset) == ("elbow", "shoulder", -1.5, 0.2)
    path = mjcf(tmp_path, two, "<equality><joint joint1='elbow' polycoef='0.3 0 0 0 0'/>"
                "</equality>")
    locked = symgen.load(path)
    assert locked.joint_names == ["shoulder"] and locked.locked_joint_names == ["elbow"]
    path = mjcf(tmp_path, two, "<equality><joint joint1='elbow' joint2='shoulder' "
                "polycoef='0 1 0.5 0 0'/></equality>")
    with pytest.raises(ModelError, match="degree > 1") as err:
        symgen.load(path)
    assert str(err.value).startswith(f"{path}:{line_of(path, 'polycoef')}:")


def test_inactive_equality_is_skipped_with_a_note(tmp_path):
    path = mjcf(tmp_path, ARM, "<equality><joint joint1='elbow' joint2='shoulder' "
                "active='false'/></equality>")
    model = symgen.load(path)
    assert not model.couplings
    assert any("inactive" in note for note in model.notes)


def test_disabled_gravity_and_multi_dof_damping(tmp_path):
    body = """<body name="ball_body" pos="0 0 1"><joint type="ball" damping="0.1"/>
<geom type="sphere" size="0.1" pos="0 0 -0.3"/></body>"""
    path = mjcf(tmp_path, body, option="<option><flag gravity='disable'/></option>")
    with pytest.warns(UserWarning, match="damping of the ball joint"):
        model = symgen.load(path)
    assert model.gravity == (0.0, 0.0, 0.0)
    assert not model.force_elements
    assert any("gravity is disabled" in n for n in model.notes)


@pytest.mark.parametrize(("body", "extra", "message"), [
    (ARM, "<equality><connect body1='upper' body2='nowhere' anchor='0 0 0'/></equality>",
     "nowhere"),
    ("""<body name="leg"><joint name="a" axis="0 1 0"/><joint name="b" axis="1 0 0"/>
<joint name="c" axis="0 0 1"/><geom type="sphere" size="0.1"/></body>""",
     """<tendon><fixed name="t"><joint joint="a" coef="1"/><joint joint="b" coef="1"/>
<joint joint="c" coef="1"/></fixed></tendon>
<equality><tendon name="tie" tendon1="t"/></equality>""", "tie 3 joints \\(a, b, c\\)"),
    (ARM, """<tendon><fixed name="t" armature="0.1"><joint joint="elbow" coef="1"/></fixed>
</tendon>""", "tendon armature"),
    (ARM, "<equality><weld body1='upper' body2='lower'/>\n<joint joint1='elbow' "
     "joint2='shoulder' polycoef='0 1 1 0 0'/></equality>", "degree > 1"),
    ("""<body name="ghost"><joint axis="0 0 1"/></body>""", "",
     "mass and inertia of moving bodies"),
    (ARM + "\n<unknown_element/>", "", "unrecognized"),
    (ARM.replace("</body>\n</body>", "</body>"), "", "malformed XML|XML"),
])
def test_bad_files_are_one_line_errors(tmp_path, body, extra, message):
    path = mjcf(tmp_path, body, extra)
    with pytest.raises(ModelError, match=message) as err:
        symgen.load(path)
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"{path}:")
    result = run_split("info", str(path))
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_missing_file_floating_base_and_foreign_root(tmp_path):
    with pytest.raises(ModelError, match="no such model file"):
        symgen.load(tmp_path / "absent.xml")
    path = mjcf(tmp_path, ARM)
    with pytest.raises(ModelError, match="declares its floating bases"):
        symgen.load(path, floating_base=True)
    other = write(tmp_path, "<scene><a/></scene>\n", "scene.xml")
    with pytest.raises(ModelError, match="root element <mujoco>"):
        symgen.load(other)
    included = write(tmp_path, "<mujocoinclude><body name='b'/></mujocoinclude>\n", "inc.xml")
    with pytest.raises(ModelError, match="load the file that includes it"):
        symgen.load(included)
    fragment = write(tmp_path, "<mujoco><body name='b'/></mujoco>\n", "fragment.xml")
    with pytest.raises(ModelError, match="fragment meant for <include>"):
        symgen.load(fragment)


def test_info_lists_what_was_read_and_left_out(tmp_path):
    path = mjcf(tmp_path, ARM, "<actuator><motor joint='elbow' gear='7'/></actuator>")
    result = run_split("info", str(path))
    assert result.exit_code == 0, result.stderr
    for line in ("motors (1", "mujoco coordinates: qpos 2, qvel 2", "notes from the reader",
                 "ignored (no meaning for the kernels): 2 geoms", "force elements (1",
                 "the file declares its floating bases"):
        assert line in result.stdout, line


def test_motors_are_the_actuated_joints_of_constrained_inverse_dynamics():
    from paths import EXAMPLES

    from symgen.loops import analyse_loops
    from symgen.loops.actuation import actuation

    model = symgen.load(EXAMPLES / "five_bar.xml")
    assert [(m.joint, m.gear) for m in model.motors] == [("motor1", 10.0), ("motor2", 10.0)]
    split = actuation(model, analyse_loops(model))
    assert split.joints == ("motor1", "motor2") and split.source == "the model's motors"
    # an explicit choice still wins
    split = actuation(model, analyse_loops(model), ("motor1", "elbow1"))
    assert split.joints == ("motor1", "elbow1") and split.source == "Options.actuated"
