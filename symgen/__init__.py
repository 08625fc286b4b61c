"""symgen: specialized closed-form C dynamics kernels for multibody systems."""

from symgen import reference
from symgen.backends.c99.emit import emit_c, write_c
from symgen.build.compiler import compile_kernels
from symgen.errors import ModelError, SymgenError
from symgen.generate import Options, generate
from symgen.io import load
from symgen.io.builder import ModelBuilder
from symgen.io.mjcf_state import from_mujoco, to_mujoco
from symgen.kernel_set import KernelSet
from symgen.model import Body, Frame, Joint, JointType, Model, Parameter
from symgen.simulation import Trajectory, simulate
from symgen.version import __version__

__all__ = [
    "Trajectory",
    "simulate",
    "from_mujoco",
    "to_mujoco",
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
    "compile_kernels",
    "emit_c",
    "generate",
    "load",
    "reference",
    "write_c",
]
