"""Unknown URDF elements and attributes (typos that would silently change the model) warn with
a did-you-mean at their file:line, or fail with ``strict=True``; a broken ``<mimic>`` fails
with a pointer to ``couplings=False``, which loads the file."""

from __future__ import annotations

import re
import warnings

import pytest
from model_files import line_of, write

from symgen.errors import ModelError, ModelWarning
from symgen.io import load

#: A two-link arm; the tests put one typo into its first link and joint.
ARM = """
<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <link name="base"/>
  <link name="l1">
    <inertial>
      <origin xyz="0 0 0.1"/><mass value="1"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>
    </inertial>
  </link>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.5" rpy="0 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="2"/>
  </joint>
  <link name="l2">
    <inertial>
      <mass value="2"/><inertia ixx="0.2" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.2"/>
    </inertial>
  </link>
  <joint name="j2" type="prismatic">
    <parent link="l1"/><child link="l2"/><axis xyz="0 0 1"/>
  </joint>
</robot>
"""


def model_warnings(path, **options) -> list[str]:
    """The ModelWarning messages of loading ``path``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load(path, **options)
    return [str(w.message) for w in caught if issubclass(w.category, ModelWarning)]


@pytest.mark.parametrize(
    ("old", "new", "needle", "message"),
    [
        ('<axis xyz="0 1 0"/>', '<axsi xyz="0 1 0"/>', "<axsi",
         'unknown element <axsi> in <joint name="j1">; did you mean <axis>?'),
        ('<origin xyz="0 0 0.5"', '<origin xzy="0 0 0.5"', 'xzy=',
         "unknown attribute 'xzy' of <origin> in <joint name=\"j1\">; did you mean 'xyz'?"),
        ("<inertial>", "<inertal>", "<inertal>",
         'unknown element <inertal> in <link name="l1">; did you mean <inertial>?'),
        ('izz="0.1"', 'iz="0.1"', 'iz="',
         "unknown attribute 'iz' of <inertia> in <inertial> in <link name=\"l1\">; "
         "did you mean 'izz'?"),
    ],
)
def test_a_typo_warns_at_its_line_and_strict_makes_it_an_error(tmp_path, old, new, needle,
                                                               message):
    text = ARM.replace(old, new, 1)
    if new == "<inertal>":
        text = text.replace("</inertial>", "</inertal>", 1)
    path = write(tmp_path, text, name="arm.urdf")
    where = f"{path}:{line_of(path, needle)}: "
    assert model_warnings(path) == [where + message]
    with pytest.raises(ModelError) as err:
        load(path, strict=True)
    assert str(err.value) == where + message


def test_what_the_typos_would_have_changed(tmp_path):
    """Why warn: each typo reads as a default, silently (a default axis, a zero origin, a
    massless link)."""
    axsi = write(tmp_path, ARM.replace("<axis xyz", "<axsi xyz"), name="a.urdf")
    with pytest.warns(ModelWarning):
        assert load(axsi).joints[0].axis == (1.0, 0.0, 0.0)  # URDF's default axis
    xzy = write(tmp_path, ARM.replace('<origin xyz="0 0 0.5"', '<origin xzy="0 0 0.5"'),
                name="b.urdf")
    with pytest.warns(ModelWarning):
        assert load(xzy).joints[0].placement.translation == (0.0, 0.0, 0.0)
    inertal = write(tmp_path, ARM.replace("<inertial>", "<inertal>", 1)
                    .replace("</inertial>", "</inertal>", 1), name="c.urdf")
    with pytest.warns(ModelWarning):
        assert load(inertal).bodies[0].mass == 0.0  # a link without <inertial>


def test_known_extensions_and_namespaced_names_do_not_warn(tmp_path):
    """Elements of the URDF specification at <robot> level, visual/collision content, tools'
    extensions and xacro: names are no typos."""
    extras = """
  <material name="grey"><color rgba="0.5 0.5 0.5 1"/></material>
  <transmission name="t1"><type>SimpleTransmission</type><joint name="j1"/></transmission>
  <gazebo reference="l1"><mu1>0.5</mu1></gazebo>
  <xacro:property name="pi" value="3.14"/>
  <link name="tool">
    <visual name="v"><origin xyz="0 0 0"/><geometry><box size="1 1 1"/></geometry>
      <material name="grey"/></visual>
    <collision><geometry><mesh filename="m.stl" scale="1 1 1"/></geometry></collision>
    <contact><lateral_friction value="1"/></contact>
  </link>
  <joint name="tool_joint" type="fixed" dont_collapse="true">
    <parent link="l1"/><child link="tool"/>
    <dynamics damping="0.1" friction="0.2"/>
    <calibration rising="0.0"/>
    <safety_controller soft_lower_limit="-1" soft_upper_limit="1" k_position="10"
                       k_velocity="1"/>
  </joint>
</robot>"""
    path = write(tmp_path, ARM.replace("</robot>", extras), name="arm.urdf")
    assert model_warnings(path) == []
    load(path, strict=True)


def test_unknown_element_at_robot_level(tmp_path):
    path = write(tmp_path, ARM.replace("</robot>", "<jiont name='j2'/>\n</robot>"),
                 name="arm.urdf")
    assert model_warnings(path) == [
        f'{path}:{line_of(path, "<jiont")}: unknown element <jiont> in <robot name="arm">; '
        "did you mean <joint>?"
    ]


BROKEN_MIMIC = """
<robot name="hand">
  <link name="palm"/>
  <link name="finger"><inertial><mass value="0.1"/>
    <inertia ixx="1e-5" ixy="0" ixz="0" iyy="1e-5" iyz="0" izz="1e-5"/></inertial></link>
  <link name="tip"><inertial><mass value="0.1"/>
    <inertia ixx="1e-5" ixy="0" ixz="0" iyy="1e-5" iyz="0" izz="1e-5"/></inertial></link>
  <joint name="finger_q1" type="revolute">
    <parent link="palm"/><child link="finger"/><axis xyz="0 0 1"/>
  </joint>
  <joint name="finger_q2" type="revolute">
    <parent link="finger"/><child link="tip"/><axis xyz="0 0 1"/>
    <mimic joint="q1" multiplier="1.05" offset="0.7"/>
  </joint>
</robot>
"""


def test_broken_mimic_says_how_to_load_the_file(tmp_path):
    path = write(tmp_path, BROKEN_MIMIC, name="hand.urdf")
    with pytest.raises(ModelError) as err:
        load(path)
    assert str(err.value) == (
        f"{path}:{line_of(path, '<mimic')}: joint 'finger_q2': <mimic> names mimic master "
        "'q1' that does not exist; load with --no-couplings (couplings=False) to ignore the "
        "<mimic> tags"
    )


def test_couplings_false_leaves_a_broken_mimic_unread(tmp_path):
    model = load(write(tmp_path, BROKEN_MIMIC, name="hand.urdf"), couplings=False)
    assert model.couplings == ()
    assert (model.nq, model.nv) == (2, 2)  # both fingers joints independent


def test_alex_psyonic_hands_loads_without_couplings():
    """example-robot-data's Alex names mimic masters that do not exist (index_q1, ...)."""
    from symgen.errors import SymgenError
    from symgen.io.robots import example_robot_data_dir

    try:
        path = example_robot_data_dir() / "alex_description/urdf/alex_psyonic_hands.urdf"
    except SymgenError:
        pytest.skip("example-robot-data is not installed")
    if not path.is_file():
        pytest.skip(f"{path.name} is not in this example-robot-data")
    with pytest.raises(ModelError, match=r"names mimic master 'index_q1' that does not exist"):
        load(path)
    model = load(path, couplings=False)
    movable = re.findall(r'<joint[^>]*type\s*=\s*"(?:revolute|continuous|prismatic)"',
                         path.read_text())
    assert model.couplings == () and model.nv == len(movable)  # every joint its own q
