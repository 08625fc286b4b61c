"""Joint types: one extension point.

Each joint type is declared once, by a :class:`~symgen.joints.base.JointKind` subclass in
its own module here: its q/v dimensions and coordinate names, the model values it reads,
its neutral configuration, its symbolic hinge-tree steps (joint transform as a function of
the q atoms, motion subspace S, bias c_J, partition into 1-DOF sub-hinges), its symbolic
q ⊕ v·dt, and its natural-coordinate pairs. :data:`JOINT_TYPES` maps every
:class:`~symgen.model.JointType` to its declaration; the model (``JointType.nq``, ...), the
hinge tree, the integration kernel, the natural modellers and validation look it up there.

The numpy reference (:mod:`symgen.reference.joints`) is a second, *independent* table of
the same joint types, written from the textbook formulas: it never calls this package, and
this package never calls it, so that tests comparing the two check one against the other.
Adding a joint type: docs/joint-types.md.
"""

from __future__ import annotations

from symgen.joints.base import JointKind, Step
from symgen.joints.cylindrical import Cylindrical
from symgen.joints.fixed import Fixed
from symgen.joints.free import Free
from symgen.joints.helical import Helical
from symgen.joints.planar import Planar
from symgen.joints.prismatic import Prismatic
from symgen.joints.revolute import Continuous, Revolute
from symgen.joints.spherical import Spherical
from symgen.joints.universal import Universal
from symgen.model import JointType

#: The declaration of every joint type.
JOINT_TYPES: dict[JointType, JointKind] = {
    kind.type: kind
    for kind in (
        Revolute(),
        Continuous(),
        Prismatic(),
        Helical(),
        Cylindrical(),
        Universal(),
        Planar(),
        Spherical(),
        Free(),
        Fixed(),
    )
}


def joint_kind(t: JointType) -> JointKind:
    """The declaration of joint type ``t``."""
    return JOINT_TYPES[t]


__all__ = ["JOINT_TYPES", "JointKind", "Step", "joint_kind"]
