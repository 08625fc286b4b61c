"""The inertial parameters of a model's bodies: π, 10 per body (m, m c, and the rotational
inertia about the body origin: xx, xy, yy, xz, yz, zz; docs/identification.md), the layout
the regressors multiply and identification estimates."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from symgen.model.model import Model

#: Parameters per body, and their names: the layout of π that the regressors
#: (:mod:`symgen.reference.regressor`, :mod:`symgen.formulations.regressor`) multiply.
PARAMETERS_PER_BODY = 10
PARAMETER_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


def inertial_parameters(model: Model, params: Mapping[str, float] | None = None) -> np.ndarray:
    """π of ``model`` (10 per body, module documentation), at its parameter values: m, m c
    and the rotational inertia about the body origin, I_c + m (cᵀc 1 − c cᵀ) (parallel axis
    theorem)."""
    out = []
    for body in model.resolve(params).bodies:
        m = float(body.mass)
        c = np.array(body.com, float)
        inertia = np.array(body.inertia, float) + m * (c @ c * np.eye(3) - np.outer(c, c))
        out += [m, *(m * c), inertia[0, 0], inertia[0, 1], inertia[1, 1], inertia[0, 2],
                inertia[1, 2], inertia[2, 2]]
    return np.array(out)


__all__ = ["PARAMETERS_PER_BODY", "PARAMETER_NAMES", "inertial_parameters"]
