"""YAML reader: the example models, parameters, loops, the planar shorthand and errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from model_files import BASE, line_of, write
from paths import EXAMPLES

from symgen.errors import ModelError
from symgen.io import load
from symgen.io.yaml_format import read_yaml
from symgen.model import JointType, Transform

MODELS = EXAMPLES


def _arr(x) -> np.ndarray:
    return np.array(x, dtype=float)


def world_poses(model) -> dict[str, Transform]:
    poses = {model.root: Transform()}
    for joint in model.joints:
        poses[joint.child] = poses[joint.parent].compose(joint.placement)
    return poses


def assert_loops_closed(model) -> None:
    """At q = 0 the two sides of every loop joint coincide (the model is assembled)."""
    poses = world_poses(model)
    for loop in model.loop_joints:
        a = poses[loop.parent].compose(loop.placement)
        b = poses[loop.child].compose(loop.child_placement)
        np.testing.assert_allclose(_arr(a.translation), _arr(b.translation), atol=1e-12)
        np.testing.assert_allclose(_arr(a.rotation), _arr(b.rotation), atol=1e-12)


# ---------------------------------------------------------------------- example models
def test_four_bar():
    model = load(MODELS / "four_bar.yaml")
    assert model.name == "four_bar" and model.root == "ground" and model.plane == "xy"
    assert model.joint_names == ["crank_joint", "coupler_joint", "rocker_joint"]
    assert (model.nq, model.nv) == (3, 3)
    assert model.parents == (-1, 0, -1)
    (loop,) = model.loop_joints
    assert (loop.name, loop.type, loop.parent, loop.child) == (
        "coupler_rocker",
        JointType.REVOLUTE,
        "coupler",
        "rocker",
    )
    np.testing.assert_allclose(_arr(loop.placement.translation), [0.5, 0, 0])
    np.testing.assert_allclose(_arr(loop.child_placement.translation), [0.4, 0, 0])
    assert model.gravity == (0.0, -9.81, 0.0)
    assert_loops_closed(model)
    assert "coupler_point" in model.frame_names


def test_slider_crank():
    model = load(MODELS / "slider_crank.yaml")
    assert model.joint_names == ["crank_joint", "rod_joint", "slider_joint"]
    assert [j.type for j in model.joints] == [
        JointType.REVOLUTE,
        JointType.REVOLUTE,
        JointType.PRISMATIC,
    ]
    np.testing.assert_allclose(_arr(model.joints[2].axis), [1, 0, 0])
    (loop,) = model.loop_joints
    assert (loop.parent, loop.child) == ("rod", "slider")
    assert model.joints[2].limits.lower == -0.06
    assert_loops_closed(model)
    assert model.parameter_names == ["m_piston"]
    slider = model.resolve({"m_piston": 0.5}).bodies[2]
    assert slider.mass == pytest.approx(0.5)
    assert slider.inertia[2][2] == pytest.approx(0.5 * (0.04**2 + 0.03**2) / 12)


def test_double_pendulum_with_a_runtime_parameter():
    model = load(MODELS / "double_pendulum.yaml")
    assert model.parameter_names == ["m_tip"]
    assert model.joint_names == ["shoulder", "elbow"]
    assert "tip" in model.frame_names  # the fixed tip mass was merged into lower_arm
    lower = model.resolve().bodies[1]
    assert lower.mass == pytest.approx(1.5)
    heavy = model.resolve({"m_tip": 2.0}).bodies[1]
    assert heavy.mass == pytest.approx(3.0)
    # COM of a 1 kg rod (COM at -0.25) and a 2 kg point at -0.5
    assert heavy.com[2] == pytest.approx((-0.25 - 1.0) / 3.0)
    assert model.joints[0].limits.upper == pytest.approx(math.pi)


# ---------------------------------------------------------------------- features
def test_parameters_change_the_model(tmp_path):
    path = write(
        tmp_path,
        """
        name: p
        parameters:
          m: 1.5
          L: {default: 0.4, description: length}
        bodies:
          - {name: link, mass: $m, com: [0, 0, "-$L / 2"], inertia: [0.1, 0.1, 0.01]}
        joints:
          - {name: j, type: revolute, parent: ground, child: link, axis: [0, 1, 0]}
        """,
    )
    model = read_yaml(path)
    assert [(p.name, p.default, p.description) for p in model.parameters] == [
        ("m", 1.5, ""),
        ("L", 0.4, "length"),
    ]
    assert model.resolve().bodies[0].mass == 1.5
    resolved = model.resolve({"m": 2, "L": 1.0})
    assert resolved.bodies[0].mass == 2.0
    assert resolved.bodies[0].com == (0.0, 0.0, -0.5)
    assert model.used_parameters() == {"m", "L"}


def test_all_joint_types(tmp_path):
    body = "mass: 1, inertia: [0.1, 0.1, 0.1]"
    names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
    bodies = "\n".join(f"  - {{name: {n}, {body}}}" for n in names)
    path = write(
        tmp_path,
        f"""
name: every_joint
bodies:
{bodies}
joints:
  - {{name: rev, type: revolute, parent: ground, child: a, axis: [1, 0, 0]}}
  - {{name: con, type: continuous, parent: a, child: b}}
  - {{name: pri, type: prismatic, parent: b, child: c, axis: [0, 0, 3]}}
  - {{name: hel, type: helical, parent: c, child: d, pitch: 0.01}}
  - {{name: cyl, type: cylindrical, parent: d, child: e, axis: [0, 1, 0]}}
  - {{name: uni, type: universal, parent: e, child: f, axis: [1, 0, 0], axis2: [0, 1, 0]}}
  - {{name: pla, type: planar, parent: f, child: g}}
  - {{name: sph, type: spherical, parent: g, child: h, origin: {{xyz: [0, 0, 0.1]}}}}
  - {{name: fre, type: free, parent: h, child: i}}
        """,
    )
    model = read_yaml(path)
    types = [j.type.value for j in model.joints]
    assert types == [
        "revolute",
        "continuous",
        "prismatic",
        "helical",
        "cylindrical",
        "universal",
        "planar",
        "spherical",
        "free",
    ]
    assert model.nq == 1 + 1 + 1 + 1 + 2 + 2 + 3 + 4 + 7
    assert model.nv == 1 + 1 + 1 + 1 + 2 + 2 + 3 + 3 + 6
    assert model.joints[3].pitch == 0.01
    np.testing.assert_allclose(_arr(model.joints[2].axis), [0, 0, 1])
    np.testing.assert_allclose(_arr(model.joints[1].axis), [0, 0, 1])  # default axis z


def test_loop_joint_fields(tmp_path):
    path = write(
        tmp_path,
        """
        name: loop
        bodies:
          - {name: a, mass: 1, inertia: [1, 1, 1]}
          - {name: b, mass: 1, inertia: [1, 1, 1]}
        joints:
          - {name: ja, type: revolute, parent: ground, child: a}
          - {name: jb, type: revolute, parent: ground, child: b, origin: {xyz: [1, 0, 0]}}
        loops:
          - name: close
            type: spherical
            parent: a
            child: b
            origin: {xyz: [0.5, 0, 0], rpy: [0, 0, 0.1]}
            child_origin: {xyz: [-0.5, 0, 0]}
        """,
    )
    model = read_yaml(path)
    (loop,) = model.loop_joints
    assert (loop.name, loop.type, loop.parent, loop.child) == (
        "close",
        JointType.SPHERICAL,
        "a",
        "b",
    )
    np.testing.assert_allclose(_arr(loop.placement.translation), [0.5, 0, 0])
    np.testing.assert_allclose(
        _arr(loop.placement.rotation), _arr(Transform.from_xyz_rpy(rpy=(0, 0, 0.1)).rotation)
    )
    np.testing.assert_allclose(_arr(loop.child_placement.translation), [-0.5, 0, 0])
    assert loop.source.line == line_of(path, "- name: close")
    assert model.nq == 2  # loop joints add no coordinates


def test_planar_shorthand(tmp_path):
    path = write(
        tmp_path,
        """
        name: flat
        plane: xy
        bodies:
          - {name: bar, mass: 2, com: [0.3, 0.1], inertia: 0.06}
          - {name: block, mass: 1, inertia: 0.01}
        joints:
          - {name: pin, type: revolute, parent: ground, child: bar,
             origin: {xy: [1, 2], angle: pi/2}}
          - {name: slide, type: prismatic, parent: bar, child: block, origin: {xy: [0.6, 0]}}
        frames:
          - {name: tip, body: bar, origin: {xy: [0.6, 0], angle: 0.25}}
        """,
    )
    model = read_yaml(path)
    bar = model.bodies[0]
    assert bar.com == (0.3, 0.1, 0.0)
    np.testing.assert_allclose(_arr(bar.inertia), np.diag([0.03, 0.03, 0.06]))
    pin, slide = model.joints
    np.testing.assert_allclose(_arr(pin.axis), [0, 0, 1])  # revolute default: the normal
    np.testing.assert_allclose(_arr(slide.axis), [1, 0, 0])  # prismatic default: in-plane x
    np.testing.assert_allclose(_arr(pin.placement.translation), [1, 2, 0])
    np.testing.assert_allclose(
        _arr(pin.placement.rotation), [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15
    )
    tip = model.frame("tip").placement
    np.testing.assert_allclose(
        _arr(tip.rotation), _arr(Transform.from_xyz_rpy(rpy=(0, 0, 0.25)).rotation)
    )
    assert model.gravity == (0.0, -9.81, 0.0)  # in-plane default


def test_planar_gravity_and_vectors_accept_two_numbers(tmp_path):
    path = write(
        tmp_path,
        """
        plane: xy
        gravity: [-9.81, 0]
        bodies: [{name: b, mass: 1, inertia: 1}]
        joints:
          - {name: s, type: prismatic, parent: ground, child: b, axis: [0, 1]}
        """,
    )
    model = read_yaml(path)
    assert model.name == "model"  # the file name when no name is given
    assert model.gravity == (-9.81, 0.0, 0.0)
    np.testing.assert_allclose(_arr(model.joints[0].axis), [0, 1, 0])


def test_frames_couplings_limits_and_custom_root(tmp_path):
    path = write(
        tmp_path,
        """
        name: geared
        root: base
        gravity: [0, 0, -1.62]
        bodies:
          - {name: base, mass: 99}          # the fixed root: inertia ignored
          - {name: motor, mass: 0.5, inertia: [1e-4, 1e-4, 2e-4]}
          - {name: wheel, mass: 1, inertia: {ixx: 0.01, iyy: 0.01, izz: 0.02}}
        joints:
          - name: motor_joint
            type: revolute
            parent: base
            child: motor
            limits: {lower: -1, upper: 1, velocity: 2, effort: 3}
          - {name: wheel_joint, type: continuous, parent: base, child: wheel}
        couplings:
          - {joint: wheel_joint, master: motor_joint, ratio: 0.1, offset: 0.5}
        frames:
          - {name: sensor, body: wheel, origin: {xyz: [0, 0, 0.1], rpy: [0, 0, 1]}}
        """,
    )
    model = read_yaml(path)
    assert model.root == "base" and model.body_names == ["motor", "wheel"]
    assert model.gravity == (0.0, 0.0, -1.62)
    limits = model.joints[0].limits
    assert (limits.lower, limits.upper, limits.velocity, limits.effort) == (-1, 1, 2, 3)
    (c,) = model.couplings
    assert (c.joint, c.master, c.ratio, c.offset) == ("wheel_joint", "motor_joint", 0.1, 0.5)
    assert model.bodies[1].inertia[2][2] == 0.02
    assert model.bodies[0].inertia[0][0] == 1e-4  # exponent without a dot is a number
    assert model.frame("sensor").body == "wheel"


def test_floating_base(tmp_path):
    path = write(
        tmp_path,
        """
        root: torso
        bodies:
          - {name: torso, mass: 10, inertia: [1, 1, 1]}
          - {name: arm, mass: 1, inertia: [0.1, 0.1, 0.1]}
        joints:
          - {name: shoulder, type: revolute, parent: torso, child: arm}
        """,
    )
    fixed = read_yaml(path)
    assert fixed.root == "torso" and fixed.nq == 1
    floating = read_yaml(path, floating_base=True)
    assert floating.root == "world"
    assert floating.joint_names == ["root_joint", "shoulder"]
    assert floating.joints[0].type is JointType.FREE
    assert floating.bodies[0].mass == 10.0
    assert (floating.nq, floating.nv) == (8, 7)


def test_floating_base_of_a_planar_model_is_a_planar_joint():
    model = load(MODELS / "four_bar.yaml", floating_base=True)
    assert model.joints[0].name == "root_joint"
    assert model.joints[0].type is JointType.PLANAR
    assert model.joints[0].child == "ground"
    assert model.nq == 6


# ---------------------------------------------------------------------- errors
def check_error(path: Path, needle: str, pattern: str) -> None:
    """Reading ``path`` fails with a message matching ``pattern`` at the line of ``needle``."""
    with pytest.raises(ModelError, match=pattern) as err:
        read_yaml(path)
    assert str(err.value).startswith(f"{path}:{line_of(path, needle)}: "), str(err.value)




def test_body_without_mass_is_an_error(tmp_path):
    """A forgotten mass would be 0 kg: the key is required, ``mass: 0`` says massless."""
    path = write(tmp_path, BASE.replace("    mass: 1\n", ""))
    check_error(path, "- name: link", r"body 'link': missing required key 'mass' \(write "
                r"'mass: 0' for a massless body\)")


def test_explicitly_massless_body(tmp_path):
    text = BASE.replace("    mass: 1\n    inertia: [0.1, 0.1, 0.1]\n", "    mass: 0\n") + """
  - name: j2
    type: revolute
    parent: link
    child: tip
"""
    text = text.replace("joints:", "  - {name: tip, mass: 2, com: [0, 0, 1]}\njoints:")
    model = read_yaml(write(tmp_path, text))
    assert [float(b.mass) for b in model.bodies] == [0.0, 2.0]


def test_unknown_top_level_key(tmp_path):
    path = write(tmp_path, BASE + "jionts: []\n")
    check_error(path, "jionts", r"model: unknown key 'jionts' \(did you mean 'joints'\?")


def test_unknown_body_key(tmp_path):
    path = write(tmp_path, BASE.replace("mass: 1", "mass: 1\n    masss: 2"))
    check_error(path, "masss", r"body 'link': unknown key 'masss' \(did you mean 'mass'\?")


def test_unknown_joint_key(tmp_path):
    path = write(tmp_path, BASE + "    axes: [0, 0, 1]\n")
    check_error(path, "axes", r"joint 'j': unknown key 'axes'")


def test_unknown_origin_key(tmp_path):
    path = write(tmp_path, BASE + "    origin: {xyz: [0, 0, 1], rot: [0, 0, 0]}\n")
    check_error(path, "origin", r"joint 'j': origin: unknown key 'rot'")


def test_planar_origin_keys_need_a_plane(tmp_path):
    path = write(tmp_path, BASE + "    origin: {xy: [0, 1]}\n")
    check_error(path, "origin", r"joint 'j': origin: unknown key 'xy'")


def test_string_where_a_number_is_expected(tmp_path):
    path = write(tmp_path, BASE.replace("mass: 1", "mass: heavy"))
    check_error(path, "mass: heavy", r"body 'link': mass: 'heavy' is neither a number")


def test_boolean_where_a_number_is_expected(tmp_path):
    path = write(tmp_path, BASE.replace("mass: 1", "mass: yes"))
    check_error(path, "mass: yes", r"body 'link': mass: expected a number .* got a boolean")


def test_wrong_vector_length(tmp_path):
    path = write(tmp_path, BASE.replace("mass: 1", "mass: 1\n    com: [0, 0]"))
    check_error(path, "com:", r"body 'link': com: expected a list of 3 numbers")


def test_bad_inertia_shape(tmp_path):
    path = write(tmp_path, BASE.replace("[0.1, 0.1, 0.1]", "0.1"))
    check_error(path, "inertia", r"body 'link': inertia: expected \[ixx, iyy, izz\]")


def test_name_must_be_a_string(tmp_path):
    path = write(tmp_path, BASE.replace("parent: ground", "parent: [ground]"))
    check_error(path, "parent:", r"joint 'j': parent must be a name")


def test_missing_required_key(tmp_path):
    path = write(tmp_path, BASE.replace("    type: revolute\n", ""))
    check_error(path, "- name: j", r"joint 'j': missing required key 'type'")


def test_axis_on_a_joint_without_one(tmp_path):
    text = BASE.replace("type: revolute", "type: spherical") + "    axis: [1, 0, 0]\n"
    path = write(tmp_path, text)
    check_error(path, "axis:", r"joint 'j': 'axis' does not apply to a spherical joint")


def test_pitch_on_a_revolute_joint(tmp_path):
    path = write(tmp_path, BASE + "    pitch: 0.1\n")
    check_error(path, "pitch:", r"joint 'j': 'pitch' does not apply to a revolute joint")


def test_unknown_parameter_reference(tmp_path):
    path = write(tmp_path, BASE.replace("mass: 1", "mass: $m"))
    check_error(path, "mass: $m", r"body 'link': mass: unknown parameter 'm'")


def test_parameter_default_must_be_a_number(tmp_path):
    path = write(tmp_path, "parameters:\n  m: $x\n" + BASE)
    check_error(path, "m: $x", r"parameter 'm': the default value must be a number")


def test_bad_expression(tmp_path):
    path = write(tmp_path, BASE.replace("mass: 1", "mass: 2^3"))
    check_error(path, "mass:", r"body 'link': mass: '2\^3': write powers with '\*\*'")
    path = write(tmp_path, BASE.replace("mass: 1", "mass: __import__('os')"))
    check_error(path, "mass:", r"body 'link': mass: .* only numbers, \$parameters")


def test_unknown_joint_type_cites_the_joint(tmp_path):
    path = write(tmp_path, BASE.replace("type: revolute", "type: revolut"))
    check_error(path, "- name: j", r"joint 'j': unknown joint type 'revolut'")


def test_duplicate_key(tmp_path):
    path = write(tmp_path, BASE.replace("mass: 1", "mass: 1\n    mass: 2"))
    check_error(path, "mass: 2", r"duplicate key 'mass' \(first given on line 4\)")


def test_yaml_syntax_error(tmp_path):
    path = write(tmp_path, BASE.replace("mass: 1", "mass: [1"))
    with pytest.raises(ModelError, match="invalid YAML") as err:
        read_yaml(path)
    assert str(err.value).startswith(f"{path}:")
    assert str(err.value).split(":")[1].isdigit()


def test_unsupported_plane(tmp_path):
    path = write(tmp_path, "plane: xz\n" + BASE)
    check_error(path, "plane:", r"plane 'xz' is not supported")


def test_section_must_be_a_list(tmp_path):
    path = write(tmp_path, "name: m\nbodies: {link: {mass: 1}}\n")
    check_error(path, "bodies:", r"bodies: expected a list, got a mapping")


def test_empty_file_and_wrong_top_level(tmp_path):
    with pytest.raises(ModelError, match="empty model file"):
        read_yaml(write(tmp_path, "# nothing\n"))
    with pytest.raises(ModelError, match="model file: expected a mapping"):
        read_yaml(write(tmp_path, "- a\n- b\n"))


def test_builder_errors_cite_the_element_line(tmp_path):
    path = write(tmp_path, BASE.replace("mass: 1", "mass: -1"))
    check_error(path, "- name: link", r"body 'link': negative mass")


@pytest.mark.parametrize("name", ["four_bar", "slider_crank"])
def test_worked_examples_in_the_docs_match_the_files(name):
    """docs/model-format.md quotes the example files (without their header comment)."""
    doc = (MODELS.parent.parent / "docs" / "model-format.md").read_text()
    quoted = doc.split(f"# examples/models/{name}.yaml\n", 1)[1].split("\n```", 1)[0]
    lines = (MODELS / f"{name}.yaml").read_text().splitlines()
    first = next(i for i, t in enumerate(lines) if t.strip() and not t.startswith("#"))
    assert quoted == "\n".join(lines[first:]).rstrip()


# ---------------------------------------------------------------------- hostile input (issue 11)
# Each reproducer of issue 11 item 2 is a one-line ModelError naming the file (and line), and
# no numpy RuntimeWarning is printed on the way ("error" turns any warning into a failure).
pytestmark_hostile = pytest.mark.filterwarnings("error")


def one_line_error(path: Path, pattern: str) -> str:
    with pytest.raises(ModelError, match=pattern) as err:
        load(path)
    message = str(err.value)
    assert "\n" not in message and len(message) < 400, message
    assert message.startswith(f"{path}"), message
    return message


@pytestmark_hostile
def test_control_character_is_a_model_error_with_line_and_column(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"name: m\nbodies:\n  - {name: a\x07b}\n")
    message = one_line_error(path, r"invalid YAML: .*#x0007 \(column 13\)")
    assert message.startswith(f"{path}:3: ")


@pytestmark_hostile
@pytest.mark.parametrize("char", ["\x00", "\x1b", "\ufffe"])
def test_other_unprintable_characters(tmp_path, char):
    path = tmp_path / "bad.yaml"
    path.write_text(f"name: m{char}\n", encoding="utf-8")
    one_line_error(path, r"invalid YAML: .*character #x")


@pytestmark_hostile
def test_deeply_nested_yaml_is_bounded(tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text("name: m\nbodies: " + "[" * 250 + "]" * 250 + "\n")
    one_line_error(path, r"\.yaml:2: invalid YAML: nested more than 64 levels deep")
    path.write_text("a:\n" + "".join("  " * k + f"k{k}:\n" for k in range(1, 200)))
    one_line_error(path, r"nested more than 64 levels deep")


@pytestmark_hostile
@pytest.mark.parametrize(
    ("value", "pattern"),
    [
        ("+".join(["1"] * 2000), r"mass: expression '1\+1.*is too long \(3999 characters"),
        ("-" * 1000 + "1", r"mass: expression '-----.*is too long \(1001 characters"),
        ("+".join(["1"] * 60), r"mass: expression .* nested too deeply \(more than 50 levels"),
        ("-" * 60 + "1", r"nested too deeply"),
        ("sqrt(" * 60 + "1" + ")" * 60, r"nested too deeply"),
        ("(" * 300 + "1" + ")" * 300, r"is neither a number nor an expression"),
    ],
)
def test_long_or_deep_expressions_are_bounded(tmp_path, value, pattern):
    path = write(tmp_path, BASE.replace("mass: 1", f'mass: "{value}"'))
    message = one_line_error(path, pattern)
    assert message.startswith(f"{path}:{line_of(path, 'mass:')}: body 'link': ")


def test_expressions_within_the_limits_still_work(tmp_path):
    # 50 levels: a sum of 50 terms (49 additions) and 40 nested signs are accepted
    path = write(tmp_path, BASE.replace("mass: 1", f'mass: "{"+".join(["0.02"] * 50)}"'))
    assert load(path).bodies[0].mass == pytest.approx(1.0, rel=1e-15)
    path = write(tmp_path, BASE.replace("mass: 1", f'mass: "{"-" * 40}2"'))
    assert load(path).bodies[0].mass == 2.0


# Where the error points: at the value when the text itself is wrong, at the element when
# the value is wrong only at the parameters' defaults (checked by ModelBuilder.build).
VALUE, ELEMENT = "mass:", "- name: link"


@pytestmark_hostile
@pytest.mark.parametrize(
    ("value", "pattern", "where"),
    [
        # issue 11: these raised TypeError
        ("sqrt($m - 2)", r"mass: sqrt\(m - 2\) = 0\+1i is not a real number at m = 1", ELEMENT),
        ("$m**(1/0)", r"mass: '\$m\*\*\(1/0\)': '1 / 0' divides by zero", VALUE),
        # constant parts are checked where they appear
        ("$m * sqrt(-1)", r"'sqrt\(-1\)' is not a real number \(0\+1i\)", VALUE),
        ("asin(2) + $m", r"'asin\(2\)' is not a real number", VALUE),
        ("1e300 * 1e300 * $m", r"'1e\+300 \* 1e\+300' is not a finite number", VALUE),
        ("((2**64)**64)**64", r"is not a finite number", VALUE),
        ("atan2(0, 0) * $m", r"is not a finite number", VALUE),
        ("$m / ($m - 1)", r"body 'link': mass is not a finite number", ELEMENT),
        ("$m ** 2000", r"exponent 2000 is too large", VALUE),
    ],
)
def test_expressions_that_are_not_finite_real_numbers(tmp_path, value, pattern, where):
    path = write(tmp_path, "parameters:\n  m: 1\n" + BASE.replace("mass: 1", f'mass: "{value}"'))
    message = one_line_error(path, pattern)
    assert message.startswith(f"{path}:{line_of(path, where)}: body 'link': "), message


@pytestmark_hostile
@pytest.mark.parametrize(
    ("origin", "pattern", "where"),
    [
        ('{xyz: ["sqrt($m - 2)", 0, 0]}', r"joint 'j': origin: sqrt\(m - 2\) = 0\+1i is not a real",
         "- name: j"),
        ('{xyz: ["sqrt(-1)", 0, 0]}', r"joint 'j': origin: xyz: 'sqrt\(-1\)' is not a real",
         "origin:"),
        ('{rpy: [0, "acos($m + 1)", 0]}', r"joint 'j': origin: .* is not a real number at m = 1",
         "- name: j"),
        ('{xyz: ["1 / ($m - 1)", 0, 0]}', r"joint 'j': origin is not a finite number",
         "- name: j"),
    ],
)
def test_complex_or_infinite_joint_origin_is_rejected_at_load(tmp_path, origin, pattern, where):
    # issue 11: a complex origin loaded and failed later in generate with ValueError
    path = write(tmp_path, "parameters:\n  m: 1\n" + BASE + f"    origin: {origin}\n")
    message = one_line_error(path, pattern)
    assert message.startswith(f"{path}:{line_of(path, where)}: "), message


@pytestmark_hostile
@pytest.mark.parametrize(
    ("replace", "pattern"),
    [
        # issue 11: LinAlgError in eigvalsh
        (("[0.1, 0.1, 0.1]", "[1e308, 1e308, 1e308]"), r"body 'link': rotational inertia is too "),
        # issue 11: inf.0 / nan.0 literals in the C
        (("mass: 1", "mass: 1e308\n    com: [1e308, 0, 0]"), r"body 'link': mass is too large"),
        (("mass: 1", "mass: 1e200\n    com: [1e60, 0, 0]"), r"mass x squared distance"),
    ],
)
def test_huge_values_are_rejected_at_load(tmp_path, replace, pattern):
    path = write(tmp_path, BASE.replace(*replace))
    message = one_line_error(path, pattern)
    assert message.startswith(f"{path}:{line_of(path, '- name: link')}: "), message


@pytestmark_hostile
@pytest.mark.parametrize(
    ("value", "pattern"),
    [
        ("1e400", r"body 'link': mass: inf is not a finite number"),
        ("9" * 400, r"body 'link': mass: 9999.*\.\.\..* is not a finite number"),
        (".nan", r"body 'link': mass: nan is not a finite number"),
        ("-.inf", r"body 'link': mass: -inf is not a finite number"),
    ],
)
def test_non_finite_numbers_are_rejected_at_their_line(tmp_path, value, pattern):
    path = write(tmp_path, BASE.replace("mass: 1", f"mass: {value}"))
    message = one_line_error(path, pattern)
    assert message.startswith(f"{path}:{line_of(path, 'mass:')}: "), message


@pytestmark_hostile
def test_a_long_chain_of_huge_offsets_overflows_at_the_tip(tmp_path):
    bodies = "".join(f"  - {{name: b{k}, mass: 1, inertia: [1, 1, 1]}}\n" for k in range(3))
    joints = "".join(
        f"  - {{name: j{k}, type: revolute, parent: {'ground' if k == 0 else f'b{k - 1}'}, "
        f"child: b{k}, origin: {{xyz: [1e150, 1e150, 0]}}}}\n"
        for k in range(3)
    )
    path = write(tmp_path, f"name: m\nbodies:\n{bodies}joints:\n{joints}")
    one_line_error(path, r"body 'b0': squared distance from the root \(along joint 'j0'")


@pytestmark_hostile
def test_huge_axis_is_normalised_without_overflow(tmp_path):
    # issue 11: an axis of (1e200, 0, 0) normalised to (0, 0, 0) (its square overflowed) and M
    # was 0. About x: M = Ixx + m (cy^2 + cz^2) = 0.1 + 2 * 0.5^2 = 0.6.
    from symgen import generate

    text = BASE.replace("mass: 1", "mass: 2\n    com: [0, 0, 0.5]").replace(
        "[0.1, 0.1, 0.1]", "[0.1, 0.2, 0.3]"
    )
    path = write(tmp_path, text + "    axis: [1e200, 0, 0]\n")
    model = load(path)
    assert model.joints[0].axis == (1.0, 0.0, 0.0)
    m = generate(model, ["mass_matrix"]).evaluate("mass_matrix", q=[0.3])["M"]
    assert m[0, 0] == pytest.approx(0.6, rel=1e-14)
    path = write(tmp_path, text + "    axis: [3e-6, 4e-6, 0]\n")
    assert load(path).joints[0].axis == pytest.approx((0.6, 0.8, 0.0), rel=1e-15)
    path = write(tmp_path, text + "    axis: [1e-200, 1e-200, 0]\n")  # below 1e-12: zero
    one_line_error(path, r"joint 'j': zero-length axis")


@pytestmark_hostile
@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("mass: 2001-13-45", r"invalid YAML value '2001-13-45': month must be in 1\.\.12"),
        ("mass: !!int abc", r"invalid YAML value 'abc'"),
        ("mass: !!float x", r"invalid YAML value 'x'"),
    ],
)
def test_values_pyyaml_cannot_construct(tmp_path, text, pattern):
    path = write(tmp_path, BASE.replace("mass: 1", text))
    message = one_line_error(path, pattern)
    assert message.startswith(f"{path}:{line_of(path, 'mass:')}: "), message


@pytestmark_hostile
def test_alias_bomb_is_reported_briefly(tmp_path):
    # a value whose full repr would have 8**8 entries: the message shows only its start
    path = write(tmp_path, BASE.replace("mass: 1", "mass: " + _flow_bomb()))
    one_line_error(path, r"body 'link': mass: expected a number .* got a list \[\[\[")


def _flow_bomb() -> str:
    """A YAML flow value with anchors: 8 levels of 8 references to the level below."""
    value = "&l0 [1, 2]"
    for k in range(1, 8):
        value = f"&l{k} [{value}, " + ", ".join([f"*l{k - 1}"] * 7) + "]"
    return value


@pytestmark_hostile
def test_unused_parameter_with_a_non_finite_default(tmp_path):
    path = write(tmp_path, "parameters:\n  m: .inf\n" + BASE)
    one_line_error(path, r"parameter 'm': default: inf is not a finite number")


@pytestmark_hostile
def test_parameter_dependent_axis_and_pi_generate(tmp_path):
    # issue 11 fuzzing: a symbolic axis normalised to Abs(...) and "$L * pi" both failed in
    # generate (unsupported function). About the unit axis a, M = a^T diag(Ixx + m cz^2,
    # Iyy + m cz^2, Izz) a with m = 2, cz = L, I = (0.1, 0.2, 0.3): at L = 0.5, a = (0, 1, 0)
    # and M = 0.2 + 2 * 0.25; at L = -1, a = (0, -0.9, -1.5) / sqrt(3.06) and
    # M = ((0.2 + 2) * 0.81 + 0.3 * 2.25) / 3.06.
    from symgen import generate

    text = (
        "parameters: {L: 0.5}\n"
        + BASE.replace("mass: 1", 'mass: 2\n    com: [0, 0, "$L * pi / pi"]')
        .replace("[0.1, 0.1, 0.1]", "[0.1, 0.2, 0.3]")
        + '    axis: [0, "$L + 0.1", "$L - 0.5"]\n'
    )
    kernels = generate(load(write(tmp_path, text)), ["mass_matrix"])
    m = kernels.evaluate("mass_matrix", q=[0.3], params=[0.5])["M"]
    assert m[0, 0] == pytest.approx(0.2 + 2 * 0.25, rel=1e-14)
    m = kernels.evaluate("mass_matrix", q=[0.3], params=[-1.0])["M"]
    assert m[0, 0] == pytest.approx((2.2 * 0.81 + 0.3 * 2.25) / 3.06, rel=1e-14)
