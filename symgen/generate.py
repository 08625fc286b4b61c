"""Generation: derive and optimise the programs of a model's kernels (design.md §5).

``symgen.generate(model)`` returns a :class:`KernelSet`: one optimised
:class:`~symgen.program.Program` per kernel (one per frame for the per-frame kernels), the
choices made on the way (partitioning, forward-dynamics method), op counts, and a Python
evaluator. The C emission (templates) and the compiled module come on top of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .formulations.kinematics import REFERENCES
from .formulations.spatial_operators import build_kernel
from .formulations.tree import SNAP_TOLERANCE, has_partitionable
from .kernels import DEFAULT_KERNELS, KERNELS
from .model import Model, SymgenError
from .optimize import optimize
from .program import Program

PARTITION_CHOICES = ("auto", "always", "never")
FD_METHODS = ("auto", "aba", "ltdl")


@dataclass(frozen=True)
class Options:
    """Generation options.

    - ``partition``: split multi-DOF joints into 1-DOF sub-hinges (Jain, *Partitioning*):
      ``"auto"`` derives each kernel both ways and keeps the one with fewer operations.
    - ``forward_dynamics``: method of the ``forward_dynamics`` kernel, ``"aba"``
      (articulated body), ``"ltdl"`` (mass matrix + sparse LᵀDL) or ``"auto"`` (fewer ops).
    - ``frames``: frames (or bodies) of the per-frame kernels; default: every named frame,
      or the leaf bodies if there is none. forward_kinematics reports every body and frame.
    - ``jacobian_reference``: ``"local_world_aligned"``, ``"local"`` or ``"world"``.
    - ``external_forces``: give inverse and forward dynamics an ``f_ext`` input.
    - ``cse``: run common-subexpression elimination.
    - ``snap``: rotation/axis entries within this of 0 or ±1 are taken as exact.
    """

    partition: str = "auto"
    forward_dynamics: str = "auto"
    frames: tuple[str, ...] | None = None
    jacobian_reference: str = "local_world_aligned"
    external_forces: bool = False
    cse: bool = True
    snap: float = SNAP_TOLERANCE

    def check(self) -> None:
        if self.partition not in PARTITION_CHOICES:
            raise SymgenError(
                f"partition must be one of {', '.join(PARTITION_CHOICES)}, got {self.partition!r}"
            )
        if self.forward_dynamics not in FD_METHODS:
            raise SymgenError(
                f"forward_dynamics must be one of {', '.join(FD_METHODS)}, "
                f"got {self.forward_dynamics!r}"
            )
        if self.jacobian_reference not in REFERENCES:
            raise SymgenError(
                f"jacobian_reference must be one of {', '.join(REFERENCES)}, "
                f"got {self.jacobian_reference!r}"
            )


@dataclass
class KernelSet:
    """The generated programs of one model, keyed by program name."""

    model: Model
    options: Options
    programs: dict[str, Program] = field(default_factory=dict)
    kernel_of: dict[str, str] = field(default_factory=dict)
    frame_of: dict[str, str] = field(default_factory=dict)
    choices: dict[str, str] = field(default_factory=dict)
    alternatives: dict[str, dict[str, int]] = field(default_factory=dict)
    pose_names: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)

    def __getitem__(self, name: str) -> Program:
        try:
            return self.programs[name]
        except KeyError:
            known = ", ".join(self.programs)
            raise SymgenError(f"no generated kernel {name!r} (generated: {known})") from None

    def __iter__(self):
        return iter(self.programs)

    def op_counts(self) -> dict[str, dict[str, int]]:
        """Operation counts per program (``add mul div sqrt trig other total``)."""
        return {name: p.op_counts() for name, p in self.programs.items()}

    def evaluate(self, name: str, **inputs: object) -> dict[str, np.ndarray]:
        """Evaluate program ``name`` in Python (see :meth:`Program.evaluate`)."""
        return self[name].evaluate(**inputs)

    def c_source(self, real: str = "double", prefix: str | None = None):
        """The C header and source (:func:`symgen.emit.emit_c`)."""
        from .emit import emit_c

        return emit_c(self, prefix=prefix, real=real)

    def write(self, directory, real: str = "double", prefix: str | None = None) -> list:
        """Write ``<prefix>.h`` and ``<prefix>.c`` into ``directory``; returns the paths."""
        return self.c_source(real, prefix).write(directory)

    def compile(self, real: str = "double", prefix: str | None = None):
        """Compile with cffi (cached) and return the numpy-callable kernels
        (:class:`symgen.build.CompiledKernels`)."""
        from .build import compile_kernels

        return compile_kernels(self, real=real, prefix=prefix)


def program_name(kernel: str, frame: str | None = None) -> str:
    """``kernel`` or, for a per-frame kernel, ``kernel_<frame>`` made a C identifier."""
    if frame is None:
        return kernel
    return f"{kernel}_{re.sub(r'[^0-9A-Za-z_]', '_', frame)}"


def default_frames(model: Model) -> tuple[str, ...]:
    """Every named frame, or the leaf bodies when the model has none."""
    if model.frames:
        return tuple(model.frame_names)
    leaves = [b.name for i, b in enumerate(model.bodies) if not model.children(i)]
    return tuple(leaves)


def _check_kernels(kernels: Iterable[str]) -> list[str]:
    out = list(kernels)
    unknown = [k for k in out if k not in KERNELS]
    if unknown:
        raise SymgenError(
            f"unknown kernel {unknown[0]!r} (kernels: {', '.join(KERNELS)})"
        )
    return out


def _check_frames(model: Model, frames: Sequence[str]) -> None:
    known = set(model.frame_names) | set(model.body_names) | {model.root}
    for f in frames:
        if f not in known:
            raise SymgenError(f"model {model.name!r} has no body or frame named {f!r}")


def generate(
    model: Model,
    kernels: Iterable[str] | None = None,
    options: Options | None = None,
    progress: Callable[[str], None] | None = None,
) -> KernelSet:
    """Derive and optimise the programs of ``kernels`` (default: :data:`DEFAULT_KERNELS`).

    ``progress`` is called with one line per derived program.
    """
    options = options or Options()
    options.check()
    names = _check_kernels(kernels if kernels is not None else DEFAULT_KERNELS)
    frames = tuple(options.frames) if options.frames is not None else default_frames(model)
    _check_frames(model, frames)
    pose_names = tuple(model.body_names) + tuple(model.frame_names)
    out = KernelSet(model, options, pose_names=pose_names)
    say = progress or (lambda _msg: None)
    targets = [
        (kernel, frame)
        for kernel in names
        for frame in (list(frames) if KERNELS[kernel].per_frame else [None])
    ]
    for i, (kernel, frame) in enumerate(targets, start=1):
        name = program_name(kernel, frame)
        say(f"[{i}/{len(targets)}] deriving {name}")
        program, choice, alternatives = _derive(model, kernel, frame, name, options, pose_names)
        out.programs[name] = program
        out.kernel_of[name] = kernel
        if frame is not None:
            out.frame_of[name] = frame
        if choice:
            out.choices[name] = choice
        if len(alternatives) > 1:
            out.alternatives[name] = alternatives
    return out


def _derive(
    model: Model,
    kernel: str,
    frame: str | None,
    name: str,
    options: Options,
    pose_names: tuple[str, ...],
) -> tuple[Program, str, dict[str, int]]:
    """The cheapest program among the allowed variants, a note on the choice, and the op
    totals of every variant tried."""
    spec = KERNELS[kernel]
    partitions = [False]
    if spec.uses_tree and has_partitionable(model):
        partitions = {"auto": [False, True], "always": [True], "never": [False]}[
            options.partition
        ]
    methods = [kernel]
    if kernel == "forward_dynamics":
        methods = {
            "auto": ["forward_dynamics_aba", "forward_dynamics_ltdl"],
            "aba": ["forward_dynamics_aba"],
            "ltdl": ["forward_dynamics_ltdl"],
        }[options.forward_dynamics]
    best: tuple[int, Program, str] | None = None
    totals: dict[str, int] = {}
    for method in methods:
        for partition in partitions:
            program = optimize(
                build_kernel(
                    model,
                    method,
                    program_name=name,
                    partition=partition,
                    frame=frame,
                    reference=options.jacobian_reference,
                    external_forces=options.external_forces,
                    pose_names=pose_names,
                    snap=options.snap,
                ),
                use_cse=options.cse,
            )
            label = _label(kernel, method, partition, len(partitions) > 1 or partition)
            total = program.op_counts()["total"]
            totals[label] = total
            if best is None or total < best[0]:
                best = (total, program, label)
    assert best is not None
    return best[1], best[2], totals


def _label(kernel: str, method: str, partition: bool, mention_partition: bool) -> str:
    parts = []
    if method != kernel:
        parts.append(method.removeprefix("forward_dynamics_"))
    if mention_partition:
        parts.append("partitioned" if partition else "unpartitioned")
    return ", ".join(parts)


__all__ = [
    "FD_METHODS",
    "KernelSet",
    "Options",
    "PARTITION_CHOICES",
    "default_frames",
    "generate",
    "program_name",
]
