"""The URDF reader over example-robot-data: five robots' joints and inertias equal those
of Pinocchio's URDF parser, and every URDF of the package loads or fails with a clear
ModelError."""

from __future__ import annotations

import numpy as np
import pytest

from symgen.errors import ModelError
from symgen.io import load
from symgen.io.robots import robot_urdf


def _arr(x) -> np.ndarray:
    return np.array(x, dtype=float)


@pytest.mark.parametrize("robot", ["panda", "ur5", "xarm7", "solo12", "talos"])
@pytest.mark.parametrize("floating", [False, True])
def test_matches_pinocchio_urdf_parser(robot, floating):
    """Joint order, joint placements and (lumped) inertias equal Pinocchio's."""
    pin = pytest.importorskip("pinocchio")
    path = robot_urdf(robot)
    model = load(path, floating_base=floating)
    if floating:
        pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    else:
        pm = pin.buildModelFromUrdf(str(path))
    assert list(pm.names)[1:] == model.joint_names
    for i, (body, joint) in enumerate(zip(model.bodies, model.joints, strict=True), start=1):
        inertia = pm.inertias[i]
        assert inertia.mass == pytest.approx(float(body.mass), abs=1e-12)
        np.testing.assert_allclose(inertia.lever, _arr(body.com), atol=1e-12)
        np.testing.assert_allclose(inertia.inertia, _arr(body.inertia), atol=1e-12)
        placement = pm.jointPlacements[i]
        np.testing.assert_allclose(placement.rotation, _arr(joint.placement.rotation), atol=1e-12)
        np.testing.assert_allclose(
            placement.translation, _arr(joint.placement.translation), atol=1e-12
        )


@pytest.mark.filterwarnings("ignore::symgen.errors.ModelWarning")  # counted by the test below
def test_sweep_of_example_robot_data_raises_only_model_errors():
    """Every URDF shipped by example-robot-data loads or fails with a clear ModelError."""
    from symgen.io.robots import all_urdfs

    loaded = 0
    for path in all_urdfs():
        for floating in (False, True):
            try:
                load(path, floating_base=floating)
                loaded += 1
            except ModelError as exc:
                assert str(exc).startswith(str(path)), exc
    assert loaded >= 80


def _suspension_links(*sides: str) -> list[str]:
    """TIAGo's <kinematic> and <gravity> (SDFormat link elements) left in its suspension
    links, outside <gazebo>."""
    return [f'unknown element <{tag}> in <link name="suspension_{side}_link">'
            for side in sides for tag in ("kinematic", "gravity")]


#: The only non-standard names in example-robot-data's URDFs (file -> warnings, without the
#: file:line): elements misplaced or of no tool that reads URDF. The extensions of tools
#: (Franka's friction attributes, PyBullet's <contact>, ...) are known and do not warn.
EXPECTED_WARNINGS = {
    "anymal_c_simple_description/urdf/anymal.urdf": [
        'unknown element <self_filter> in <link name="base">',  # robot_self_filter's shape
    ],
    "so_arm_description/urdf/so101.urdf": [  # a link has no <origin>: a mistake in the file
        'unknown element <origin> in <link name="gripper_frame_link">',
    ],
    "tiago_description/robots/tiago_dual.urdf": _suspension_links("right", "left"),
    "tiago_pro_description/robots/tiago_pro.urdf": [
        *_suspension_links("front_right", "front_left", "rear_right", "rear_left"),
        *[f'unknown element <surface> in <link name="wheel_{side}_link">'  # SDFormat's too
          for side in ("front_right", "front_left", "rear_right", "rear_left")],
    ],
}


def test_example_robot_data_warns_only_about_its_non_standard_tags():
    """Loading every URDF of example-robot-data warns exactly about the names above (the
    files that fail, e.g. for an invalid inertia, are checked before they fail)."""
    import warnings
    from contextlib import suppress

    from symgen.errors import ModelWarning, SymgenError
    from symgen.io.robots import all_urdfs, example_robot_data_dir

    try:
        robots = example_robot_data_dir()
    except SymgenError:
        pytest.skip("example-robot-data is not installed")
    found: dict[str, list[str]] = {}
    for path in all_urdfs():
        with warnings.catch_warnings(record=True) as caught, suppress(ModelError):
            warnings.simplefilter("always")
            load(path, couplings=False)
        prefix = f"{path}:"
        for w in caught:
            if issubclass(w.category, ModelWarning):
                text = str(w.message)
                assert text.startswith(prefix), text  # file:line, then the message
                message = text.split(": ", 1)[1]
                found.setdefault(str(path.relative_to(robots)), []).append(message)
    assert {k: sorted(v) for k, v in found.items()} == {
        k: sorted(v) for k, v in EXPECTED_WARNINGS.items()
    }
