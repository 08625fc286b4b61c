"""Joint types as the model knows them: the enum, and each type's coordinate layout
(docs/conventions.md, joint table): ``nq``/``nv``, the names of the q entries, which model
values the type reads (axis, second axis, pitch), whether its last four q entries are a unit
quaternion, and how it may sit in a planar (xy) mechanism. The symbolic side of each type
(hinge-tree steps, q ⊕ v·dt, natural coordinates) is declared in :mod:`symgen.joints`, the
numpy side in :mod:`symgen.reference.joints`; X_J(q) on model scalars, used to lock joints,
in :mod:`symgen.model.joint_motion`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


@dataclass(frozen=True)
class JointLayout:
    """The coordinates of one joint type. ``plane_axis``: "normal" (axis along z), "in-plane"
    (axis in the xy plane), "any", None (not allowed in a planar mechanism)."""

    nq: int
    nv: int
    coordinate_names: tuple[str, ...] = ("",)
    uses_axis: bool = True
    uses_axis2: bool = False
    uses_pitch: bool = False
    quaternion: bool = False
    plane_axis: str | None = None

    @property
    def neutral(self) -> tuple[float, ...]:
        """The neutral configuration: zeros, the identity quaternion (0, 0, 0, 1) last."""
        if self.quaternion:
            return (0.0,) * (self.nq - 4) + (0.0, 0.0, 0.0, 1.0)
        return (0.0,) * self.nq


class JointType(str, Enum):
    """Joint types; the q/v layout of each is docs/conventions.md's joint table."""

    REVOLUTE = "revolute"
    CONTINUOUS = "continuous"
    PRISMATIC = "prismatic"
    HELICAL = "helical"
    CYLINDRICAL = "cylindrical"
    UNIVERSAL = "universal"
    PLANAR = "planar"
    SPHERICAL = "spherical"
    FREE = "free"
    FIXED = "fixed"

    @property
    def layout(self) -> JointLayout:
        """This type's coordinate layout (:data:`LAYOUTS`)."""
        return LAYOUTS[self]

    #: The layout's ``nq``, ``nv`` and the suffixes naming each entry of the joint's q.
    nq = property(lambda self: self.layout.nq)
    nv = property(lambda self: self.layout.nv)
    coordinate_names = property(lambda self: self.layout.coordinate_names)

    @classmethod
    def parse(cls, name: str) -> JointType | None:
        """The joint type called ``name`` (case-insensitive), or None when there is none."""
        try:
            return cls(name.strip().lower())
        except ValueError:
            return None


#: The coordinate layout of every joint type (Featherstone 2008, Table 4.1; quaternions
#: (x, y, z, w), scalar last).
LAYOUTS: dict[JointType, JointLayout] = {
    JointType.REVOLUTE: JointLayout(1, 1, plane_axis="normal"),
    JointType.CONTINUOUS: JointLayout(1, 1, plane_axis="normal"),
    JointType.PRISMATIC: JointLayout(1, 1, plane_axis="in-plane"),
    JointType.HELICAL: JointLayout(1, 1, uses_pitch=True),
    JointType.CYLINDRICAL: JointLayout(2, 2, ("d", "theta")),
    JointType.UNIVERSAL: JointLayout(2, 2, ("q1", "q2"), uses_axis2=True),
    JointType.PLANAR: JointLayout(3, 3, ("x", "y", "theta"), plane_axis="normal"),
    JointType.SPHERICAL: JointLayout(4, 3, ("qx", "qy", "qz", "qw"), uses_axis=False,
                                     quaternion=True),
    JointType.FREE: JointLayout(7, 6, ("x", "y", "z", "qx", "qy", "qz", "qw"),
                                uses_axis=False, quaternion=True),
    JointType.FIXED: JointLayout(0, 0, (), uses_axis=False, plane_axis="any"),
}

__all__ = ["LAYOUTS", "JointLayout", "JointType"]
