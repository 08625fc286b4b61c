"""Natural-coordinate formulation for closed-loop mechanisms (García de Jalón & Bayo 1994):
dependent Cartesian coordinates, a constant mass matrix and quadratic constraints
(docs/natural.md): automatic modelling (:mod:`.planar`, :mod:`.spatial`) and generated
kernels (:mod:`.kernels`, the steps in :mod:`.step`). The numpy reference solvers are
:mod:`symgen.reference.natural`."""

from symgen.formulations.natural.model import NaturalModel, bar_mass_matrix

__all__ = ["NaturalModel", "bar_mass_matrix"]
