"""Natural coordinates for closed-loop mechanisms, from the user's side: the natural model of
a symgen model and its kernels (``symgen.generate`` with :class:`NaturalOptions`; the
formulation itself is :mod:`symgen.formulations.natural`, see docs/natural.md)."""

from __future__ import annotations

from symgen.formulations.natural.kernels import (
    NaturalOptions,
    describe_natural,
    natural_model,
)
from symgen.formulations.natural.model import NaturalModel
from symgen.formulations.natural.registration import NaturalContext
from symgen.generate import generate


def natural_kernels(model, opts: NaturalOptions | None = None, nm: NaturalModel | None = None):
    """(NaturalModel, KernelSet) with every natural-coordinate kernel of ``model``,
    optimised, ready for :meth:`KernelSet.write` / :meth:`KernelSet.compile`: the same as
    ``symgen.generate(model, options=opts or NaturalOptions())``. ``nm``: a natural model of
    ``model`` built beforehand (e.g. :func:`natural_model` with springs).

    The header describes these kernels only: its size macros are
    :func:`symgen.formulations.natural.registration.natural_sizes` (``<PREFIX>_N``, ``_M``,
    ...), its default prefix is ``<model>_natural`` (so it can be included next to the tree
    kernels' ``<model>.h``)."""
    opts = opts or NaturalOptions()
    context = None if nm is None else NaturalContext(model.resolve(), nm, opts)
    ks = generate(model, options=opts, context=context)
    return ks.context.nm, ks


__all__ = ["NaturalModel", "NaturalOptions", "describe_natural", "natural_kernels",
           "natural_model"]
