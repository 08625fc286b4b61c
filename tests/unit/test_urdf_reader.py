"""URDF reader: real robots from example-robot-data and small hand-written files."""

from __future__ import annotations

import math

import numpy as np
import pytest
from model_files import line_of, write

from symgen.errors import ModelError
from symgen.io import load
from symgen.io.robots import robot_urdf
from symgen.io.urdf import read_urdf
from symgen.model import JointType


def _arr(x) -> np.ndarray:
    return np.array(x, dtype=float)


def point_inertia(mass: float, r) -> np.ndarray:
    """Inertia about the origin of a point mass at r: m (|r|^2 I - r r^T)."""
    r = _arr(r)
    return mass * (r @ r * np.eye(3) - np.outer(r, r))


# ---------------------------------------------------------------------- real robots
def test_panda():
    model = load(robot_urdf("panda"))
    assert model.name == "panda"
    assert model.root == "panda_link0"
    # the second finger mimics the first: no coordinate of its own (Pinocchio's mimic=True)
    assert (model.nq, model.nv, model.tree_nv) == (8, 8, 9)
    assert model.joint_names == [f"panda_joint{i}" for i in range(1, 8)] + [
        "panda_finger_joint1",
        "panda_finger_joint2",
    ]
    assert {j.type for j in model.joints[:7]} == {JointType.REVOLUTE}
    assert {j.type for j in model.joints[7:]} == {JointType.PRISMATIC}
    # links fixed to panda_link7 / panda_hand were merged and kept as frames
    assert {"panda_link8", "panda_hand", "panda_hand_tcp"} <= set(model.frame_names)
    assert "panda_hand" not in model.body_names
    assert model.frame("panda_hand").body == "panda_link7"
    (coupling,) = model.couplings
    assert (coupling.joint, coupling.master, coupling.ratio) == (
        "panda_finger_joint2",
        "panda_finger_joint1",
        1.0,
    )
    limits = model.joints[0].limits
    assert limits is not None and limits.lower == pytest.approx(-2.8973)
    assert limits.upper == pytest.approx(2.8973) and limits.effort == pytest.approx(87)


def test_ur5():
    model = load(robot_urdf("ur5"))
    assert model.root == "world"
    assert (model.nq, model.nv) == (6, 6)
    assert model.joint_names == [
        "shoulder_pan_joint",
        "shoulder_lift_joint",
        "elbow_joint",
        "wrist_1_joint",
        "wrist_2_joint",
        "wrist_3_joint",
    ]
    assert {"base_link", "ee_link", "tool0"} <= set(model.frame_names)
    assert model.frame("tool0").body == "wrist_3_link"
    assert model.parents == (-1, 0, 1, 2, 3, 4)


def test_xarm7():
    model = load(robot_urdf("xarm7"))
    assert (model.nq, model.nv) == (7, 7)
    assert model.joint_names == [f"joint{i}" for i in range(1, 8)]
    assert {"link_base", "link_eef"} <= set(model.frame_names)
    assert model.frame("link_base").body == "world"


def test_floating_base_on_a_real_robot():
    model = load(robot_urdf("solo12"), floating_base=True)
    assert model.root == "world"
    assert model.joints[0].name == "root_joint"
    assert model.joints[0].type is JointType.FREE
    assert model.joints[0].child == "base_link"
    assert (model.nq, model.nv) == (19, 18)


def test_floating_base_when_the_root_link_is_called_world():
    model = load(robot_urdf("ur5"), floating_base=True)
    assert model.root == "universe"
    assert model.joints[0].child == "world"
    assert model.nq == 13


# ---------------------------------------------------------------------- hand-written files
TWO_LINKS = """
<?xml version="1.0"?>
<robot name="two">
  <link name="base"/>
  <link name="arm">
    <inertial>
      <origin xyz="0.1 0.2 0.3" rpy="{rpy}"/>
      <mass value="2.0"/>
      <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/>
    </inertial>
    <visual><geometry><box size="1 1 1"/></geometry></visual>
  </link>
  <joint name="j" type="revolute">
    <parent link="base"/>
    <child link="arm"/>
    <origin xyz="0 0 1" rpy="0 0 0"/>
    <axis xyz="0 0 2"/>
    <limit lower="-1" upper="1" effort="10" velocity="3"/>
  </joint>
</robot>
"""


def test_inertial_origin_rotates_the_tensor(tmp_path):
    a, b, c, theta = 0.1, 0.2, 0.25, 0.3
    path = write(
        tmp_path, name="robot.urdf", text=TWO_LINKS.format(rpy=f"{theta} 0 0", ixx=a, iyy=b, izz=c)
    )
    model = read_urdf(path)
    body = model.bodies[0]
    assert body.mass == 2.0
    np.testing.assert_allclose(_arr(body.com), [0.1, 0.2, 0.3])
    # Rx(θ) diag(a, b, c) Rx(θ)^T, written out
    ct, st = math.cos(theta), math.sin(theta)
    expected = [
        [a, 0, 0],
        [0, b * ct**2 + c * st**2, (b - c) * st * ct],
        [0, (b - c) * st * ct, b * st**2 + c * ct**2],
    ]
    np.testing.assert_allclose(_arr(body.inertia), expected, atol=1e-15)


def test_inertial_yaw_swaps_axes(tmp_path):
    path = write(
        tmp_path,
        name="robot.urdf",
        text=TWO_LINKS.format(rpy=f"0 0 {math.pi / 2}", ixx=0.1, iyy=0.2, izz=0.25),
    )
    inertia = _arr(read_urdf(path).bodies[0].inertia)
    np.testing.assert_allclose(inertia, np.diag([0.2, 0.1, 0.25]), atol=1e-15)


def test_joint_fields(tmp_path):
    path = write(
        tmp_path, name="robot.urdf", text=TWO_LINKS.format(rpy="0 0 0", ixx=0.1, iyy=0.2, izz=0.25)
    )
    model = read_urdf(path)
    assert model.name == "two" and model.root == "base"
    (joint,) = model.joints
    assert joint.type is JointType.REVOLUTE
    np.testing.assert_allclose(_arr(joint.axis), [0, 0, 1])  # normalised
    np.testing.assert_allclose(_arr(joint.placement.translation), [0, 0, 1])
    assert (joint.limits.lower, joint.limits.upper) == (-1.0, 1.0)
    assert (joint.limits.effort, joint.limits.velocity) == (10.0, 3.0)
    assert joint.source is not None and joint.source.line == line_of(path, '<joint name="j"')
    assert model.bodies[0].source.line == line_of(path, '<link name="arm"')


def test_chain_of_fixed_links_is_lumped(tmp_path):
    """arm (2 kg at its origin) -fixed-> tool (1 kg, 0.3 m along x, yawed 90°) -fixed-> tip
    (1 kg, 0.6 m along the tool's x, i.e. (0.3, 0.6, 0) in the arm frame)."""
    s = 1e-3  # each box's own inertia about its centre, s * identity
    urdf = f"""
    <robot name="lump">
      <link name="base"/>
      <link name="arm">
        <inertial><mass value="2"/>
          <inertia ixx="{s}" ixy="0" ixz="0" iyy="{s}" iyz="0" izz="{s}"/></inertial>
      </link>
      <link name="tool">
        <inertial><mass value="1"/>
          <inertia ixx="{s}" ixy="0" ixz="0" iyy="{s}" iyz="0" izz="{s}"/></inertial>
      </link>
      <link name="tip">
        <inertial><mass value="1"/>
          <inertia ixx="{s}" ixy="0" ixz="0" iyy="{s}" iyz="0" izz="{s}"/></inertial>
      </link>
      <joint name="hinge" type="continuous">
        <parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
      </joint>
      <joint name="arm_to_tool" type="fixed">
        <parent link="arm"/><child link="tool"/><origin xyz="0.3 0 0" rpy="0 0 {math.pi / 2}"/>
      </joint>
      <joint name="tool_to_tip" type="fixed">
        <parent link="tool"/><child link="tip"/><origin xyz="0.6 0 0"/>
      </joint>
    </robot>
    """
    model = read_urdf(write(tmp_path, name="robot.urdf", text=urdf))
    assert model.body_names == ["arm"]
    assert model.joints[0].type is JointType.CONTINUOUS
    body = model.bodies[0]
    points = {"arm": (2.0, [0, 0, 0]), "tool": (1.0, [0.3, 0, 0]), "tip": (1.0, [0.3, 0.6, 0])}
    mass = sum(m for m, _ in points.values())
    com = sum(m * _arr(r) for m, r in points.values()) / mass
    assert body.mass == pytest.approx(4.0)
    np.testing.assert_allclose(_arr(body.com), [0.15, 0.15, 0.0], atol=1e-15)
    np.testing.assert_allclose(com, [0.15, 0.15, 0.0])
    expected = 3 * s * np.eye(3) + sum(point_inertia(m, _arr(r) - com) for m, r in points.values())
    np.testing.assert_allclose(_arr(body.inertia), expected, atol=1e-14)
    # the merged links are frames on the arm, at their composed poses
    assert model.frame_names == ["tool", "tip"]
    tip = model.frame("tip")
    assert tip.body == "arm"
    np.testing.assert_allclose(_arr(tip.placement.translation), [0.3, 0.6, 0], atol=1e-15)
    np.testing.assert_allclose(
        _arr(tip.placement.rotation), [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15
    )


def test_continuous_planar_floating_and_default_axis(tmp_path):
    urdf = """
    <robot name="kinds">
      <link name="base"/>
      <link name="a"><inertial><mass value="1"/>
        <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <link name="b"><inertial><mass value="1"/>
        <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <link name="c"><inertial><mass value="1"/>
        <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <joint name="j1" type="continuous"><parent link="base"/><child link="a"/></joint>
      <joint name="j2" type="planar"><parent link="a"/><child link="b"/>
        <axis xyz="0 0 1"/></joint>
      <joint name="j3" type="floating"><parent link="b"/><child link="c"/></joint>
    </robot>
    """
    model = read_urdf(write(tmp_path, name="robot.urdf", text=urdf))
    assert [j.type for j in model.joints] == [
        JointType.CONTINUOUS,
        JointType.PLANAR,
        JointType.FREE,
    ]
    np.testing.assert_allclose(_arr(model.joints[0].axis), [1, 0, 0])  # URDF default axis
    assert model.joints[0].limits is None
    assert (model.nq, model.nv) == (1 + 3 + 7, 1 + 3 + 6)


def test_mimic_becomes_a_coupling(tmp_path):
    urdf = """
    <robot name="gripper">
      <link name="palm"/>
      <link name="left"><inertial><mass value="0.1"/>
        <inertia ixx="1e-5" ixy="0" ixz="0" iyy="1e-5" iyz="0" izz="1e-5"/></inertial></link>
      <link name="right"><inertial><mass value="0.1"/>
        <inertia ixx="1e-5" ixy="0" ixz="0" iyy="1e-5" iyz="0" izz="1e-5"/></inertial></link>
      <joint name="left_joint" type="prismatic">
        <parent link="palm"/><child link="left"/><axis xyz="0 1 0"/>
      </joint>
      <joint name="right_joint" type="prismatic">
        <parent link="palm"/><child link="right"/><axis xyz="0 1 0"/>
        <mimic joint="left_joint" multiplier="-1" offset="0.01"/>
      </joint>
    </robot>
    """
    path = write(tmp_path, name="robot.urdf", text=urdf)
    model = read_urdf(path)
    (c,) = model.couplings
    assert (c.joint, c.master, c.ratio, c.offset) == ("right_joint", "left_joint", -1.0, 0.01)
    assert c.source.line == line_of(path, "<mimic")


def test_mimic_on_a_fixed_joint_is_ignored(tmp_path):
    urdf = """
    <robot name="reduced">
      <link name="base"/>
      <link name="a"><inertial><mass value="1"/>
        <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <link name="b"><inertial><mass value="1"/>
        <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <joint name="j1" type="revolute"><parent link="base"/><child link="a"/></joint>
      <joint name="j2" type="fixed"><parent link="a"/><child link="b"/>
        <mimic joint="j1"/></joint>
    </robot>
    """
    model = read_urdf(write(tmp_path, name="robot.urdf", text=urdf))
    assert model.couplings == ()


def test_mimic_of_a_missing_joint(tmp_path):
    urdf = """
    <robot name="gripper">
      <link name="palm"/>
      <link name="left"><inertial><mass value="0.1"/>
        <inertia ixx="1e-5" ixy="0" ixz="0" iyy="1e-5" iyz="0" izz="1e-5"/></inertial></link>
      <joint name="left_joint" type="prismatic">
        <parent link="palm"/><child link="left"/>
        <mimic joint="nowhere"/>
      </joint>
    </robot>
    """
    path = write(tmp_path, name="robot.urdf", text=urdf)
    with pytest.raises(ModelError, match=r"names mimic master 'nowhere' that does not exist; "
                       r"load with --no-couplings \(couplings=False\)") as err:
        read_urdf(path)
    assert f"{path}:{line_of(path, '<mimic')}:" in str(err.value)


def test_link_without_inertial(tmp_path):
    urdf = """
    <robot name="r">
      <link name="base"/>
      <link name="massless"/>
      <link name="heavy"><inertial><mass value="1"/>
        <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <joint name="j1" type="revolute"><parent link="base"/><child link="massless"/></joint>
      <joint name="j2" type="revolute"><parent link="massless"/><child link="heavy"/></joint>
    </robot>
    """
    model = read_urdf(write(tmp_path, name="robot.urdf", text=urdf))
    body = model.bodies[model.body_index("massless")]
    assert body.mass == 0.0
    assert _arr(body.inertia).tolist() == np.zeros((3, 3)).tolist()


def test_siblings_are_numbered_in_the_order_of_their_joint_names(tmp_path):
    links = "".join(
        f'<link name="{n}"><inertial><mass value="1"/>'
        f'<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
        for n in ("b1", "b2", "b3")
    )
    urdf = f"""
    <robot name="r"><link name="base"/>{links}
      <joint name="z" type="revolute"><parent link="base"/><child link="b1"/></joint>
      <joint name="a" type="revolute"><parent link="base"/><child link="b2"/></joint>
      <joint name="m" type="revolute"><parent link="b2"/><child link="b3"/></joint>
    </robot>
    """
    model = read_urdf(write(tmp_path, name="robot.urdf", text=urdf))
    assert model.joint_names == ["a", "m", "z"]
    assert model.parents == (-1, 0, -1)


def test_floating_base(tmp_path):
    path = write(
        tmp_path, name="robot.urdf", text=TWO_LINKS.format(rpy="0 0 0", ixx=0.1, iyy=0.2, izz=0.25)
    )
    path.write_text(
        path.read_text().replace(
            '<link name="base"/>',
            '<link name="base"><inertial><mass value="3"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>',
        )
    )
    model = read_urdf(path, floating_base=True)
    assert model.root == "world"
    assert model.joint_names == ["root_joint", "j"]
    assert model.joints[0].type is JointType.FREE
    assert (model.joints[0].parent, model.joints[0].child) == ("world", "base")
    assert model.bodies[0].mass == 3.0  # the root link's inertia now counts
    assert (model.nq, model.nv) == (8, 7)
    fixed = read_urdf(path)
    assert fixed.root == "base" and fixed.nq == 1


# ---------------------------------------------------------------------- errors
def test_malformed_xml_names_file_and_line(tmp_path):
    path = write(
        tmp_path,
        """
        <robot name="bad">
          <link name="a">
          </lnk>
        </robot>
        """,
    )
    with pytest.raises(ModelError, match="malformed XML") as err:
        read_urdf(path)
    assert str(err.value).startswith(f"{path}:3:")


def test_unknown_joint_type_names_joint_and_line(tmp_path):
    path = write(
        tmp_path,
        """
        <robot name="r">
          <link name="a"/>
          <link name="b"/>
          <joint name="weird" type="ball">
            <parent link="a"/><child link="b"/>
          </joint>
        </robot>
        """,
    )
    with pytest.raises(ModelError, match=r"joint 'weird': unknown URDF joint type 'ball'") as err:
        read_urdf(path)
    assert str(err.value).startswith(f"{path}:4:")


def test_missing_parent_link(tmp_path):
    path = write(
        tmp_path,
        """
        <robot name="r">
          <link name="a"/>
          <link name="b"><inertial><mass value="1"/>
            <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
          <joint name="j" type="revolute">
            <parent link="ghost"/><child link="b"/>
          </joint>
        </robot>
        """,
    )
    with pytest.raises(ModelError, match=r"joint 'j': parent body 'ghost' does not exist") as err:
        read_urdf(path)
    assert str(err.value).startswith(f"{path}:5:")


def test_joint_without_parent_element(tmp_path):
    path = write(
        tmp_path,
        """
        <robot name="r">
          <link name="a"/>
          <link name="b"/>
          <joint name="j" type="revolute"><child link="b"/></joint>
        </robot>
        """,
    )
    with pytest.raises(ModelError, match=r"joint 'j': missing <parent") as err:
        read_urdf(path)
    assert str(err.value).startswith(f"{path}:4:")


def test_several_roots(tmp_path):
    path = write(
        tmp_path,
        """
        <robot name="r">
          <link name="a"/>
          <link name="stray"/>
        </robot>
        """,
    )
    with pytest.raises(ModelError, match=r"several root links.*'a' \(line 2\).*'stray'"):
        read_urdf(path)


def test_no_root(tmp_path):
    path = write(
        tmp_path,
        """
        <robot name="r">
          <link name="a"/>
          <link name="b"/>
          <joint name="ab" type="revolute"><parent link="a"/><child link="b"/></joint>
          <joint name="ba" type="revolute"><parent link="b"/><child link="a"/></joint>
        </robot>
        """,
    )
    with pytest.raises(ModelError, match="no root link"):
        read_urdf(path)


def test_bad_number(tmp_path):
    path = write(
        tmp_path,
        name="robot.urdf",
        text=TWO_LINKS.format(rpy="0 0 zero", ixx=0.1, iyy=0.2, izz=0.25),
    )
    with pytest.raises(ModelError, match=r"link 'arm': <origin rpy='0 0 zero'> is not 3 numbers"):
        read_urdf(path)
    path = write(
        tmp_path,
        name="robot.urdf",
        text=TWO_LINKS.format(rpy="0 0 0", ixx="heavy", iyy=0.2, izz=0.25),
    )
    with pytest.raises(ModelError, match=r"link 'arm': <inertia ixx='heavy'> is not a number") as e:
        read_urdf(path)
    assert f":{line_of(path, '<inertia ')}:" in str(e.value)


def test_invalid_inertia_cites_the_link(tmp_path):
    path = write(
        tmp_path, name="robot.urdf", text=TWO_LINKS.format(rpy="0 0 0", ixx=0.1, iyy=0.2, izz=1.0)
    )
    with pytest.raises(ModelError, match="body 'arm': .*triangle inequality") as err:
        read_urdf(path)
    line = line_of(path, '<link name="arm"')
    assert str(err.value).startswith(f"{path}:{line}:")


def test_not_a_robot(tmp_path):
    path = write(tmp_path, name="robot.urdf", text="<sdf><model/></sdf>\n")
    with pytest.raises(ModelError, match="not a URDF file"):
        read_urdf(path)


# ---------------------------------------------------------------------- hostile input (issue 11)
HOSTILE = """
<robot name="r">
  <link name="base"/>
  <link name="a">
    <inertial>
      <mass value="MASS"/><origin xyz="COM"/>
      <inertia ixx="I" iyy="I" izz="I" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
  <joint name="j" type="revolute">
    <parent link="base"/><child link="a"/><axis xyz="AXIS"/>
  </joint>
</robot>
"""


def hostile_urdf(tmp_path, mass="1", com="0 0 0", inertia="1", axis="0 0 1"):
    text = HOSTILE.replace("MASS", mass).replace("COM", com).replace('"I"', f'"{inertia}"')
    return write(tmp_path, text.replace("AXIS", axis), name="r.urdf")


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize(
    ("kwargs", "pattern", "needle"),
    [
        ({"mass": "nan"}, r"link 'a': <mass value='nan'> is not a finite number", "<mass"),
        ({"mass": "1e400"}, r"link 'a': <mass value='1e400'> is not a finite number", "<mass"),
        ({"com": "0 -inf 0"}, r"<origin xyz='0 -inf 0'> is not 3 finite numbers", "<mass"),
        ({"mass": "x" * 5000}, r"<mass value='xxxx.*'\.\.\.> is not a number", "<mass"),
        ({"inertia": "1e308"}, r"body 'a': rotational inertia is too large", '<link name="a"'),
        ({"mass": "1e200", "com": "1e60 0 0"}, r"body 'a': mass x squared distance",
         '<link name="a"'),
    ],
)
def test_bad_numbers_are_one_line_errors_at_their_line(tmp_path, kwargs, pattern, needle):
    path = hostile_urdf(tmp_path, **kwargs)
    with pytest.raises(ModelError, match=pattern) as err:
        load(path)
    message = str(err.value)
    assert "\n" not in message and len(message) < 300, message
    assert message.startswith(f"{path}:{line_of(path, needle)}: "), message


@pytest.mark.filterwarnings("error")
def test_huge_axis_is_normalised(tmp_path):
    # issue 11: <axis xyz="1e200 0 0"> normalised to (0, 0, 0) and gave M = 0
    model = load(hostile_urdf(tmp_path, axis="1e200 0 0"))
    assert model.joints[0].axis == (1.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ('<robot name="r\x07"><link name="a"/></robot>', r":1: malformed XML: not well-formed"),
        # an entity "billion laughs" is stopped by expat's amplification limit
        ('<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a0 "aaaaaaaaaa">'
         + "".join(f'<!ENTITY a{k} "' + f"&a{k - 1};" * 10 + '">' for k in range(1, 10))
         + ']>\n<robot name="&a9;"><link name="a"/></robot>', r"malformed XML: "),
        # external entities are never fetched
        ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
         '<robot name="&e;"><link name="a"/></robot>', r"malformed XML: .*external entity"),
    ],
)
def test_hostile_xml(tmp_path, text, pattern):
    path = tmp_path / "r.urdf"
    path.write_text(text)
    with pytest.raises(ModelError, match=pattern):
        load(path)


def test_deeply_nested_xml_is_read_without_recursion(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text('<robot name="r">' + "<x>" * 20000 + "</x>" * 20000
                    + '<link name="a"/></robot>')
    assert load(path).root == "a"
