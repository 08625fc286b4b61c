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
from symgen.ir.program import ArraySpec, Program
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
    #: What an input is when a call leaves it out, by input name (set by the formulation's
    #: ``finish``): ``params`` → the declared defaults of the runtime parameters the kernels
    #: take (every parameter of a tree kernel set; the force elements' own parameters of a
    #: natural-coordinate one). Used by the numpy wrappers and :meth:`evaluate`.
    input_defaults: dict[str, tuple[float, ...]] = field(default_factory=dict)
    #: Per program, the inputs its kernel declares (:attr:`symgen.registry.Kernel.inputs`)
    #: that have no element for this model, e.g. ``tau`` of a natural-coordinate mechanism
    #: without a 1-DOF joint: each with its position among the call's arguments and its
    #: spec (shape ``(0,)``). C99 has no zero-length arrays, so the C functions leave them
    #: out; the numpy wrappers and :meth:`evaluate` accept them empty (or omitted), so that
    #: every model's kernels take the same arguments (:func:`symgen.generate.generate`).
    empty_inputs: dict[str, tuple[tuple[int, ArraySpec], ...]] = field(default_factory=dict)

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
        """Evaluate program ``name`` in Python (:func:`symgen.ir.printer.evaluate`); an
        input left out takes its :attr:`input_defaults` value, an input of
        :attr:`empty_inputs` may be given (with no element) or left out."""
        program = self[name]
        for _, spec in self.empty_inputs.get(name, ()):
            given = inputs.pop(spec.name, None)
            if given is not None and np.asarray(given).size != 0:
                raise ValueError(f"{name}: input {spec.name} has no element for this model "
                                 "(give an empty array or leave it out)")
        for spec in program.inputs:
            if spec.name not in inputs and spec.name in self.input_defaults:
                inputs[spec.name] = self.input_defaults[spec.name]
        return evaluate(program, **inputs)


__all__ = ["FormulationContext", "KernelSet"]
