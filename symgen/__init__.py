"""symgen: specialized closed-form C dynamics kernels for multibody systems."""

from symgen import reference
from symgen.generate import KernelSet, Options, generate
from symgen.io import load
from symgen.model import (
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
from symgen.version import __version__

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
