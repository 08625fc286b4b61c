"""symgen: specialized closed-form C dynamics kernels for multibody systems."""

from . import reference
from .generate import KernelSet, Options, generate
from .io import load
from .model import (
    Body,
    Frame,
    Joint,
    JointType,
    Model,
    ModelBuilder,
    ModelError,
    Parameter,
    SymgenError,
)

__version__ = "0.1.0"

__all__ = [
    "Body",
    "Frame",
    "Joint",
    "KernelSet",
    "JointType",
    "Model",
    "ModelBuilder",
    "ModelError",
    "Options",
    "Parameter",
    "SymgenError",
    "__version__",
    "generate",
    "load",
    "reference",
]
