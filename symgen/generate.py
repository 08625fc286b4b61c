"""Generation: derive and optimise the programs of a model's kernels.

``symgen.generate(model)`` returns a :class:`KernelSet`: one optimised
:class:`~symgen.ir.program.Program` per kernel (one per frame for the per-frame kernels), the
choices made on the way (partitioning, forward-dynamics method), op counts, and a Python
evaluator. The C emission (templates) and the compiled module come on top of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import symgen.registry as registry
from symgen.cnames import c_identifier
from symgen.errors import SymgenError
from symgen.formulations.tree.options import (
    FD_METHODS,
    PARTITION_CHOICES,
    Options,
    check_frames,
    default_frames,
)
from symgen.ir.counts import op_counts
from symgen.ir.optimize import optimize
from symgen.ir.program import ArraySpec, Program
from symgen.kernel_set import FormulationContext, KernelSet
from symgen.model import Model
from symgen.model.moving import require_moving_joint


def program_name(kernel: str, frame: str | None = None) -> str:
    """``kernel`` or, for a per-frame kernel, ``kernel_<frame>`` with the frame name made a
    C identifier fragment (:func:`symgen.cnames.c_identifier`). :func:`generate` adds a
    suffix when two programs would get the same name (see :func:`assign_program_names`)."""
    if frame is None:
        return kernel
    return f"{kernel}_{c_identifier(frame)}"


def assign_program_names(
    targets: Sequence[tuple[str, str | None]],
) -> dict[tuple[str, str | None], str]:
    """Distinct program names for ``(kernel, frame)`` targets.

    Each program also owns ``<name>_batch`` (its C batch wrapper). Kernels without a frame
    keep their catalogue names; then per-frame programs whose frame name is already a C
    identifier fragment, then the others, in the order given, get :func:`program_name`, or,
    when that (or its ``_batch``) is taken, the first free ``<name>_2``, ``<name>_3``, ...
    (frames ``tool_1`` and ``tool-1``: ``frame_jacobian_tool_1`` and
    ``frame_jacobian_tool_1_2``; ``tip`` and ``tip_batch``: ``frame_jacobian_tip`` and
    ``frame_jacobian_tip_batch_2``).
    """
    taken: set[str] = set()
    names: dict[tuple[str, str | None], str] = {}

    def exact(target: tuple[str, str | None]) -> bool:
        return target[1] is None or c_identifier(target[1]) == target[1]

    order = [t for t in targets if t[1] is None]
    order += [t for t in targets if t[1] is not None and exact(t)]
    order += [t for t in targets if not exact(t)]
    for target in order:
        base = program_name(*target)
        name, n = base, 2
        while name in taken or f"{name}_batch" in taken:
            name, n = f"{base}_{n}", n + 1
        taken |= {name, f"{name}_batch"}
        names[target] = name
    return names


def _formulation(names: list[str] | None, options: object | None) -> registry.Formulation:
    """The formulation of the kernels ``names``, else the one ``options`` belong to."""
    if names:
        found = registry.formulation_of(names)
        assert found is not None
        return registry.formulation(found)
    return registry.formulation_for(options)


def _check_outputs(kernel: registry.Kernel, program: Program,
                   context: FormulationContext) -> None:
    """The program has the outputs the registry declares, with their shapes."""
    declared = [(o.name, tuple(o.shape(context))) for o in kernel.outputs]
    built = [(s.name, s.shape) for s in program.output_specs]
    if declared != built:
        raise SymgenError(f"internal error: kernel {kernel.name} derived outputs {built}, "
                          f"the registry declares {declared}")


def empty_inputs(kernel: registry.Kernel, program: Program
                 ) -> tuple[tuple[int, ArraySpec], ...]:
    """The inputs ``kernel`` declares that ``program`` does not take, each with its position
    among the call's arguments (after the declared inputs before it) and a spec of shape
    ``(0,)``. A formulation leaves a declared input out of a program only when it has no
    element for the model (natural coordinates: ``tau`` of a mechanism without a 1-DOF
    joint): C99 has no zero-length arrays (:attr:`KernelSet.empty_inputs`)."""
    order = [s.name for s in program.inputs]
    missing = [name for name in kernel.inputs if name not in order]
    for name in missing:
        k = kernel.inputs.index(name)
        before = [n for n in kernel.inputs[:k] if n in order]
        order.insert(order.index(before[-1]) + 1 if before else 0, name)
    return tuple((order.index(name), ArraySpec(name, (0,), "no element for this model: "
                                               "not an argument of the C function"))
                 for name in missing)


def generate(
    model: Model,
    kernels: Iterable[str] | None = None,
    options: Options | None = None,
    progress: Callable[[str], None] | None = None,
    context: FormulationContext | None = None,
) -> KernelSet:
    """Derive and optimise the programs of ``kernels`` (registered names, all of one
    formulation; default: the default kernels of the formulation ``options`` belong to —
    :class:`Options` for the tree formulation, :class:`NaturalOptions` for natural
    coordinates).

    ``progress`` is called with one line per derived program. ``context`` replaces the
    formulation's own context of the model (e.g. a natural-coordinate model with springs,
    :class:`~symgen.formulations.natural.registration.NaturalContext`).
    """
    require_moving_joint(model)
    names = None if kernels is None else list(kernels)
    if names is not None:
        for k in names:
            registry.get(k)
    formulation = _formulation(names, options)
    options = options if options is not None else formulation.default_options()
    formulation.check_options(options)
    catalogue = registry.kernels_of(formulation.name)
    if names is None:
        names = [k for k, spec in catalogue.items() if spec.default]
    if context is None:
        context = formulation.context(model, options)
    out = KernelSet(model, options, formulation=formulation.name, context=context,
                    pose_names=getattr(context, "pose_names", ()))
    say = progress or (lambda _msg: None)
    targets = [
        (kernel, frame)
        for kernel in dict.fromkeys(names)
        for frame in formulation.frames(catalogue[kernel], context)
    ]
    program_names = assign_program_names(targets)
    renamed = [(program_names[t], t[1]) for t in targets
               if program_names[t] != program_name(*t)]
    if renamed:
        out.notes.append("Kernel names with a suffix (two names were equal as C identifiers):")
        out.notes += [f"  {name}: frame {frame!r}" for name, frame in renamed]
    use_cse = getattr(options, "cse", True)
    for i, (kernel, frame) in enumerate(targets, start=1):
        name = program_names[kernel, frame]
        say(f"[{i}/{len(targets)}] deriving {name}")
        best: tuple[int, Program, str] | None = None
        totals: dict[str, int] = {}
        for label, candidate in formulation.candidates(catalogue[kernel], context, name,
                                                       frame, options):
            program = optimize(candidate, use_cse=use_cse,
                               depth_first=catalogue[kernel].schedule,
                               depth_first_min=catalogue[kernel].schedule_min)
            total = op_counts(program)["total"]
            totals[label] = total
            if best is None or total < best[0]:
                best = (total, program, label)
        assert best is not None
        _check_outputs(catalogue[kernel], best[1], context)
        out.programs[name] = best[1]
        out.kernel_of[name] = kernel
        if frame is not None:
            out.frame_of[name] = frame
        if best[2]:
            out.choices[name] = best[2]
        if len(totals) > 1:
            out.alternatives[name] = totals
        if empty := empty_inputs(catalogue[kernel], best[1]):
            out.empty_inputs[name] = empty
    formulation.finish(out, context)
    if out.empty_inputs:
        names = sorted({spec.name for e in out.empty_inputs.values() for _, spec in e})
        out.notes.append(
            f"Inputs without elements for this model ({', '.join(names)}): not arguments of "
            "the C functions (C99 has no zero-length arrays); the numpy wrappers accept them "
            "empty or left out: " + ", ".join(out.empty_inputs))
    return out


__all__ = [
    "FD_METHODS",
    "Options",
    "PARTITION_CHOICES",
    "assign_program_names",
    "default_frames",
    "empty_inputs",
    "generate",
    "check_frames",
    "program_name",
]
