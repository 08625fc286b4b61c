"""The kernel registry: every kernel symgen can generate, declared once.

A :class:`Kernel` declares its formulation, its inputs and its outputs (several allowed) with
shapes as functions of the formulation's context (the model, or the natural-coordinate model
built from it), its derivation (a function returning the unoptimised
:class:`~symgen.ir.program.Program`), how results are compared, and its documentation. Its
numpy reference and Pinocchio counterpart are verify's, by kernel name
(:mod:`symgen.apps.verify.reference_queries`, :mod:`symgen.apps.verify.pinocchio_queries`).
A formulation registers its kernels with :func:`register` when its registration module is
imported (:data:`REGISTRATION_MODULES`);
:func:`symgen.generate.generate`, the C emission, :mod:`symgen.apps.verify`, the command line and
the tests iterate the registry and never switch on a kernel's name.

To add a kernel: declare it with :func:`register` in its formulation's registration module
(a ``symgen/formulations/tree/catalogue_*.py`` module or
``symgen/formulations/natural/registration.py``), next to a derivation function, add its
reference to :mod:`symgen.apps.verify.reference_queries` and its test (see
``docs/architecture.md``).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from symgen.errors import SymgenError
from symgen.ir.program import Program
from symgen.kernel_set import FormulationContext, KernelSet
from symgen.model import Model

#: Modules whose import registers a formulation's kernels, in catalogue order.
REGISTRATION_MODULES = (
    "symgen.formulations.tree.catalogue_dynamics",
    "symgen.formulations.tree.catalogue_loops",
    "symgen.formulations.tree.catalogue_derivatives",
    "symgen.formulations.tree.catalogue_identification",
    "symgen.formulations.tree.catalogue_embedding",
    "symgen.formulations.tree.formulation",
    "symgen.formulations.natural.registration",
)

#: The formulation of :func:`symgen.generate.generate` when no kernel and no options say.
DEFAULT_FORMULATION = "tree"

#: How a kernel's results are compared with a peer's (:mod:`symgen.apps.verify`): ``relative``
#: (max |a − b| / max(|b|, 1)), ``solve`` (the backward error of a solution of M x = y) or
#: ``system`` (the backward error of outputs that together solve a linear system the
#: reference returns: ``system_outputs``, default all; the others relative).
COMPARISONS = ("relative", "solve", "system")


@dataclass(frozen=True)
class Output:
    """An output array: its name, its shape as a function of the formulation's context,
    and one line of documentation (in the generated header)."""

    name: str
    shape: Callable[[FormulationContext], tuple[int, ...]]
    doc: str


@dataclass(frozen=True)
class Kernel:
    """One kernel of the registry.

    - ``inputs``: the state arrays it takes, in order (the formulation documents and sizes
      them; ``params`` and ``f_ext`` are added when the model or the options call for them);
    - ``derive(context, target) -> Program``: the unoptimised program (``target`` carries the
      program name, the frame of a per-frame kernel and the variant being tried);
    - ``variants``: for a kernel computed by the cheapest of several derivations, the
      registered kernels it may take its program from (``forward_dynamics``: ``aba`` or
      ``ltdl``), chosen by an option of the formulation; ``loop_variants`` replace them for
      a model with loop joints (``forward_dynamics``: ``embedded`` or ``multipliers``);
    - ``methods``: names of the derivation methods of one kernel (the target's
      ``method``), each derived and the cheapest kept; ``fallbacks``: further methods,
      derived only when none of ``methods`` applies to the model (the costlier derivations
      of a kernel, kept by name for tests and for models the first ones decline);
      ``method_option``: the option (an attribute of the formulation's options) that
      narrows ``methods`` to the one it names (any other value: all of them);
    - ``default``: generated when no kernel list is given;
    - ``tolerance``: the bound of :mod:`symgen.apps.verify` against the peers when the default
      (1e-10) does not hold for the kernel's conditioning, with the reason in ``doc``;
      ``float_check``: whether a float build is compared with the double one;
    - ``loops``: derived only for a model with loop joints (the loop-closure kernels);
      ``embedding``: derived only for a model with loop joints or couplings (the
      constraint-embedding kernels); ``consistent``: compared by :mod:`symgen.apps.verify` at
      assembled configurations with velocities along the motion (G v = 0), where its
      methods agree or where it is defined (derivatives along the loop manifold), and by
      relative error (also ``forward_dynamics`` of a model with loop joints);
      ``on_request``: a program built from other programs (derivatives, regressors),
      derived by ``symgen info --ops`` only when named with ``--kernels``;
      ``without_elements``: a dynamics kernel of the spanning tree that leaves the model's
      force elements out (generation warns when the model has some);
    - ``setup``: run once per initial condition (assembly), not per time step: its SIMD
      batch keeps the scalar loop (:mod:`symgen.backends.simd.emit`), which spares the build the
      lane code of what is often the model's largest kernel;
    - ``schedule``: its program is ordered depth-first from the outputs
      (:func:`symgen.ir.optimize.schedule`): the programs derived by differentiation, and
      inverse dynamics; ``schedule_min``: only a program with at least this many
      assignments (after CSE) is (inverse dynamics: faster scheduled on large trees,
      slower on some small ones);
    - ``program_docs``: the generated C documents the kernel by its program's own text
      (summary and outputs, which may depend on the model), not by ``summary`` and the
      outputs' ``doc`` (an argument's documentation is always the program's).
    """

    name: str
    formulation: str
    summary: str
    inputs: tuple[str, ...]
    outputs: tuple[Output, ...]
    #: The formulation's own derivation, called by its ``candidates`` with its context and
    #: target (:data:`symgen.formulations.tree.derivation.Derive` for the tree).
    derive: Callable[..., Program]
    comparison: str = "relative"
    #: With ``comparison="system"``: the outputs that together solve the system (default:
    #: every output); the others are compared by relative error.
    system_outputs: tuple[str, ...] = ()
    per_frame: bool = False
    takes_forces: bool = False
    uses_tree: bool = True
    default: bool = True
    variants: tuple[str, ...] = ()
    loop_variants: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    fallbacks: tuple[str, ...] = ()
    method_option: str = ""
    doc: str = ""
    tolerance: float | None = None
    float_check: bool = True
    setup: bool = False
    loops: bool = False
    embedding: bool = False
    consistent: bool = False
    on_request: bool = False
    without_elements: bool = False
    schedule: bool = False
    schedule_min: int = 0
    program_docs: bool = False

    @property
    def output(self) -> str:
        """The name of the first output."""
        return self.outputs[0].name


@dataclass
class Registry:
    """Kernels by name, in registration order."""

    kernels: dict[str, Kernel] = field(default_factory=dict)

    def register(self, kernel: Kernel) -> Kernel:
        if kernel.name in self.kernels:
            raise SymgenError(f"kernel {kernel.name!r} is registered twice")
        if kernel.comparison not in COMPARISONS:
            raise SymgenError(f"kernel {kernel.name!r}: unknown comparison {kernel.comparison!r}")
        unknown = set(kernel.system_outputs) - {o.name for o in kernel.outputs}
        if unknown or (kernel.system_outputs and kernel.comparison != "system"):
            raise SymgenError(f"kernel {kernel.name!r}: system_outputs {kernel.system_outputs} "
                              "must be outputs of a kernel compared as a system")
        self.kernels[kernel.name] = kernel
        return kernel


class Formulation(Protocol):
    """How a formulation turns registered kernels into programs for
    :func:`symgen.generate.generate`: its options, its context (what every derivation of
    one model shares), the programs of one kernel (one per frame for a per-frame kernel;
    none where the model has no such kernel), the candidate derivations of one program (the
    cheapest is kept) and the finishing touches of the kernel set (size macros, notes)."""

    name: str

    def default_options(self) -> object: ...

    def check_options(self, options: object) -> None: ...

    def context(self, model: Model, options: object) -> FormulationContext: ...

    def frames(self, kernel: Kernel, context: FormulationContext) -> list[str | None]: ...

    def candidates(self, kernel: Kernel, context: FormulationContext, name: str,
                   frame: str | None, options: object) -> list[tuple[str, Program]]: ...

    def finish(self, kernel_set: KernelSet, context: FormulationContext) -> None: ...


_REGISTRY = Registry()
_FORMULATIONS: dict[str, Formulation] = {}
_loaded = False


def register_formulation(formulation: Formulation) -> Formulation:
    """Add a formulation (called by its registration module)."""
    _FORMULATIONS[formulation.name] = formulation
    return formulation


def formulation(name: str) -> Formulation:
    """The registered formulation ``name``."""
    _load()
    if name not in _FORMULATIONS:
        raise SymgenError(f"unknown formulation {name!r} (formulations: "
                          f"{', '.join(_FORMULATIONS)})")
    return _FORMULATIONS[name]


def formulation_for(options: object | None) -> Formulation:
    """The formulation whose options type ``options`` has; for None, or options of no
    formulation's type, :data:`DEFAULT_FORMULATION` (whose ``check_options`` then names the
    type it expects)."""
    _load()
    for candidate in _FORMULATIONS.values():
        if options is not None and isinstance(options, type(candidate.default_options())):
            return candidate
    return formulation(DEFAULT_FORMULATION)


def register(kernel: Kernel) -> Kernel:
    """Add ``kernel`` to the registry (called by the formulations' registration modules)."""
    return _REGISTRY.register(kernel)


def _load() -> dict[str, Kernel]:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in REGISTRATION_MODULES:
            importlib.import_module(module)
    return _REGISTRY.kernels


def all_kernels() -> dict[str, Kernel]:
    """Every registered kernel, by name."""
    return dict(_load())


def kernels_of(formulation: str) -> dict[str, Kernel]:
    """The kernels of one formulation, by name, in registration order."""
    return {n: k for n, k in _load().items() if k.formulation == formulation}


def get(name: str) -> Kernel:
    """The kernel ``name``; a one-line error with the closest names otherwise."""
    kernels = _load()
    if name not in kernels:
        raise SymgenError(unknown_kernel_message(name, list(kernels)))
    return kernels[name]


def close_names(name: str, known: list[str], limit: int = 3) -> list[str]:
    """The ``known`` names closest to ``name`` (difflib's ratio, ignoring case, at least 0.6):
    the closest and up to ``limit`` - 1 others nearly as close (within 0.1 of it)."""
    matcher = difflib.SequenceMatcher(b=name.lower())
    scored = []
    for k in known:
        matcher.set_seq1(k.lower())
        scored.append((matcher.ratio(), k))
    scored = sorted((s for s in scored if s[0] >= 0.6), key=lambda s: -s[0])[:limit]
    return [k for ratio, k in scored if ratio >= scored[0][0] - 0.1]


def unknown_kernel_message(name: str, known: list[str]) -> str:
    """The error of an unknown kernel ``name``: the ``known`` names closest to it
    (:func:`close_names`) and where the catalogue is listed."""
    close = [repr(k) for k in close_names(name, known)]
    guess = ""
    if close:
        guess = "; did you mean " + (close[0] if len(close) == 1
                                     else f"{', '.join(close[:-1])} or {close[-1]}") + "?"
    return f"unknown kernel {name!r}{guess} (`symgen kernels` lists them)"


def formulation_of(names: list[str]) -> str | None:
    """The formulation shared by kernels ``names`` (None for an empty list); an error when
    they mix formulations."""
    found = {get(n).formulation for n in names}
    if len(found) > 1:
        raise SymgenError("kernels of different formulations cannot be generated together "
                          f"({', '.join(sorted(found))}): " + ", ".join(names))
    return found.pop() if found else None


__all__ = [
    "COMPARISONS",
    "DEFAULT_FORMULATION",
    "Formulation",
    "Kernel",
    "Output",
    "REGISTRATION_MODULES",
    "all_kernels",
    "close_names",
    "formulation_for",
    "formulation_of",
    "get",
    "kernels_of",
    "unknown_kernel_message",
    "formulation",
    "register",
    "register_formulation",
]
