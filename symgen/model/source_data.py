"""What a model file says beyond the dynamics: motors, named states, the file's own
coordinates, and what the reader left out.

These come from formats richer than URDF (MJCF's ``<actuator>``, ``<keyframe>`` and
``qpos``/``qvel`` layout). They do not change any kernel: the motors name the actuated joints
of ``constrained_inverse_dynamics``; the rest is metadata for the user (``symgen info``) and
for mapping states between the file's coordinates and symgen's (:mod:`symgen.io.mjcf_state`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symgen.errors import SourceRef


@dataclass(frozen=True)
class Motor:
    """A motor driving the 1-DOF joint ``joint`` through a transmission of ratio ``gear``:
    joint force = gear × motor input (MJCF ``<motor joint gear>``)."""

    name: str
    joint: str
    gear: float = 1.0
    source: SourceRef | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Keyframe:
    """A named state in the file's own coordinates (MJCF ``<key qpos qvel>``)."""

    name: str
    qpos: tuple[float, ...]
    qvel: tuple[float, ...]


@dataclass(frozen=True)
class FileJoint:
    """Where one joint's coordinates sit in the file's state vectors: ``kind`` is the file's
    joint type (``hinge``, ``slide``, ``ball``, ``free``), ``zero`` the file value at which
    symgen's coordinate is zero (MJCF ``qpos0``: a hinge's ``ref``)."""

    joint: str
    kind: str
    qpos_address: int
    dof_address: int
    zero: float = 0.0


@dataclass(frozen=True)
class FileCoordinates:
    """The file's state layout (``convention`` names it, e.g. ``"mujoco"``): lengths of its
    position and velocity vectors, its reference position (MJCF ``qpos0``) and every joint."""

    convention: str
    nq: int
    nv: int
    reference: tuple[float, ...]
    joints: tuple[FileJoint, ...]

    def joint(self, name: str) -> FileJoint | None:
        for j in self.joints:
            if j.joint == name:
                return j
        return None


__all__ = ["FileCoordinates", "FileJoint", "Keyframe", "Motor"]
