"""The tree formulation's kernel catalogue, as the registry holds it
(:mod:`symgen.registry`; declared in :mod:`symgen.formulations.tree_kernels`).

``KERNELS`` maps each tree kernel's name to its :class:`~symgen.registry.Kernel`;
``DEFAULT_KERNELS`` are those :func:`symgen.generate` builds when none are named (the two
forward-dynamics variants are available by name; ``forward_dynamics`` is the cheaper).
"""

from __future__ import annotations

from .formulations.tree_kernels import INPUT_DOCS, TreeContext, input_shape
from .model import Model
from .registry import Kernel, kernels_of

KernelSpec = Kernel
KERNELS: dict[str, Kernel] = kernels_of("tree")
DEFAULT_KERNELS = tuple(name for name, k in KERNELS.items() if k.default)


def output_shape(model: Model, kernel: str, n_poses: int = 0) -> tuple[int, ...]:
    """Shape of the (first) output of tree kernel ``kernel`` (``n_poses``: entries of
    forward_kinematics)."""
    context = TreeContext(model, ("",) * n_poses)
    return KERNELS[kernel].outputs[0].shape(context)


__all__ = ["DEFAULT_KERNELS", "INPUT_DOCS", "KERNELS", "KernelSpec", "input_shape",
           "output_shape"]
