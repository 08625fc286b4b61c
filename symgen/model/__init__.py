"""Model description: bodies, joints, frames, parameters, validation (docs/model-format.md)."""

from .builder import ModelBuilder
from .elements import Body, Coupling, Frame, Joint, JointType, Limits, LockedJoint
from .errors import ModelError, SourceRef, SymgenError
from .model import Model
from .scalars import Parameter
from .transform import Transform

__all__ = [
    "Body",
    "Coupling",
    "Frame",
    "Joint",
    "JointType",
    "Limits",
    "LockedJoint",
    "Model",
    "ModelBuilder",
    "ModelError",
    "Parameter",
    "SourceRef",
    "SymgenError",
    "Transform",
]
