"""Transitional alias: the tree formulation now lives in :mod:`symgen.formulations.tree`
(catalogue, context, driver). Only :data:`INPUT_DOCS` is left here, for
:mod:`symgen.backends.c99.emit` until it imports it from
:mod:`symgen.formulations.tree.context`; then this module goes."""

from symgen.formulations.tree.context import INPUT_DOCS

__all__ = ["INPUT_DOCS"]
