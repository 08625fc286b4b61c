"""SDFormat reader (symgen.io.sdf): small hand-written files, poses and frames, joint types
against hand-computed kinematics, loop detection, and one-line file:line errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from model_files import line_of, write
from paths import EXAMPLES

from symgen import reference as ref
from symgen.errors import ModelError
from symgen.io import load
from symgen.io.sdf import read_sdf
from symgen.io.sdf_frames import rpy_from_rotation
from symgen.model import JointType
from symgen.model.transform import rotation_from_rpy

HALF_PI = math.pi / 2


def rot(axis, angle) -> np.ndarray:
    """Rodrigues: rotation by ``angle`` about the unit vector ``axis``."""
    k = np.asarray(axis, dtype=float)
    k = k / np.linalg.norm(k)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * kx @ kx


def sdf(tmp_path, body: str, version: str = "1.7", name: str = "m.sdf"):
    """Write ``<sdf version><model name="m">body</model></sdf>``."""
    text = f'<?xml version="1.0"?>\n<sdf version="{version}">\n<model name="m">\n{body}\n'
    return write(tmp_path, text + "</model>\n</sdf>\n", name=name)


def fk(model, q, name) -> np.ndarray:
    return ref.forward_kinematics(model, np.asarray(q, dtype=float))[name]


def link(name, pose="", inertial=True, extra=""):
    pose_xml = f"<pose>{pose}</pose>" if pose else ""
    body = ("<inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz>"
            "</inertia></inertial>") if inertial else ""
    return f'<link name="{name}">{pose_xml}{body}{extra}</link>\n'


def joint(name, jtype, parent, child, inner=""):
    return (f'<joint name="{name}" type="{jtype}"><parent>{parent}</parent>'
            f"<child>{child}</child>{inner}</joint>\n")


# ---------------------------------------------------------------------- links and poses
def test_body_frame_is_the_joint_frame_and_the_link_frame_keeps_its_name(tmp_path):
    a, b, c = 0.1, 0.2, 0.25
    path = sdf(tmp_path, f"""
        <link name="base"/>
        <link name="arm">
          <pose>0 0 1 0 0 0</pose>
          <inertial>
            <pose>0.1 0 0 0 0 {HALF_PI}</pose>
            <mass>2</mass>
            <inertia><ixx>{a}</ixx><iyy>{b}</iyy><izz>{c}</izz></inertia>
          </inertial>
          <visual name="v"><geometry><box><size>1 1 1</size></box></geometry></visual>
        </link>
        <joint name="j" type="revolute">
          <parent>base</parent><child>arm</child>
          <pose>0 0 -0.5 0 0 0</pose>
          <axis><xyz>0 1 0</xyz></axis>
        </joint>""")
    model = read_sdf(path)
    assert model.name == "m" and model.root == "base"
    (body,) = model.bodies
    # the joint is 0.5 below the link origin: the body (at the joint) is "arm__j", "arm" is
    # the link frame on it (MJCF's rule)
    assert body.name == "arm__j" and model.frame("arm").body == "arm__j"
    assert any("'arm__j'" in note for note in model.notes)
    assert body.mass == 2.0
    np.testing.assert_allclose(np.array(body.com, float), [0.1, 0, 0.5], atol=1e-15)
    np.testing.assert_allclose(np.array(body.inertia, float), np.diag([b, a, c]), atol=1e-15)
    (j,) = model.joints
    np.testing.assert_allclose(np.array(j.placement.translation, float), [0, 0, 0.5])
    assert j.axis == (0.0, 1.0, 0.0)
    assert body.source.line == line_of(path, '<link name="arm"')
    assert j.source.line == line_of(path, '<joint name="j"')
    # the body frame (at the joint) turns about y at the joint's height
    pose = fk(model, [0.3], "arm__j")
    np.testing.assert_allclose(pose[:3, :3], rot((0, 1, 0), 0.3), atol=1e-15)
    np.testing.assert_allclose(pose[:3, 3], [0, 0, 0.5], atol=1e-15)
    # the link frame, 0.5 above the joint, swings with it
    pose = fk(model, [0.3], "arm")
    np.testing.assert_allclose(pose[:3, :3], rot((0, 1, 0), 0.3), atol=1e-15)
    np.testing.assert_allclose(pose[:3, 3], [0.5 * math.sin(0.3), 0, 0.5 + 0.5 * math.cos(0.3)],
                               atol=1e-15)
    assert model.frame("arm").source.line == body.source.line


def test_a_link_without_inertial_has_the_spec_defaults(tmp_path):
    # inertial.sdf: mass 1, ixx = iyy = izz = 1 (a link with no <inertial> is not massless)
    path = sdf(tmp_path, link("base") + '<link name="arm"><pose>0 0 1 0.3 0.2 0.1</pose></link>'
               + '<link name="tip"><inertial><mass>3</mass></inertial></link>'
               + joint("j", "revolute", "base", "arm") + joint("k", "revolute", "arm", "tip"))
    model = read_sdf(path)
    arm, tip = model.bodies
    assert arm.mass == 1.0 and tip.mass == 3.0
    np.testing.assert_allclose(np.array(arm.inertia, float), np.eye(3), atol=1e-15)
    np.testing.assert_allclose(np.array(tip.inertia, float), np.eye(3), atol=1e-15)


def test_relative_to_links_joints_frames_and_the_model(tmp_path):
    path = sdf(tmp_path, """
        <pose>5 5 5 0 0 1</pose>
        <link name="base"/>
        <frame name="shelf" attached_to="base"><pose>1 0 0 0 0 1.5707963267948966</pose></frame>
        <link name="a"><pose relative_to="shelf">1 0 0 0 0 0</pose></link>
        <joint name="ja" type="revolute">
          <parent>base</parent><child>a</child>
          <pose relative_to="__model__">0 0 2 0 0 0</pose>
        </joint>
        <link name="b"><pose relative_to="ja">0 0 1 0 0 0</pose></link>
        <joint name="jb" type="prismatic"><parent>a</parent><child>b</child></joint>
        <frame name="tool" attached_to="jb"><pose relative_to="__model__">3 3 3 0 0 0</pose></frame>
        <frame name="marker"><pose relative_to="a">0 0 0.5 0 0 0</pose></frame>
    """)
    model = read_sdf(path)
    w = ref.forward_kinematics(model, np.zeros(model.nq))
    # a: 1 along the shelf's x, i.e. at (1, 1, 0), turned as the shelf; its joint frame,
    # the body "a__ja", is at (0, 0, 2)
    np.testing.assert_allclose(w["a"][:3, 3], [1, 1, 0], atol=1e-15)
    np.testing.assert_allclose(w["a"][:3, :3], rot((0, 0, 1), HALF_PI), atol=1e-15)
    np.testing.assert_allclose(w["a__ja"][:3, 3], [0, 0, 2], atol=1e-15)
    np.testing.assert_allclose(w["a__ja"][:3, :3], np.eye(3), atol=1e-15)
    assert model.body_names == ["a__ja", "b"]
    # b: 1 above joint ja's frame; its joint frame is b's own frame (the default)
    np.testing.assert_allclose(w["b"][:3, 3], [0, 0, 3], atol=1e-15)
    np.testing.assert_allclose(w["shelf"][:3, 3], [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(w["shelf"][:3, :3], rot((0, 0, 1), HALF_PI), atol=1e-15)
    np.testing.assert_allclose(w["tool"][:3, 3], [3, 3, 3], atol=1e-15)
    np.testing.assert_allclose(w["marker"][:3, 3], [1, 1, 0.5], atol=1e-15)
    assert model.frame("tool").body == "b"  # attached to the joint: its child
    assert model.frame("shelf").body == "base"
    # default attached_to: __model__, which moves with the canonical (first) link
    assert model.frame("marker").body == "base"
    q = np.array([0.7, 0.2])
    moved = ref.forward_kinematics(model, q)
    np.testing.assert_allclose(moved["tool"][:3, 3] - moved["b"][:3, 3],
                               rot((0, 0, 1), 0.7) @ [3, 3, 0], atol=1e-15)


def test_degrees_and_quaternions(tmp_path):
    s = math.sqrt(0.5)
    path = sdf(tmp_path, link("base")
               + '<link name="a"><pose degrees="true">0 0 1 90 0 0</pose></link>'
               + f'<link name="b"><pose rotation_format="quat_xyzw">0 0 2 0 0 {s} {s}</pose>'
               + "</link>"
               + joint("ja", "revolute", "base", "a") + joint("jb", "revolute", "base", "b"),
               version="1.9")
    model = read_sdf(path)
    w = ref.forward_kinematics(model, np.zeros(2))
    np.testing.assert_allclose(w["a"][:3, :3], rot((1, 0, 0), HALF_PI), atol=1e-15)
    np.testing.assert_allclose(w["b"][:3, :3], rot((0, 0, 1), HALF_PI), atol=1e-15)


def test_version_1_6_semantics(tmp_path):
    # links in the model frame, joints in their child link, the axis in the joint frame unless
    # <use_parent_model_frame>: then in the model frame
    yaw = f"0 0 1 0 0 {HALF_PI}"
    body = (link("base") + link("a", yaw) + link("b", yaw)
            + joint("ja", "revolute", "base", "a", "<pose>0 0 0.5 0 0 0</pose>"
                    "<axis><xyz>1 0 0</xyz></axis>")
            + joint("jb", "revolute", "base", "b", "<axis><xyz>1 0 0</xyz>"
                    "<use_parent_model_frame>true</use_parent_model_frame></axis>"))
    model = read_sdf(sdf(tmp_path, body, version="1.6"))
    ja, jb = model.joints
    np.testing.assert_allclose(np.array(ja.placement.translation, float), [0, 0, 1.5])
    np.testing.assert_allclose(np.array(ja.axis, float), [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(np.array(jb.axis, float), [0, -1, 0], atol=1e-15)


def test_axis_expressed_in_another_frame(tmp_path):
    body = (link("base") + link("a", f"0 0 1 0 0 {HALF_PI}")
            + '<frame name="tilted"><pose>0 0 0 0 0 3.141592653589793</pose></frame>'
            + joint("ja", "revolute", "base", "a",
                    '<axis><xyz expressed_in="tilted">1 0 0</xyz></axis>'))
    (ja,) = read_sdf(sdf(tmp_path, body)).joints
    np.testing.assert_allclose(np.array(ja.axis, float), [0, 1, 0], atol=1e-15)


def test_limits(tmp_path):
    limit = ("<limit><lower>-1</lower><upper>inf</upper><effort>-1</effort>"
             "<velocity>3</velocity></limit>")
    body = (link("base") + link("a") + link("b")
            + joint("ja", "revolute", "base", "a", f"<axis><xyz>0 0 1</xyz>{limit}</axis>")
            + joint("jb", "continuous", "a", "b", f"<axis><xyz>0 0 1</xyz>{limit}</axis>"))
    ja, jb = read_sdf(sdf(tmp_path, body)).joints
    assert ja.limits is not None and (ja.limits.lower, ja.limits.upper) == (-1.0, None)
    assert (ja.limits.effort, ja.limits.velocity) == (None, 3.0)  # negative: not enforced
    assert jb.limits is not None and (jb.limits.lower, jb.limits.upper) == (None, None)


def test_gravity_of_the_world_in_a_tilted_root_link(tmp_path):
    text = f"""<sdf version="1.8"><world name="w"><gravity>0 0 -5</gravity>
      <model name="m">
        <link name="base"><pose>0 0 0 {HALF_PI} 0 0</pose></link>
        {link("a")}{joint("j", "revolute", "base", "a")}
      </model></world></sdf>"""
    model = read_sdf(write(tmp_path, text, name="m.sdf"))
    np.testing.assert_allclose(np.array(model.gravity, float), [0, -5, 0], atol=1e-14)


def test_world_joint_and_model_pose(tmp_path):
    body = ('<pose>1 2 3 0 0 0</pose>' + link("base") + link("arm", "0 0 1 0 0 0")
            + joint("weld", "fixed", "world", "base")
            + joint("j", "revolute", "base", "arm", "<axis><xyz>0 1 0</xyz></axis>"))
    model = read_sdf(sdf(tmp_path, body))
    assert model.root == "world" and model.body_names == ["arm"]
    assert model.frame("base").body == "world"
    np.testing.assert_allclose(fk(model, [0.0], "arm")[:3, 3], [1, 2, 4], atol=1e-15)
    with pytest.raises(ModelError, match="attached to the world; floating_base"):
        read_sdf(sdf(tmp_path, body), floating_base=True)


def test_floating_base(tmp_path):
    body = link("base", "0 0 1 0 0 0") + link("arm") + joint("j", "revolute", "base", "arm")
    model = read_sdf(sdf(tmp_path, body), floating_base=True)
    assert model.root == "world"
    assert model.joints[0].name == "root_joint" and model.joints[0].type is JointType.FREE
    assert model.joints[0].placement.is_identity  # q holds the base's pose in the world
    assert (model.nq, model.nv) == (8, 7)
    assert model.bodies[0].mass == 1.0


def test_lock(tmp_path):
    body = (link("base") + link("a") + link("b") + joint("ja", "revolute", "base", "a")
            + joint("jb", "revolute", "a", "b"))
    model = read_sdf(sdf(tmp_path, body), lock={"jb": 0.5})
    assert model.joint_names == ["ja"] and model.locked_joint_names == ["jb"]


# ---------------------------------------------------------------------- joint types
def test_universal_joint(tmp_path):
    # axis fixed in the parent, axis2 in the child: R = Rot(axis, q1) Rot(axis2, q2), both
    # axes given at the initial pose; axis2 here in the model frame, the joint frame turned
    body = (link("base") + link("cross", f"0 0 1 0 0 {HALF_PI}")
            + joint("u", "universal", "base", "cross",
                    '<axis><xyz>1 0 0</xyz></axis>'
                    '<axis2><xyz expressed_in="__model__">1 0 0</xyz></axis2>'))
    model = read_sdf(sdf(tmp_path, body))
    (u,) = model.joints
    assert u.type is JointType.UNIVERSAL
    np.testing.assert_allclose(np.array(u.axis2, float), [0, -1, 0], atol=1e-15)
    q1, q2 = 0.4, -0.7
    pose = fk(model, [q1, q2], "cross")
    expected = rot((0, 0, 1), HALF_PI) @ rot((1, 0, 0), q1) @ rot((0, -1, 0), q2)
    np.testing.assert_allclose(pose[:3, :3], expected, atol=1e-15)
    np.testing.assert_allclose(pose[:3, 3], [0, 0, 1], atol=1e-15)


def test_ball_joint(tmp_path):
    body = link("base") + link("ball", "0 0 1 0 0 0.3") + joint("b", "ball", "base", "ball")
    model = read_sdf(sdf(tmp_path, body))
    assert model.joints[0].type is JointType.SPHERICAL and model.nq == 4
    axis, angle = np.array([1.0, 2.0, 2.0]) / 3, 0.9
    quat = [*(math.sin(angle / 2) * axis), math.cos(angle / 2)]  # (x, y, z, w)
    pose = fk(model, quat, "ball")
    np.testing.assert_allclose(pose[:3, :3], rot((0, 0, 1), 0.3) @ rot(axis, angle),
                               atol=1e-15)
    np.testing.assert_allclose(pose[:3, 3], [0, 0, 1], atol=1e-15)


@pytest.mark.parametrize(
    ("version", "element", "advance"),
    [
        # screw_thread_pitch: metres per revolution, right-handed positive: p θ / 2π
        ("1.10", "<screw_thread_pitch>0.01</screw_thread_pitch>", 0.01 / (2 * math.pi)),
        ("1.10", "<screw_thread_pitch>-0.02</screw_thread_pitch>", -0.02 / (2 * math.pi)),
        # thread_pitch: radians per metre, left-handed positive (gazebo-classic): -θ / t
        ("1.6", "<thread_pitch>100</thread_pitch>", -1 / 100),
        # neither: the spec's default screw_thread_pitch, 1 m per revolution
        ("1.7", "", 1 / (2 * math.pi)),
    ],
)
def test_screw_joint(tmp_path, version, element, advance):
    body = (link("base") + link("nut", "0 0 0.5 0 0 0")
            + joint("s", "screw", "base", "nut", f"<axis><xyz>0 0 1</xyz></axis>{element}"))
    model = read_sdf(sdf(tmp_path, body, version=version))
    (s,) = model.joints
    assert s.type is JointType.HELICAL and s.pitch == pytest.approx(advance, rel=1e-15)
    theta = 2.5
    pose = fk(model, [theta], "nut")
    np.testing.assert_allclose(pose[:3, :3], rot((0, 0, 1), theta), atol=1e-15)
    np.testing.assert_allclose(pose[:3, 3], [0, 0, 0.5 + advance * theta], atol=1e-15)


def test_mimic_becomes_a_coupling(tmp_path):
    # follower = multiplier (leader - reference) + offset (mimic.sdf, SDFormat 1.11)
    mimic = ('<mimic joint="lead"><multiplier>2</multiplier><offset>0.1</offset>'
             "<reference>0.05</reference></mimic>")
    body = (link("base") + link("a") + link("b")
            + joint("lead", "revolute", "base", "a", "<axis><xyz>0 0 1</xyz></axis>")
            + joint("follow", "revolute", "a", "b", f"<axis><xyz>0 0 1</xyz>{mimic}</axis>"))
    path = sdf(tmp_path, body, version="1.11")
    model = read_sdf(path)
    (c,) = model.couplings
    assert (c.joint, c.master, c.ratio) == ("follow", "lead", 2.0)
    assert c.offset == pytest.approx(0.0, abs=1e-17)
    assert model.nq == 1
    pose = fk(model, [0.3], "b")
    np.testing.assert_allclose(pose[:3, :3], rot((0, 0, 1), 0.3 + 2 * (0.3 - 0.05) + 0.1),
                               atol=1e-15)


def test_mimic_of_a_second_axis_is_refused(tmp_path):
    body = (link("base") + link("a") + link("b") + joint("lead", "universal", "base", "a")
            + joint("follow", "revolute", "a", "b",
                    '<axis><xyz>0 0 1</xyz><mimic joint="lead" axis="axis2"/></axis>'))
    path = sdf(tmp_path, body, version="1.11")
    with pytest.raises(ModelError, match="couples 1-DOF joints only") as err:
        read_sdf(path)
    assert str(err.value).startswith(f"{path}:{line_of(path, '<mimic')}: ")


# ---------------------------------------------------------------------- loops
def test_loop_joint_is_the_later_one_breadth_first(tmp_path):
    # ground -> a -> c (2 levels, listed first) and ground -> b -> c... c is reached first by
    # the breadth-first search through whichever of its parents is reached first: a and b
    # are both at depth 1, a's joints come first; a later joint to c closes the loop
    body = (link("ground") + link("a", "1 0 0 0 0 0") + link("b", "0 1 0 0 0 0")
            + link("c", "1 1 0 0 0 0")
            + joint("bc", "revolute", "b", "c") + joint("ga", "revolute", "ground", "a")
            + joint("ac", "revolute", "a", "c") + joint("gb", "revolute", "ground", "b"))
    model = read_sdf(sdf(tmp_path, body))
    assert model.joint_names == ["ga", "ac", "gb"]
    (loop,) = model.loop_joints
    assert (loop.name, loop.parent, loop.child, loop.cut) == ("bc", "b", "c", "declared")
    # the loop joint's frame (c's frame at the initial pose) from both sides
    np.testing.assert_allclose(np.array(loop.placement.translation, float), [1, 0, 0])
    assert loop.child_placement.is_identity


def test_shallower_path_wins_over_file_order(tmp_path):
    body = (link("ground") + link("a", "1 0 0 0 0 0") + link("c", "2 0 0 0 0 0")
            + joint("ac", "revolute", "a", "c") + joint("ga", "revolute", "ground", "a")
            + joint("gc", "revolute", "ground", "c"))
    model = read_sdf(sdf(tmp_path, body))
    assert [j.name for j in model.loop_joints] == ["ac"]


def test_must_be_loop_joint(tmp_path):
    body = (link("ground") + link("a", "1 0 0 0 0 0") + link("c", "2 0 0 0 0 0")
            + joint("gc", "revolute", "ground", "c",
                    "<physics><simbody><must_be_loop_joint>true</must_be_loop_joint>"
                    "</simbody></physics>")
            + joint("ga", "revolute", "ground", "a") + joint("ac", "revolute", "a", "c"))
    model = read_sdf(sdf(tmp_path, body))
    assert [j.name for j in model.loop_joints] == ["gc"]


# ---------------------------------------------------------------------- helpers
@pytest.mark.parametrize("rpy", [(0.3, -0.2, 2.9), (0.1, HALF_PI, 0.4), (-2.0, -HALF_PI, 1.0),
                                 (0.2, HALF_PI - 1e-9, -3.0), (math.pi, 0.0, -math.pi)])
def test_rpy_from_rotation_round_trips(rpy):
    r = rotation_from_rpy(*rpy)
    again = rotation_from_rpy(*rpy_from_rotation(r))
    np.testing.assert_allclose(np.array(again, float), np.array(r, float), atol=4e-16)


# ---------------------------------------------------------------------- errors
MINIMAL = link("base") + link("arm") + joint("j", "revolute", "base", "arm")


@pytest.mark.parametrize(
    ("body", "version", "pattern", "needle"),
    [
        (link("base") + link("arm") + joint("j", "weird", "base", "arm"), "1.7",
         r"joint 'j': unknown SDFormat joint type 'weird' \(known: revolute, continuous",
         '<joint name="j"'),
        (link("base") + link("arm") + joint("j", "gearbox", "base", "arm"), "1.7",
         r"joint 'j': SDFormat joint type 'gearbox' is not supported", '<joint name="j"'),
        (link("base") + link("arm") + joint("j", "revolute2", "base", "arm"), "1.7",
         r"joint 'j': SDFormat joint type 'revolute2' is not supported", '<joint name="j"'),
        (link("base") + link("arm") + joint("j", "revolute", "base", "ghost"), "1.7",
         r"joint 'j': child 'ghost' is not a link or frame of model 'm'", "<child>"),
        (link("base") + link("arm") + joint("j", "revolute", "ghost", "arm"), "1.6",
         r"joint 'j': parent 'ghost' is not a link of model 'm'", "<parent>"),
        (link("base") + link("arm") + joint("j", "revolute", "base", "arm",
                                            '<pose relative_to="nowhere">0 0 0 0 0 0</pose>'),
         "1.7", r"joint 'j': relative_to 'nowhere' is not a link, joint or frame of model 'm'",
         "nowhere"),
        (MINIMAL, "1.5", r"SDFormat version 1.5 is not supported \(1.6 or later", "<sdf"),
        (MINIMAL, "one", r"<sdf version='one'> is not a version", "<sdf"),
        (link("base") + link("arm") + link("stray") + joint("j", "revolute", "base", "arm"),
         "1.7", r"several root links .*'base' \(line \d+\), 'stray' \(line \d+\)",
         '<model name="m"'),
        (link("a") + link("b") + joint("j", "revolute", "a", "b") + joint("k", "revolute", "b",
                                                                          "a"),
         "1.7", "no root link", '<model name="m"'),
        ('<link name="base"><pose relative_to="arm">0 0 0 0 0 0</pose></link>'
         '<link name="arm"><pose relative_to="base">0 0 0 0 0 0</pose></link>'
         + joint("j", "revolute", "base", "arm"), "1.7",
         r"relative_to form a cycle: (base -> arm -> base|arm -> base -> arm)", "relative_to"),
        ('<link name="base"><pose relative_to="__model__">0 0 0 0 0 0</pose></link>' + link("arm")
         + joint("j", "revolute", "base", "arm"), "1.6", r"relative_to needs SDFormat 1.7",
         "relative_to"),
        ('<frame name="f"/>' + MINIMAL, "1.6", r"<frame> needs SDFormat 1.7", "<frame"),
        (MINIMAL + '<model name="inner"/>', "1.7", r"nested <model> is not supported",
         '<model name="inner"'),
        (MINIMAL + '<include><uri>model://x</uri></include>', "1.7",
         r"nested <include> is not supported", "<include"),
        ('<link name="base"><pose>0 0 zero 0 0 0</pose></link>' + link("arm")
         + joint("j", "revolute", "base", "arm"), "1.7",
         r"link 'base': <pose>0 0 zero 0 0 0</pose> is not 6 numbers", "zero"),
        (link("base") + '<link name="arm"><inertial auto="true"/></link>'
         + joint("j", "revolute", "base", "arm"), "1.11",
         r"link 'arm': <inertial auto=\"true\"> .* is not supported", "auto="),
        (link("base") + link("arm") + joint("arm", "revolute", "base", "arm"), "1.7",
         r"duplicate name 'arm' \(also <link> at line \d+\)", '<joint name="arm"'),
        (link("base") + link("arm") + link("far") + joint("j", "revolute", "base", "arm")
         + joint("k", "revolute", "far", "far2") + link("far2")
         + joint("k2", "revolute", "far2", "far"), "1.7",
         r"link 'far': not connected to the root 'base'", '<link name="far"'),
        (link("base") + link("arm") + joint("j", "revolute", "base", "arm",
                                            "<axis><xyz>1 0 0</xyz><use_parent_model_frame>"
                                            "true</use_parent_model_frame></axis>"), "1.7",
         r"<use_parent_model_frame> was removed in SDFormat 1.7", "use_parent"),
        ('<link name="world"/>' + link("arm") + joint("j", "revolute", "world", "arm"), "1.7",
         r"link 'world': the name is reserved", '<link name="world"'),
        (link("base") + link("arm") + joint("j", "revolute", "base", "world"), "1.7",
         r"joint 'j': the child may not be the world", "<child>"),
        ('<link name="base"><gravity>false</gravity></link>' + link("arm")
         + joint("j", "revolute", "base", "arm"), "1.7", r"link 'base': <gravity>false",
         '<link name="base"'),
        (link("base") + link("arm") + joint("j", "revolute", "base", "arm",
                                            "<axis><xyz>0 0 1</xyz><limit><lower>low</lower>"
                                            "</limit></axis>"), "1.7",
         r"joint 'j': <limit>: <lower>low</lower> is not a number", "low"),
    ],
)
def test_one_line_errors_at_their_line(tmp_path, body, version, pattern, needle):
    path = sdf(tmp_path, body, version=version)
    with pytest.raises(ModelError, match=pattern) as err:
        read_sdf(path)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:{line_of(path, needle)}: "), message


def test_missing_file(tmp_path):
    path = tmp_path / "nothing.sdf"
    with pytest.raises(ModelError, match=r"nothing\.sdf: cannot read model file") as err:
        read_sdf(path)
    assert "\n" not in str(err.value)


def test_malformed_xml(tmp_path):
    path = write(tmp_path, '<sdf version="1.7">\n<model name="m">\n<link name="a">\n</model>\n',
                 name="m.sdf")
    with pytest.raises(ModelError, match="malformed XML") as err:
        read_sdf(path)
    assert str(err.value).startswith(f"{path}:4: ")


def test_not_an_sdf_file(tmp_path):
    path = write(tmp_path, '<robot name="r"><link name="a"/></robot>', name="m.sdf")
    with pytest.raises(ModelError, match=r":1: not an SDF file: the top element is <robot>"):
        read_sdf(path)


def test_worlds(tmp_path):
    two = ('<sdf version="1.7"><world name="w"><model name="a">' + MINIMAL + '</model>'
           '<model name="b">' + MINIMAL + "</model></world></sdf>")
    with pytest.raises(ModelError, match=r"world: 2 non-static <model> elements"):
        read_sdf(write(tmp_path, two, name="two.sdf"))
    include = ('<sdf version="1.7"><world name="w"><include><uri>model://sun</uri></include>'
               '<model name="a">' + MINIMAL + "</model></world></sdf>")
    with pytest.raises(ModelError, match=r"world: <include> is not supported"):
        read_sdf(write(tmp_path, include, name="inc.sdf"))


def test_billion_laughs_in_element_text(tmp_path):
    entities = "".join(f'<!ENTITY a{k} "' + f"&a{k - 1};" * 10 + '">' for k in range(1, 10))
    text = ('<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a0 "0 0 0 0 0 0 ">' + entities
            + ']>\n<sdf version="1.7"><model name="m"><link name="a"><pose>&a9;</pose></link>'
            "</model></sdf>")
    with pytest.raises(ModelError, match="malformed XML: "):
        read_sdf(write(tmp_path, text, name="m.sdf"))


def test_symgen_load_reads_sdf_files(tmp_path):
    model = load(EXAMPLES / "four_bar.sdf")
    assert [j.name for j in model.loop_joints] == ["coupler_rocker"]
    xml = write(tmp_path, (EXAMPLES / "four_bar.sdf").read_text(), name="four_bar.xml")
    assert load(xml).joint_names == model.joint_names
