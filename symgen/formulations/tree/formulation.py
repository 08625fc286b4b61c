"""The tree formulation's driver for :func:`symgen.generate.generate`: the context of one
model, the programs of each kernel (per frame, partitioned or not, by each variant and
derivation method: the cheapest is kept by generate) and the size macros of the kernel set.
The kernels it derives are the catalogue's (:mod:`symgen.formulations.tree`)."""

from __future__ import annotations

import warnings

from symgen.errors import SymgenError
from symgen.formulations.tree.context import FORMULATION, TreeContext, TreeTarget
from symgen.formulations.tree.hinges import has_partitionable
from symgen.formulations.tree.options import Options, check_frames, default_frames
from symgen.ir.program import Program
from symgen.kernel_set import KernelSet
from symgen.model import Model
from symgen.registry import Kernel, get, register_formulation

#: Kernels derived by the articulated-body recursion only: a model with couplings (several
#: hinges on one DOF) has none of them
#: (:func:`symgen.formulations.articulated.articulated_factors`).
ARTICULATED = frozenset({"forward_dynamics_aba"})


class TreeFormulation:
    """The tree formulation for :func:`symgen.generate.generate` (options:
    :class:`symgen.generate.Options`). A per-frame kernel gives one program per frame; a
    kernel is derived with and without partitioning multi-DOF joints (``partition``), and a
    kernel with variants by each variant the option named like the kernel allows
    (``forward_dynamics="auto"``: both; ``"aba"``: ``forward_dynamics_aba``)."""

    name = FORMULATION

    def default_options(self) -> Options:
        return Options()

    def check_options(self, options: Options) -> None:
        options.check()

    def context(self, model: Model, options: Options) -> TreeContext:
        frames = tuple(options.frames) if options.frames is not None else default_frames(model)
        check_frames(model, frames)
        frames = tuple(dict.fromkeys(frames))  # a frame named twice gives one program
        return TreeContext(model, tuple(model.body_names) + tuple(model.frame_names),
                           options.jacobian_reference, options.external_forces, options.snap,
                           frames, actuated=options.actuated, baumgarte=options.baumgarte,
                           independent=options.independent, step=options.step)

    def frames(self, kernel: Kernel, context: TreeContext) -> list[str | None]:
        if kernel.loops and not context.model.loop_joints:
            return []  # the loop-closure kernels of a model without loop joints: none
        if kernel.embedding and not (context.model.loop_joints or context.model.coupled):
            return []  # nothing to embed
        if kernel.name in ARTICULATED and context.model.coupled:
            return []  # the articulated-body recursion needs one hinge per DOF
        return list(context.frames) if kernel.per_frame else [None]

    def candidates(self, kernel: Kernel, context: TreeContext, name: str, frame: str | None,
                   options: Options) -> list[tuple[str, Program]]:
        model = context.model
        partitions = [False]
        if kernel.uses_tree and has_partitionable(model):
            partitions = {"auto": [False, True], "always": [True], "never": [False]}[
                options.partition]
        methods = [kernel]
        variants = kernel.loop_variants if kernel.loop_variants and model.loop_joints \
            else kernel.variants
        if variants:
            choice = getattr(options, kernel.name, "auto")
            methods = [get(v) for v in variants
                       if choice == "auto" or v == f"{kernel.name}_{choice}"]
            if not methods:
                known = ", ".join(v.removeprefix(f"{kernel.name}_") for v in variants)
                raise SymgenError(f"{kernel.name}='{choice}' does not apply to model "
                                  f"{model.name!r} (choose auto or one of {known})")
            if model.coupled:  # the articulated-body recursion needs one hinge per DOF
                methods = [m for m in methods if m.name not in ARTICULATED]
                if not methods:
                    raise SymgenError(f"model {model.name!r} has coupled joints: "
                                      f"{kernel.name}='{choice}' does not apply to them "
                                      "(use 'ltdl' or 'auto')")
        out = []
        failures = []
        for method in methods:
            for ways in (_ways(method, options), method.fallbacks):
                derived = len(out)
                for way in ways:
                    for partition in partitions:
                        target = TreeTarget(name, frame, partition, way)
                        try:
                            program = method.derive(context, target, method)
                        except SymgenError as exc:  # e.g. no embedding: the other methods
                            failures.append(exc)
                            continue
                        label = _label(kernel.name, method.name, partition,
                                       len(partitions) > 1 or partition, way)
                        out.append((label, program))
                if len(out) > derived:  # the fallbacks only when no method applied
                    break
        if not out and failures:
            raise failures[0]
        return out

    def finish(self, kernel_set: KernelSet, context: TreeContext) -> None:
        model = context.model
        without = sorted({k for k in kernel_set.kernel_of.values() if get(k).without_elements
                          # with loop joints forward_dynamics closes them, elements included
                          and not (get(k).loop_variants and model.loop_joints)})
        if model.force_elements and without:
            names = ", ".join(e.name for e in model.force_elements)
            warnings.warn(f"model {model.name!r}: {', '.join(without)} leave out the force "
                          f"elements ({names}): the spanning tree's dynamics take joint "
                          "torques as inputs; constrained_forward_dynamics, "
                          "constrained_inverse_dynamics and the natural-coordinate kernels "
                          "include them; element_forces gives their Q", stacklevel=3)
        if model.parameters:  # params (model.parameter_names order) default to the declared
            kernel_set.input_defaults["params"] = tuple(float(p.default)
                                                        for p in model.parameters)
        kernel_set.sizes = [
            ("NQ", model.nq, "length of q"),
            ("NV", model.nv, "length of v, a, tau"),
            ("NBODIES", model.nbodies, "moving bodies (rows of f_ext)"),
            ("NPARAMS", len(model.parameters), "runtime parameters"),
        ]


def _ways(kernel: Kernel, options: Options) -> tuple[str, ...]:
    """The derivation methods of ``kernel`` to try: the one its ``method_option`` names,
    else all of them."""
    ways = kernel.methods or ("",)
    choice = getattr(options, kernel.method_option, None) if kernel.method_option else None
    return (choice,) if choice in ways else ways


def _label(kernel: str, method: str, partition: bool, mention_partition: bool,
           way: str = "") -> str:
    parts = []
    if method != kernel:
        parts.append(method.removeprefix(f"{kernel}_"))
    if way:
        parts.append(way)
    if mention_partition:
        parts.append("partitioned" if partition else "unpartitioned")
    return ", ".join(parts)


register_formulation(TreeFormulation())

__all__ = ["ARTICULATED", "TreeFormulation"]
