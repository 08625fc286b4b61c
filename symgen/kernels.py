"""The tree formulation's kernel catalogue, as the registry holds it
(:mod:`symgen.registry`; declared in :mod:`symgen.formulations.tree`).

``KERNELS`` maps each tree kernel's name to its :class:`~symgen.registry.Kernel`;
``DEFAULT_KERNELS`` are those :func:`symgen.generate` builds when none are named (the two
forward-dynamics variants are available by name; ``forward_dynamics`` is the cheaper).
"""

from __future__ import annotations

from symgen.registry import Kernel, kernels_of

KERNELS: dict[str, Kernel] = kernels_of("tree")
DEFAULT_KERNELS = tuple(name for name, k in KERNELS.items() if k.default)

__all__ = ["DEFAULT_KERNELS", "KERNELS"]
