"""The kernel set: the generated programs of one model and what was decided on the way, as
data (:func:`symgen.generate.generate` fills it; the backends print it:
:func:`symgen.backends.c99.emit.emit_c`, :func:`symgen.build.compiler.compile_kernels`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from symgen.errors import SymgenError
from symgen.ir.counts import op_counts
from symgen.ir.printer import evaluate
from symgen.ir.program import Program
from symgen.model import Model


class FormulationContext(Protocol):
    """What every formulation's context offers its consumers: the model it was built for
    (the tree formulation's :class:`~symgen.formulations.tree.context.TreeContext`, the
    natural coordinates' :class:`~symgen.formulations.natural.registration.NaturalContext`)."""

    model: Model


#: The kernel set's former methods, now functions of the backend and the build.
_MOVED = {"compile": "symgen.compile_kernels(ks, real, prefix, vectorize=...)",
          "write": "symgen.write_c(ks, directory, real, prefix)",
          "c_source": "symgen.emit_c(ks, prefix=..., real=...)"}


@dataclass
class KernelSet:
    """The generated programs of one model, keyed by program name."""

    model: Model
    #: The formulation's options (:class:`symgen.Options`, ``NaturalOptions``).
    options: object
    programs: dict[str, Program] = field(default_factory=dict)
    kernel_of: dict[str, str] = field(default_factory=dict)
    frame_of: dict[str, str] = field(default_factory=dict)
    choices: dict[str, str] = field(default_factory=dict)
    alternatives: dict[str, dict[str, int]] = field(default_factory=dict)
    pose_names: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)
    #: Size macros of the header, ``(suffix, value, doc)``: ``#define <PREFIX>_<suffix> value``.
    sizes: list[tuple[str, int, str]] = field(default_factory=list)
    #: Default C prefix (None: from the model name, :func:`symgen.cnames.default_prefix`).
    prefix: str | None = None
    #: Whether the header documents the model's tree layout (the spatial conventions, the
    #: joints' q and v index ranges, the bodies, frames and runtime parameters) before the
    #: notes: kernels of the spanning tree's coordinates; a formulation whose kernels take
    #: other coordinates sets it False in ``finish`` (the header then has the notes only).
    tree_layout: bool = True
    #: The formulation that derived the programs, and its context.
    formulation: str = "tree"
    context: FormulationContext | None = None

    def __getattr__(self, name: str) -> object:
        if name in _MOVED:  # the methods that became backend functions: say where they went
            raise AttributeError(f"KernelSet.{name} is now {_MOVED[name]} (docs/api.md)")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

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
        return {name: op_counts(p) for name, p in self.programs.items()}

    def evaluate(self, name: str, **inputs: object) -> dict[str, np.ndarray]:
        """Evaluate program ``name`` in Python (see :meth:`Program.evaluate`)."""
        return evaluate(self[name], **inputs)


__all__ = ["FormulationContext", "KernelSet"]
