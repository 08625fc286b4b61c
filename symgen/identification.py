"""Identification of the inertial parameters, for applications: π of a model
(:func:`inertial_parameters`) and its base parameters (:func:`base_parameters`, Gautier
1991), found numerically by :mod:`symgen.reference.base_parameters` (which the base regressor
kernel also uses at generation); docs/identification.md."""

from symgen.reference.base_parameters import (
    PARAMETERS_PER_BODY,
    RANK_TOLERANCE,
    SAMPLES,
    BaseParameters,
    base_parameters,
    inertial_parameters,
    parameter_names,
    stacked_regressor,
)

__all__ = ["PARAMETERS_PER_BODY", "RANK_TOLERANCE", "SAMPLES", "BaseParameters",
           "base_parameters", "inertial_parameters", "parameter_names", "stacked_regressor"]
