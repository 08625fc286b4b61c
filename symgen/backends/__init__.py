"""Code-generation backends: how a :class:`~symgen.generate.KernelSet` becomes C and how
that C is compiled.

A :class:`Backend` bundles a printer (:class:`symgen.backends.c99.printer.CPrinter` or a
subclass: the layout of array elements and the spelling of statements), its templates, its
emit function ``emit(ks, prefix, real) -> CSource`` and its compile flags
``target(spec) -> Target`` (flags, link libraries, cache-key identity). :data:`BACKENDS` registers

- ``"c99"``: the scalar kernels and their ``*_batch`` loops
  (:func:`symgen.backends.c99.emit.emit_c`, unchanged);
- ``"simd"``: ``*_simd_batch`` loops evaluating W states per iteration in vector lanes
  (:mod:`symgen.backends.simd.emit`), compiled for a chosen CPU
  (:mod:`symgen.backends.simd.target`) and linked with the c99 object.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from symgen.backends.c99.emit import CSource, emit_c
from symgen.backends.c99.printer import CPrinter
from symgen.backends.real import REALS, RealType, real_type
from symgen.backends.simd.emit import TEMPLATES as SIMD_TEMPLATES
from symgen.backends.simd.emit import SimdPrinter, emit_simd, simd_declarations
from symgen.backends.simd.target import BASE_FLAGS, Target, simd_target

#: Flags of the c99 backend (the scalar builder's default, ``symgen.build.compiler.DEFAULT_FLAGS``).
C99_FLAGS = ("-O2", "-std=c99")


@dataclass(frozen=True)
class Backend:
    """A way to turn kernels into compiled C: ``printer`` (a :class:`CPrinter` class),
    ``templates`` (names in the backend's ``templates/`` folder), ``emit`` and ``target``
    (spec -> the compile flags, libraries and cache identity of that build)."""

    name: str
    printer: type[CPrinter]
    templates: tuple[str, ...]
    emit: Callable[..., CSource]
    target: Callable[..., Target]
    doc: str = ""


def c99_target(spec: str | None = None, cc: object = None) -> Target:
    """The c99 backend's build: the builder's default flags, no target choice."""
    if spec not in (None, "default"):
        raise ValueError(f"the c99 backend has no target {spec!r}")
    return Target("default", C99_FLAGS, ("m",), "c99 " + " ".join(C99_FLAGS), 1)


BACKENDS: dict[str, Backend] = {
    "c99": Backend("c99", CPrinter, ("model.h.j2", "model.c.j2"), emit_c, c99_target,
                   "scalar kernels and *_batch loops, ISO C99"),
    "simd": Backend("simd", SimdPrinter, SIMD_TEMPLATES, emit_simd, simd_target,
                    "*_simd_batch: W states per iteration in GCC/Clang vector lanes"),
}


def backend(name: str) -> Backend:
    """The registered backend ``name``."""
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})") from None


__all__ = ["BACKENDS", "BASE_FLAGS", "C99_FLAGS", "REALS", "Backend", "RealType", "SimdPrinter",
           "Target", "backend", "c99_target", "emit_simd", "real_type", "simd_declarations",
           "simd_target"]
