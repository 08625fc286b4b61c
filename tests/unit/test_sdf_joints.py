"""SDFormat reader (symgen.io.sdf, symgen.io.sdf_joints): link frames away from their joints
against the file's <pose> chain composed by hand, <axis><dynamics> as joint springs (and
what is left out, with warnings and notes), limits of multi-DOF joints."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from model_files import line_of, write

from symgen import reference as ref
from symgen.errors import ModelError
from symgen.io.sdf import read_sdf
from symgen.model import JointType
from symgen.model.elements import JointSpring
from symgen.reference.forces import element_forces


def sdf(tmp_path, body: str, version: str = "1.7"):
    text = f'<?xml version="1.0"?>\n<sdf version="{version}">\n<model name="m">\n{body}\n'
    return write(tmp_path, text + "</model>\n</sdf>\n", name="m.sdf")


def link(name, pose=""):
    pose_xml = f"<pose>{pose}</pose>" if pose else ""
    return (f'<link name="{name}">{pose_xml}<inertial><mass>1</mass><inertia><ixx>0.1</ixx>'
            f"<iyy>0.1</iyy><izz>0.1</izz></inertia></inertial></link>\n")


def joint(name, jtype, parent, child, inner=""):
    return (f'<joint name="{name}" type="{jtype}"><parent>{parent}</parent>'
            f"<child>{child}</child>{inner}</joint>\n")


def rot(axis, angle) -> np.ndarray:
    k = np.asarray(axis, dtype=float)
    k = k / np.linalg.norm(k)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * kx @ kx


def pose(text: str) -> np.ndarray:
    """4x4 of an SDFormat ``x y z roll pitch yaw``: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    x, y, z, roll, pitch, yaw = (float(v) for v in text.split())
    out = np.eye(4)
    out[:3, :3] = rot((0, 0, 1), yaw) @ rot((0, 1, 0), pitch) @ rot((1, 0, 0), roll)
    out[:3, 3] = (x, y, z)
    return out


def motion(rotation=None, translation=(0.0, 0.0, 0.0)) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = np.eye(3) if rotation is None else rotation
    out[:3, 3] = translation
    return out


# ---------------------------------------------------------------------- link frames
POSES = {
    "base": "0 0 0.1 0 0 0.2",
    "l1": "0.3 0 0.5 0.1 0.2 0.3",          # in the model frame
    "j1": "0 0 -0.2 0 0.4 0",               # in l1 (the default)
    "l2": "0.4 0.1 0 0 0 -0.5",             # relative_to l1
    "j2": "0.1 0 0 0.3 0 0",                # relative_to l1
    "l3": "0 0 0.3 0.2 -0.1 0",             # relative_to j2
    "l4": "0 0.2 0 0 0 1",                  # relative_to l3
    "j4": "0.05 0 0 0 0 0",                 # in l4: a fixed joint away from its child
    "tip": "0.1 0.2 0.3 0 0 0",             # attached to l2, in l2
}
CHAIN = f"""
  <link name="base"><pose>{POSES["base"]}</pose></link>
  {link("l1", POSES["l1"])}
  <joint name="j1" type="revolute"><parent>base</parent><child>l1</child>
    <pose>{POSES["j1"]}</pose><axis><xyz>0 1 0</xyz></axis></joint>
  <link name="l2"><pose relative_to="l1">{POSES["l2"]}</pose></link>
  <joint name="j2" type="prismatic"><parent>l1</parent><child>l2</child>
    <pose relative_to="l1">{POSES["j2"]}</pose>
    <axis><xyz expressed_in="__model__">1 0 0</xyz></axis></joint>
  <link name="l3"><pose relative_to="j2">{POSES["l3"]}</pose></link>
  <joint name="j3" type="universal"><parent>l2</parent><child>l3</child>
    <axis><xyz>1 0 0</xyz></axis><axis2><xyz>0 1 0</xyz></axis2></joint>
  <link name="l4"><pose relative_to="l3">{POSES["l4"]}</pose></link>
  <joint name="j4" type="fixed"><parent>l3</parent><child>l4</child>
    <pose>{POSES["j4"]}</pose></joint>
  <frame name="tip" attached_to="l2"><pose>{POSES["tip"]}</pose></frame>
"""


def chain_poses(q) -> dict[str, np.ndarray]:
    """World (= base frame) poses of every link and frame of CHAIN at q, by hand: the
    initial poses in the model frame X from the <pose> chain, then each child link at
    W_child = W_parent X_parent⁻¹ X_joint M(q) X_joint⁻¹ X_child, M the joint's motion in
    the joint frame."""
    p = {k: pose(v) for k, v in POSES.items()}
    x = {"base": p["base"], "l1": p["l1"]}
    x["j1"] = x["l1"] @ p["j1"]
    x["l2"] = x["l1"] @ p["l2"]
    x["j2"] = x["l1"] @ p["j2"]
    x["l3"] = x["j2"] @ p["l3"]
    x["j3"] = x["l3"]  # no <pose>: the child link's frame
    x["l4"] = x["l3"] @ p["l4"]
    x["tip"] = x["l2"] @ p["tip"]
    axis_j2 = x["j2"][:3, :3].T @ [1, 0, 0]  # expressed in the model frame
    moves = {
        "j1": ("base", "l1", motion(rot((0, 1, 0), q[0]))),
        "j2": ("l1", "l2", motion(translation=q[1] * axis_j2)),
        "j3": ("l2", "l3", motion(rot((1, 0, 0), q[2]) @ rot((0, 1, 0), q[3]))),
    }
    inv = np.linalg.inv
    w = {"base": np.eye(4)}
    for jname, (parent, child, m) in moves.items():
        w[child] = w[parent] @ inv(x[parent]) @ x[jname] @ m @ inv(x[jname]) @ x[child]
    w["l4"] = w["l3"] @ inv(x["l3"]) @ x["l4"]
    w["tip"] = w["l2"] @ inv(x["l2"]) @ x["tip"]
    return w


def test_every_link_name_is_the_sdf_link_frame(tmp_path):
    model = read_sdf(sdf(tmp_path, CHAIN))
    # bodies at joints away from their link are link__joint; l3's joint is at its origin;
    # l4 (fixed) is merged into l3 as a frame at its own link frame
    assert model.body_names == ["l1__j1", "l2__j2", "l3"]
    assert {n: model.frame(n).body for n in ("l1", "l2", "l4", "tip")} == {
        "l1": "l1__j1", "l2": "l2__j2", "l4": "l3", "tip": "l2__j2"}
    rng = np.random.default_rng(0)
    for q in [np.zeros(4), *rng.uniform(-1.5, 1.5, size=(3, 4))]:
        poses, expected = ref.forward_kinematics(model, q), chain_poses(q)
        for name in ("base", "l1", "l2", "l3", "l4", "tip"):
            np.testing.assert_allclose(poses[name], expected[name], atol=1e-13, err_msg=name)


@pytest.mark.parametrize("name", ["l1", "l2", "l4", "tip"])
def test_link_frame_jacobians_are_those_of_the_link_frame(tmp_path, name):
    # [angular; linear] at the frame origin, world axes, against central differences of
    # the hand-composed pose
    model = read_sdf(sdf(tmp_path, CHAIN))
    q, h = np.array([0.3, -0.2, 0.7, -0.4]), 1e-6
    jac = ref.frame_jacobian(model, q, name, "local_world_aligned")
    for k in range(4):
        dq = np.eye(4)[k] * h
        plus, minus = chain_poses(q + dq)[name], chain_poses(q - dq)[name]
        linear = (plus[:3, 3] - minus[:3, 3]) / (2 * h)
        w = (plus[:3, :3] - minus[:3, :3]) / (2 * h) @ chain_poses(q)[name][:3, :3].T
        angular = np.array([w[2, 1], w[0, 2], w[1, 0]])
        np.testing.assert_allclose(jac[:, k], np.concatenate([angular, linear]), atol=1e-8)


def test_generated_body_names_stay_unique(tmp_path):
    body = (link("base") + link("a", "0 0 1 0 0 0") + link("a__j", "0 0 2 0 0 0")
            + joint("j", "revolute", "base", "a", "<pose>0 0 -0.5 0 0 0</pose>")
            + joint("k", "revolute", "base", "a__j"))
    model = read_sdf(sdf(tmp_path, body))
    assert model.body_names == ["a__j_2", "a__j"] and model.frame("a").body == "a__j_2"


# ---------------------------------------------------------------------- dynamics
def dynamics(damping="", friction="", reference="", stiffness=""):
    values = {"damping": damping, "friction": friction, "spring_reference": reference,
              "spring_stiffness": stiffness}
    return "<dynamics>" + "".join(f"<{k}>{v}</{k}>" for k, v in values.items() if v) + \
        "</dynamics>"


def test_dynamics_of_one_dof_joints_are_joint_springs(tmp_path):
    body = (link("base") + link("a") + link("b", "0 0 1 0 0 0") + link("c") + link("d")
            + joint("ja", "revolute", "base", "a",
                    f"<axis><xyz>0 0 1</xyz>{dynamics('0.1', '', '0.3', '2')}</axis>")
            + joint("jb", "prismatic", "a", "b",
                    f"<pose>0 0 -0.5 0 0 0</pose><axis><xyz>1 0 0</xyz>{dynamics('4')}</axis>")
            + joint("jc", "continuous", "b", "c",
                    f"<axis><xyz>0 0 1</xyz>{dynamics('0', '0', '0.5', '0')}</axis>")
            + joint("jd", "screw", "c", "d",
                    f"<axis><xyz>0 0 1</xyz>{dynamics('', '', '-1', '3')}</axis>"))
    path = sdf(tmp_path, body)
    model = read_sdf(path)
    springs = [(e.name, e.joint, e.stiffness, e.damping, e.rest) for e in model.force_elements]
    # jc's values are all zero (a reference alone is no force): no element
    assert springs == [("ja_passive", "ja", 2.0, 0.1, 0.3), ("jb_passive", "jb", 0.0, 4.0, 0.0),
                       ("jd_passive", "jd", 3.0, 0.0, -1.0)]
    assert all(isinstance(e, JointSpring) for e in model.force_elements)
    assert model.force_elements[1].source.line == line_of(path, "<damping>4")
    assert model.notes == ("bodies at joints away from their link's origin: 'b__jb' (named "
                           "link__joint; the link's name is a frame at the link origin)",)
    # -k (q - spring_reference) - c q̇ in symgen's coordinates: SDFormat's joint zero is
    # the initial pose, as symgen's
    q, v = np.array([0.5, 0.2, 0.1, 0.4]), np.array([1.0, -2.0, 0.3, 0.5])
    forces = element_forces(model, q, v)
    np.testing.assert_allclose(forces, [-2 * (0.5 - 0.3) - 0.1 * 1.0, -4 * -2.0, 0.0,
                                        -3 * (0.4 + 1)], atol=1e-15)


def test_dynamics_of_a_loop_joint(tmp_path):
    body = (link("ground") + link("a", "1 0 0 0 0 0") + link("c", "2 0 0 0 0 0")
            + joint("ga", "revolute", "ground", "a") + joint("gc", "revolute", "ground", "c")
            + joint("ac", "revolute", "a", "c", f"<axis><xyz>0 0 1</xyz>{dynamics('0.5')}"
                                                "</axis>"))
    model = read_sdf(sdf(tmp_path, body))
    assert [j.name for j in model.loop_joints] == ["ac"]
    assert [(e.joint, e.damping) for e in model.force_elements] == [("ac", 0.5)]


def test_friction_is_ignored_with_a_note(tmp_path):
    body = (link("base") + link("a") + joint("ja", "revolute", "base", "a",
                                             f"<axis>{dynamics('', '0.7')}</axis>"))
    model = read_sdf(sdf(tmp_path, body))
    assert model.force_elements == ()
    assert model.notes == ("joint friction (<dynamics><friction>) ignored on 1 joint(s): 'ja'",)


def test_universal_and_ball_dynamics_are_left_out(tmp_path):
    body = (link("base") + link("u") + link("b")
            + joint("ju", "universal", "base", "u",
                    f"<axis><xyz>1 0 0</xyz>{dynamics('', '', '', '0')}</axis>"
                    f"<axis2><xyz>0 1 0</xyz>{dynamics('0.2')}</axis2>")
            + joint("jb", "ball", "u", "b", f"<axis>{dynamics('', '', '', '5')}</axis>"))
    with pytest.warns(UserWarning) as caught:
        model = read_sdf(sdf(tmp_path, body))
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    assert "<axis2><dynamics> damping of the universal joint 'ju' left out" in messages[0]
    assert "<axis><dynamics> spring_stiffness of the ball joint 'jb' left out" in messages[1]
    assert model.force_elements == ()
    assert model.notes == (
        "<axis2><dynamics> damping of the universal joint 'ju' left out (1-DOF joint springs "
        "only)",
        "<axis><dynamics> spring_stiffness of the ball joint 'jb' left out (1-DOF joint "
        "springs only)")
    # all-zero dynamics of a multi-DOF joint: nothing to leave out, no warning
    quiet = (link("base") + link("u") + joint("ju", "universal", "base", "u",
                                              "<axis><xyz>1 0 0</xyz></axis>"
                                              f"<axis2>{dynamics('0', '0', '1', '0')}</axis2>"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_sdf(sdf(tmp_path, quiet)).notes == ()


@pytest.mark.parametrize(("values", "pattern", "needle"), [
    (dynamics("", "", "", "-2"), r"joint spring 'ja_passive': negative stiffness -2",
     "<dynamics>"),
    (dynamics("-0.1"), r"joint spring 'ja_passive': negative damping -0.1", "<dynamics>"),
    (dynamics("x"), r"joint 'ja': <axis><dynamics>: <damping>x</damping> is not a number",
     "<damping>"),
    (dynamics("", "", "inf", "1"), r"<spring_reference>inf</spring_reference> is not a "
     r"finite number", "<spring_reference>"),
])
def test_bad_dynamics_are_one_line_errors(tmp_path, values, pattern, needle):
    body = (link("base") + link("a")
            + joint("ja", "revolute", "base", "a", f"<axis>\n{values}\n</axis>"))
    path = sdf(tmp_path, body)
    with pytest.raises(ModelError, match=pattern) as err:
        read_sdf(path)
    assert "\n" not in str(err.value)
    assert str(err.value).startswith(f"{path}:{line_of(path, needle)}: ")


# ---------------------------------------------------------------------- limits
def test_universal_joints_keep_no_limits(tmp_path):
    # symgen's Limits hold one range per joint: a universal joint's two are not kept
    limit = "<limit><lower>-1</lower><upper>1</upper></limit>"
    body = (link("base") + link("u") + joint("ju", "universal", "base", "u",
                                             f"<axis><xyz>1 0 0</xyz>{limit}</axis>"
                                             f"<axis2>{limit}</axis2>"))
    (ju,) = read_sdf(sdf(tmp_path, body)).joints
    assert ju.type is JointType.UNIVERSAL and ju.limits is None
