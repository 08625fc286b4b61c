"""One tree kernel's program, derived outside :func:`symgen.generate.generate`: the entry
point for code that needs a single unoptimised program of the tree formulation (the natural
modellers' numeric conversions, tests). The kernels themselves are declared in
:mod:`symgen.formulations.tree`."""

from __future__ import annotations

from symgen.formulations.tree.context import TreeContext, TreeTarget
from symgen.formulations.tree.hinges import SNAP_TOLERANCE
from symgen.ir.program import Program
from symgen.model import Model
from symgen.registry import get


def build_kernel(
    model: Model,
    kernel: str,
    *,
    program_name: str | None = None,
    partition: bool = False,
    frame: str | None = None,
    reference: str = "local_world_aligned",
    external_forces: bool = False,
    pose_names: tuple[str, ...] = (),
    snap: float = SNAP_TOLERANCE,
) -> Program:
    """The unoptimised program of tree kernel ``kernel`` for ``model``.

    ``frame`` names the frame of a per-frame kernel; ``pose_names`` the bodies and frames
    forward_kinematics reports; ``external_forces`` adds the ``f_ext`` input to the kernels
    that take it; ``partition`` splits multi-DOF joints into 1-DOF sub-hinges.
    """
    spec = get(kernel)
    context = TreeContext(model, pose_names, reference, external_forces, snap)
    return spec.derive(context, TreeTarget(program_name or kernel, frame, partition), spec)


__all__ = ["build_kernel"]
