"""Locating the robot models shipped by the PyPI package ``example-robot-data``."""

from __future__ import annotations

import sysconfig
from pathlib import Path

from .model import SymgenError

#: Short names of the robots the tests and examples use, and their URDF path in the package.
KNOWN_ROBOTS = {
    "panda": "panda_description/urdf/panda.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "xarm7": "xarm_description/urdf/xarm7.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
    "talos": "talos_data/robots/talos_reduced.urdf",
    "double_pendulum": "double_pendulum_description/urdf/double_pendulum.urdf",
}


def example_robot_data_dir() -> Path:
    """The ``robots`` folder of example-robot-data (cmeel layout), or a clear error."""
    roots = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    for root in roots:
        candidate = Path(root) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if candidate.is_dir():
            return candidate
    raise SymgenError(
        "example-robot-data is not installed (pip install example-robot-data, or the "
        "project's 'test' extra)"
    )


def robot_urdf(name: str) -> Path:
    """Path of a known robot's URDF (see :data:`KNOWN_ROBOTS`) inside example-robot-data."""
    if name not in KNOWN_ROBOTS:
        raise SymgenError(f"unknown robot {name!r} (known: {', '.join(KNOWN_ROBOTS)})")
    return example_robot_data_dir() / KNOWN_ROBOTS[name]


def all_urdfs() -> list[Path]:
    """Every URDF file shipped in example-robot-data's robots folder, sorted."""
    return sorted(example_robot_data_dir().rglob("*.urdf"))
