"""Natural-coordinate formulation for closed-loop mechanisms (García de Jalón & Bayo 1994):
dependent Cartesian coordinates, a constant mass matrix and quadratic constraints
(docs/natural.md): automatic modelling (:mod:`.planar`, :mod:`.spatial`), numpy reference
solvers (:mod:`.solvers`) and generated kernels (:mod:`.kernels`)."""

from symgen.formulations.natural.model import NaturalModel, bar_mass_matrix
from symgen.formulations.natural.solvers import (
    StepSettings,
    assemble,
    augmented_lagrangian_accelerations,
    consistent_velocities,
    lagrange_accelerations,
    trapezoidal_step,
)

__all__ = [
    "NaturalModel",
    "StepSettings",
    "assemble",
    "augmented_lagrangian_accelerations",
    "bar_mass_matrix",
    "consistent_velocities",
    "lagrange_accelerations",
    "trapezoidal_step",
]
