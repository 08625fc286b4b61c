"""The elements of a model: bodies, joints, frames, couplings, joint limits and force
elements (springs, dampers, actuators).

Conventions (docs/conventions.md): a body's frame sits at its inboard joint; a joint's
``placement`` is the pose of the joint frame in the parent body frame at q = 0, and the child
body frame coincides with the joint frame at q = 0; axes are expressed in the joint frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symgen.errors import SourceRef
from symgen.model.joint_types import JointType
from symgen.model.scalars import Mat3, Scalar, Vec3
from symgen.model.transform import IDENTITY3, ZERO3, Transform  # noqa: F401


@dataclass(frozen=True)
class Limits:
    """Joint limits, kept as data (the dynamics kernels do not enforce them)."""

    lower: Scalar | None = None
    upper: Scalar | None = None
    velocity: Scalar | None = None
    effort: Scalar | None = None


@dataclass(frozen=True)
class Body:
    """A rigid body: mass, centre of mass (body frame) and rotational inertia about the
    centre of mass in body-frame axes (symmetric 3x3)."""

    name: str
    mass: Scalar = 0.0
    com: Vec3 = ZERO3
    inertia: Mat3 = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    source: SourceRef | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Joint:
    """A joint moving ``child`` relative to ``parent``.

    ``axis`` is the motion axis (revolute, continuous, prismatic, helical, cylindrical), the
    first axis of a universal joint, or the plane normal of a planar joint; ``axis2`` is the
    second axis of a universal joint (in the frame after the first rotation); ``pitch`` is the
    helical lead in metres per radian. ``child_placement`` is used by loop joints only: the
    pose of the joint frame in the child body frame (a tree joint's child frame *is* its joint
    frame). ``armature`` is the rotor inertia reflected on each of the joint's velocity
    coordinates (``nv`` values, added to the diagonal of M as Pinocchio's ``model.armature``
    and MuJoCo's ``armature``); empty means none. ``cut`` (loop joints only): "declared"
    keeps the loop cut here; "minimal" lets the model move the cut to the joint of the loop
    with the fewest independent constraints (:func:`symgen.loops.minimal_cuts`).
    """

    name: str
    type: JointType
    parent: str
    child: str
    placement: Transform = Transform()
    axis: Vec3 = (0.0, 0.0, 1.0)
    axis2: Vec3 = (0.0, 1.0, 0.0)
    pitch: Scalar = 0.0
    limits: Limits | None = None
    child_placement: Transform = Transform()
    source: SourceRef | None = field(default=None, compare=False)
    armature: tuple[Scalar, ...] = ()
    cut: str = "declared"

    @property
    def nq(self) -> int:
        return self.type.nq

    @property
    def nv(self) -> int:
        return self.type.nv

    @property
    def armature_values(self) -> tuple[Scalar, ...]:
        """The armature of each velocity coordinate (``nv`` values, zeros when none)."""
        return self.armature or (0.0,) * self.nv


@dataclass(frozen=True)
class Frame:
    """A named frame fixed on a body (end effector, sensor, merged link).

    ``link`` is True for a body of the description merged in by a fixed joint (a URDF link),
    False for a declared frame; ``leaf`` is True when nothing of the description hangs from
    it (no joint, link or frame attached): an end of the source tree such as a foot, a tool
    flange or a TCP. ``parent`` is the link (or body) of the description it is fixed to
    ("" when unknown) and ``joints`` the moving joints of the description that hang from it
    (a palm's fingers): where a link sits in the fixed part of the tree.
    :func:`symgen.generate.default_frames` uses them (:mod:`symgen.model.limbs`).
    """

    name: str
    body: str
    placement: Transform = Transform()
    source: SourceRef | None = field(default=None, compare=False)
    link: bool = False
    leaf: bool = True
    parent: str = ""
    joints: tuple[str, ...] = ()


@dataclass(frozen=True)
class Coupling:
    """A gear or mimic coupling ``q[joint] = ratio * q[master] + offset`` (kept as data)."""

    joint: str
    master: str
    ratio: Scalar = 1.0
    offset: Scalar = 0.0
    source: SourceRef | None = field(default=None, compare=False)


@dataclass(frozen=True)
class LockedJoint:
    """A joint of the description held at ``values`` (its ``nq`` coordinates): the model
    treats it as fixed, with placement ``placement ∘ X_J(values)``, and lumps what it carried
    (Pinocchio's ``buildReducedModel``). ``master`` names the joint whose lock implied this one
    through a coupling (None when locked directly)."""

    name: str
    values: tuple[Scalar, ...]
    master: str | None = None
    source: SourceRef | None = field(default=None, compare=False)


@dataclass(frozen=True)
class PointSpring:
    """A linear spring-damper between ``point_a`` fixed on ``body_a`` and ``point_b`` fixed on
    ``body_b`` (body-frame coordinates; a body or the root): a tension k(L − L₀) + c L̇
    along the line joining them (García de Jalón & Bayo 1994, eq. 4.102-4.107).
    ``rest_length`` None means L₀ = the distance at the zero (assembled) configuration."""

    name: str
    body_a: str
    point_a: Vec3
    body_b: str
    point_b: Vec3
    stiffness: Scalar
    damping: Scalar = 0.0
    rest_length: Scalar | None = None
    source: SourceRef | None = field(default=None, compare=False)


@dataclass(frozen=True)
class JointSpring:
    """A linear spring-damper on a 1-DOF joint (tree or loop joint): generalized force
    −k(θ − rest) − c θ̇ on the joint coordinate θ (rad or m; θ = 0 at the zero
    configuration)."""

    name: str
    joint: str
    stiffness: Scalar
    damping: Scalar = 0.0
    rest: Scalar = 0.0
    source: SourceRef | None = field(default=None, compare=False)


@dataclass(frozen=True)
class JointActuator:
    """A constant force (prismatic) or torque (revolute, continuous) on a 1-DOF joint (tree
    or loop joint), N or N·m, acting along the joint coordinate."""

    name: str
    joint: str
    force: Scalar
    source: SourceRef | None = field(default=None, compare=False)


#: A force element of a model (``Model.force_elements``).
ForceElement = PointSpring | JointSpring | JointActuator


__all__ = [
    "Body",
    "Coupling",
    "ForceElement",
    "Frame",
    "IDENTITY3",
    "Joint",
    "JointActuator",
    "JointSpring",
    "JointType",
    "Limits",
    "LockedJoint",
    "PointSpring",
]
