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
