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

from ..model import JointType
from .base import JointKind, Step
from .cylindrical import Cylindrical
from .fixed import Fixed
from .free import Free
from .helical import Helical
from .planar import Planar
from .prismatic import Prismatic
from .revolute import Continuous, Revolute
from .spherical import Spherical
from .universal import Universal

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
