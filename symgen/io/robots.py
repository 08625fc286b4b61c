"""Robot models for tests, examples and benchmarks: the URDFs shipped by the PyPI package
``example-robot-data`` (which :func:`symgen.load` also accepts by name, :func:`find_robot`),
and synthetic n-link spatial chains."""

from __future__ import annotations

import sysconfig
from pathlib import Path

from symgen.errors import SymgenError
from symgen.io.builder import ModelBuilder
from symgen.model import Model

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


def find_robot(name: str) -> Path | None:
    """The URDF a robot name stands for, where example-robot-data is installed: a short
    name of :data:`KNOWN_ROBOTS` (``panda``), a URDF's file name without ``.urdf``
    (``talos_full_v2``, ``g1_29dof_rev_1_0``) or its path below the robots folder
    (``anymal_b_simple_description/robots/anymal``); None when the package is missing or
    no file matches; a one-line error when several do."""
    if not name or any(c in name for c in "\\:") or name.endswith((".urdf", ".xml", ".sdf",
                                                                  ".yaml", ".yml")):
        return None
    try:
        root = example_robot_data_dir()
    except SymgenError:
        return None
    if name in KNOWN_ROBOTS:
        return root / KNOWN_ROBOTS[name]
    matches = [p for p in all_urdfs() if p.stem == name
               or p.relative_to(root).with_suffix("").as_posix() == name]
    if len(matches) > 1:
        choices = ", ".join(p.relative_to(root).with_suffix("").as_posix() for p in matches)
        raise SymgenError(f"robot name {name!r} is ambiguous in example-robot-data: "
                          f"{choices}")
    return matches[0] if matches else None


def robot_names() -> list[str]:
    """The names :func:`find_robot` accepts (short names, then the file names), or [] when
    example-robot-data is not installed."""
    try:
        stems = sorted({p.stem for p in all_urdfs()})
    except SymgenError:
        return []
    return [*KNOWN_ROBOTS, *(s for s in stems if s not in KNOWN_ROBOTS)]


# ---------------------------------------------------------------- synthetic chains
# n-link spatial chains for scaling tests and benchmarks: every joint revolute, axes cycling
# z, y, x; joint 0 at the root's origin, joint i > 0 at xyz (0.1, 0.05, 0.5) in its parent
# link, rpy 0. All links identical: mass 1 kg, centre of mass (0.02, 0.03, 0.25) and a full
# (non-diagonal) inertia about it, so that no product of inertia or COM coordinate folds
# away and the only sparsity left is the one a generic spatial chain has.

#: Joint axes of :func:`spatial_chain`, cycled along the chain.
CHAIN_AXES = ((0.0, 0.0, 1.0), (0.0, 1.0, 0.0), (1.0, 0.0, 0.0))
#: Placement of joint i > 0 in link i - 1.
CHAIN_OFFSET = (0.1, 0.05, 0.5)
CHAIN_MASS = 1.0
CHAIN_COM = (0.02, 0.03, 0.25)
CHAIN_INERTIA = ((0.03, 0.001, 0.002), (0.001, 0.03, 0.003), (0.002, 0.003, 0.01))


def spatial_chain(n: int) -> Model:
    """An ``n``-link serial chain ``world -> link0 -> ... -> link<n-1>`` of revolute joints
    ``j0 ... j<n-1>`` (axes z, y, x, z, ...), as described above."""
    if n < 1:
        raise ValueError(f"a chain needs at least one link, got n = {n}")
    b = ModelBuilder(f"chain{n}", root="world")
    for i in range(n):
        b.body(f"link{i}", mass=CHAIN_MASS, com=CHAIN_COM, inertia=CHAIN_INERTIA)
        parent = "world" if i == 0 else f"link{i - 1}"
        xyz = (0.0, 0.0, 0.0) if i == 0 else CHAIN_OFFSET
        b.joint(f"j{i}", "revolute", parent, f"link{i}", xyz=xyz, rpy=(0.0, 0.0, 0.0),
                axis=CHAIN_AXES[i % 3])
    return b.build()
