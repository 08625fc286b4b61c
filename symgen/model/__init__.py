"""Model description: bodies, joints, frames, parameters, validation (docs/model-format.md)."""

from symgen.errors import ModelError, SourceRef, SymgenError
from symgen.model.elements import Body, Coupling, Frame, Joint, JointType, Limits, LockedJoint
from symgen.model.model import Model
from symgen.model.scalars import Parameter
from symgen.model.transform import Transform

__all__ = [
    "Body",
    "Coupling",
    "Frame",
    "Joint",
    "JointType",
    "Limits",
    "LockedJoint",
    "Model",
    "ModelError",
    "Parameter",
    "SourceRef",
    "SymgenError",
    "Transform",
]
