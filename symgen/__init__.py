"""symgen: specialized closed-form C dynamics kernels for multibody systems.

The public API (``symgen.load``, ``symgen.generate``, ``symgen.compile_kernels``,
``symgen.simulate``, ...) is imported on first use (PEP 562): ``import symgen`` and
``symgen --version`` stay fast, while the first attribute of the API imports the whole
pipeline once (sympy, the kernel catalogues), as an eager import did.
"""

from __future__ import annotations

import importlib
import sys
import types

from symgen.version import __version__

#: The public names and the module each comes from ("" : the name is a submodule).
_API = {
    "Trajectory": "symgen.simulation",
    "simulate": "symgen.simulation",
    "from_mujoco": "symgen.io.mjcf_state",
    "to_mujoco": "symgen.io.mjcf_state",
    "Body": "symgen.model",
    "Frame": "symgen.model",
    "Joint": "symgen.model",
    "JointType": "symgen.model",
    "Model": "symgen.model",
    "Parameter": "symgen.model",
    "KernelSet": "symgen.kernel_set",
    "ModelBuilder": "symgen.io.builder",
    "ModelError": "symgen.errors",
    "ModelWarning": "symgen.errors",
    "SymgenError": "symgen.errors",
    "Options": "symgen.generate",
    "generate": "symgen.generate",
    "compile_kernels": "symgen.build.compiler",
    "emit_c": "symgen.backends.c99.emit",
    "write_c": "symgen.backends.c99.emit",
    "load": "symgen.io",
    "reference": "",
}


def _load_api() -> None:
    """Import every module of :data:`_API` (the pipeline and its kernel catalogues) and
    bind the public names."""
    for name, module in _API.items():
        if name not in globals():
            value = importlib.import_module(module or f"symgen.{name}")
            globals()[name] = getattr(value, name) if module else value


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    _load_api()
    if name in globals():
        return globals()[name]
    try:  # a submodule not imported yet (symgen.natural, symgen.registry, ...)
        return importlib.import_module(f"symgen.{name}")
    except ModuleNotFoundError:
        raise AttributeError(f"module 'symgen' has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))


class _Package(types.ModuleType):
    """The package module: importing the submodule ``symgen.generate`` must not replace the
    function ``symgen.generate`` (the import system binds a submodule to its package's
    attribute of the same name)."""

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, types.ModuleType) and _API.get(name):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__all__ = [*_API, "__version__"]
