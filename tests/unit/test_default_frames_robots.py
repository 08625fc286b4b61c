"""Default frames of the per-frame kernels from the kinematic structure (issue 30): the
limb ends (feet, hands, tool frames) of real robots, never the sensors, logos and mounts
fixed on a pelvis or torso; and the ``--floating-base`` hint only for a model standing on
legs, not for a hand's fingers."""

from __future__ import annotations

import warnings

import pytest

import symgen
from symgen.apps.summary import describe, mobile_base_hint
from symgen.errors import SymgenError
from symgen.generate import default_frames
from symgen.io.robots import example_robot_data_dir
from symgen.model.limbs import is_hand, palm, sensor_named


def robot(path: str, **kwargs) -> symgen.Model:
    """A URDF of example-robot-data (skip when the package is missing)."""
    try:
        root = example_robot_data_dir()
    except SymgenError:
        pytest.skip("example-robot-data is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the files' unknown elements
        return symgen.load(root / path, **kwargs)


G1_HANDS = "g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf"
TIAGO_PRO = "tiago_pro_description/robots/tiago_pro.urdf"
TALOS = "talos_data/robots/talos_full_v2.urdf"
ALLEGRO = "allegro_hand_description/urdf/allegro_right_hand.urdf"
SOLO12 = "solo_description/robots/solo12.urdf"

# a torso on a lift: an IMU and a camera on it, a head carrying only a camera, a left arm
# ending in a palm with two short fingers, a right arm ending in a tool flange
TORSO_URDF = """<robot name="torso">
  <link name="base"/>
  {links}
  <joint name="lift" type="prismatic"><parent link="base"/><child link="torso"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 0 1"/><limit lower="0" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="imu_j" type="fixed"><parent link="torso"/><child link="imu_link"/></joint>
  <joint name="cam_j" type="fixed"><parent link="torso"/><child link="chest_camera"/></joint>
  <joint name="neck" type="revolute"><parent link="torso"/><child link="head"/>
    <origin xyz="0 0 0.2"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="head_cam_j" type="fixed"><parent link="head"/><child link="head_camera"/>
    <origin xyz="0.1 0 0"/></joint>
  {arms}
</robot>"""


def _arm(side: str, y: float) -> tuple[list[str], str]:
    """Links and joints of a three-joint arm of 0.9 m on the torso."""
    names = [f"{side}_{k}" for k in (1, 2, 3)]
    joints, parent = [], "torso"
    for k, name in enumerate(names):
        xyz = f"0 {y} 0" if k == 0 else "0.3 0 0"
        joints.append(f'<joint name="{name}_j" type="revolute"><parent link="{parent}"/>'
                      f'<child link="{name}"/><origin xyz="{xyz}"/><axis xyz="0 1 0"/>'
                      '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')
        parent = name
    return names, "\n".join(joints)


def torso_robot(tmp_path) -> symgen.Model:
    left, left_joints = _arm("left", 0.2)
    right, right_joints = _arm("right", -0.2)
    hand = ['<joint name="palm_j" type="fixed"><parent link="left_3"/><child link="palm"/>'
            '<origin xyz="0.3 0 0"/></joint>']
    for finger, y in (("f1", 0.02), ("f2", -0.02)):
        hand.append(f'<joint name="{finger}_j" type="revolute"><parent link="palm"/>'
                    f'<child link="{finger}"/><origin xyz="0.03 {y} 0"/><axis xyz="0 1 0"/>'
                    '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')
    flange = ('<joint name="tool_j" type="fixed"><parent link="right_3"/><child link="tool0"/>'
              '<origin xyz="0.3 0 0"/></joint>')
    moving = ["torso", "head", *left, *right, "f1", "f2"]
    inertial = ('<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" '
                'ixy="0" ixz="0" iyz="0"/></inertial>')
    links = [f'<link name="{n}">{inertial}</link>' for n in moving]
    links += [f'<link name="{n}"/>' for n in ("imu_link", "chest_camera", "head_camera",
                                                "palm", "tool0")]
    path = tmp_path / "torso.urdf"
    path.write_text(TORSO_URDF.format(links="\n".join(links), arms="\n".join(
        [left_joints, right_joints, *hand, flange])))
    return symgen.load(path)


# ------------------------------------------------------------------ a synthetic torso robot
def test_limb_ends_of_a_torso_robot(tmp_path):
    model = torso_robot(tmp_path)
    # the palm's fingers (3 cm) are shorter than the arm (0.9 m): the left arm ends at the
    # palm they hang from; the right arm at its flange; the head, carrying only a camera,
    # stands for itself; the torso's IMU and camera are not limb ends
    assert default_frames(model) == ("palm", "tool0", "head")
    assert is_hand(model, model.body_index("left_3"))
    assert not is_hand(model, model.body_index("torso"))  # arms longer than the lift
    assert palm(model, model.body_index("left_3")) == "palm"


def test_a_trunk_on_a_free_joint_is_no_hand():
    # a file's own floating joint places the trunk 0.5 m up; its legs are 0.2 m long: the
    # free joint carries the whole robot, not a limb, so the trunk is no palm of fingers
    b = symgen.ModelBuilder("quad", root="world")
    inertia = ((0.01, 0, 0), (0, 0.01, 0), (0, 0, 0.01))
    b.body("trunk", mass=5.0, inertia=inertia)
    b.joint("float", "free", "world", "trunk", xyz=(0, 0, 0.5))
    for leg, (x, y) in {"fl": (0.2, 0.1), "fr": (0.2, -0.1), "hl": (-0.2, 0.1),
                        "hr": (-0.2, -0.1)}.items():
        b.body(f"{leg}_thigh", mass=0.5, inertia=inertia)
        b.body(f"{leg}_shank", mass=0.5, inertia=inertia)
        b.joint(f"{leg}_hip", "revolute", "trunk", f"{leg}_thigh", xyz=(x, y, 0))
        b.joint(f"{leg}_knee", "revolute", f"{leg}_thigh", f"{leg}_shank", xyz=(0, 0, -0.1))
    model = b.build()
    assert not is_hand(model, model.body_index("trunk"))
    assert default_frames(model) == ("fl_shank", "fr_shank", "hl_shank", "hr_shank")


def test_frames_record_where_links_hang(tmp_path):
    model = torso_robot(tmp_path)
    assert model.frame("palm").parent == "left_3" and not model.frame("palm").leaf
    assert model.frame("palm").joints == ("f1_j", "f2_j")
    assert model.frame("tool0").leaf and model.frame("tool0").joints == ()


def test_sensor_words_split_names():
    assert sensor_named("imu_in_torso") and sensor_named("CameraDepth_frame")
    assert sensor_named("xtion_rgb_optical_frame") and sensor_named("LEFT_FOOT_IMU_LINK")
    assert not any(sensor_named(n) for n in ("tool0", "l_sole", "panda_hand_tcp", "FL_foot",
                                             "gripper_left_base_link"))


# ------------------------------------------------------------------------------ real robots
def test_g1_defaults_are_its_feet_and_palms():
    model = robot(G1_HANDS)
    # the legs end at the ankle-roll links (no sole link); the arms at the palms the
    # three fingers of each hand hang from
    assert set(default_frames(model)) == {"left_ankle_roll_link", "right_ankle_roll_link",
                                          "left_hand_palm_link", "right_hand_palm_link"}
    on_trunk = {f.name for f in model.frames if f.body in ("pelvis", "torso_link")}
    assert {"imu_in_torso", "logo_link", "d435_link"} <= on_trunk
    assert not on_trunk & set(default_frames(model))
    floating = robot(G1_HANDS, floating_base=True)  # the pelvis moves: still no trunk frame
    assert default_frames(floating) == default_frames(model)


def test_g1_without_hands_ends_at_its_rubber_hands():
    model = robot("g1_description/urdf/g1_29dof_rev_1_0.urdf")
    assert set(default_frames(model)) == {"left_ankle_roll_link", "right_ankle_roll_link",
                                          "left_rubber_hand", "right_rubber_hand"}


def test_tiago_pro_defaults_are_its_arm_ends_not_the_torso_mounts():
    model = robot(TIAGO_PRO)
    frames = set(default_frames(model))
    assert {"gripper_left_base_link", "gripper_right_base_link"} <= frames
    assert not {"torso_arm_left_link", "torso_arm_right_link", "base_imu_link"} & frames
    # the gripper base is fixed at the arm's tool frame, at the same pose
    for side in ("left", "right"):
        tool, base = model.frame(f"arm_{side}_tool_link"), model.frame(f"gripper_{side}_base_link")
        assert base.body == tool.body == f"arm_{side}_7_link"
        assert base.placement == tool.placement


def test_talos_defaults_are_its_soles_grippers_and_head():
    model = robot(TALOS)
    assert set(default_frames(model)) == {"left_sole_link", "right_sole_link",
                                          "gripper_left_base_link", "gripper_right_base_link",
                                          "head_2_link"}  # its head carries only cameras


@pytest.mark.parametrize("path, expected", [
    ("panda_description/urdf/panda.urdf", ("panda_hand_tcp",)),  # beside the fingers
    ("ur_description/urdf/ur5_robot.urdf", ("ee_link", "tool0")),
    (SOLO12, ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")),
    (ALLEGRO, ("link_3.0_tip", "link_15.0_tip", "link_7.0_tip", "link_11.0_tip")),
])
def test_defaults_of_arms_quadrupeds_and_hands(path, expected):
    assert default_frames(robot(path)) == expected


def test_info_shows_the_default_frames():
    text = describe(robot(G1_HANDS))
    line = next(x for x in text.splitlines() if x.startswith("default frames"))
    assert line.startswith("default frames (per-frame kernels): ")
    assert "left_hand_palm_link" in line and "imu" not in line


# ---------------------------------------------------------------------- --floating-base hint
def test_a_hand_gets_no_floating_base_hint():
    assert mobile_base_hint(robot(ALLEGRO)) is None  # fingers point up from the palm


@pytest.mark.parametrize("path, legs", [(SOLO12, 4), (G1_HANDS, 2), (TALOS, 2)])
def test_legged_robots_on_a_fixed_base_get_the_hint(path, legs):
    hint = mobile_base_hint(robot(path))
    assert hint is not None and f"{legs} limbs" in hint and "--floating-base" in hint
    assert mobile_base_hint(robot(path, floating_base=True)) is None


def test_wheeled_and_torso_robots_get_no_hint():
    assert mobile_base_hint(robot("tiago_description/robots/tiago_dual.urdf")) is None
    assert mobile_base_hint(robot("baxter_description/urdf/baxter.urdf")) is None
    # an upper body whose arms hang down: its head rises further than its hands hang
    assert mobile_base_hint(robot("alex_description/urdf/alex_sake_hands.urdf")) is None


def test_a_deep_branched_tree_needs_no_recursion():
    """Two 1,100-body arms on one hub (deeper than Python's recursion limit): the ends are
    the two arm tips, the arms reach sideways (no legs to stand on), no RecursionError."""
    from symgen.io.builder import ModelBuilder

    b = ModelBuilder("deep", root="world")
    b.body("hub", mass=1.0, com=(0, 0, 0), inertia=(0.1, 0.1, 0.1))
    b.joint("j_hub", "revolute", "world", "hub", xyz=(0, 0, 0), rpy=(0, 0, 0), axis=(0, 0, 1))
    for arm in "ab":
        parent = "hub"
        for i in range(1100):
            name = f"{arm}{i}"
            b.body(name, mass=1.0, com=(0, 0, 0), inertia=(0.1, 0.1, 0.1))
            b.joint(f"j{name}", "revolute", parent, name, xyz=(0.1, 0, 0), rpy=(0, 0, 0),
                    axis=(0, 0, 1))
            parent = name
    model = b.build()
    assert default_frames(model) == ("a1099", "b1099")
    assert mobile_base_hint(model) is None
