"""Base inertial parameters, found numerically at generation (Gautier, "Numerical
calculation of the base inertial parameters of robots", J. Robotic Systems 8, 1991): the
regressor Y (:mod:`symgen.reference.regressor`) stacked over random states W; its
independent columns B, chosen by greedy column pivoting of W with normalised columns (each
the column farthest from the span of those chosen before; rank tolerance
:data:`RANK_TOLERANCE` of the largest singular value); the others regroup onto them,
W_D = W_B K (least squares, exact to rounding where the rank is right), so that
τ = Y π = Y_B π_base with π_base = π_B + K π_D. Columns that are zero at every sample
(parameters that do not act on the dynamics) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symgen.errors import SymgenError
from symgen.model import Model
from symgen.model.inertial_parameters import (
    PARAMETER_NAMES,
    PARAMETERS_PER_BODY,
    inertial_parameters,
)
from symgen.pivoting import pivot_rows
from symgen.reference.integrate import random_configuration
from symgen.reference.regressor import regressor

#: Random states stacked for the rank analysis, and their seed.
SAMPLES = 40
#: Rank tolerance, relative to the largest singular value of the normalised stack.
RANK_TOLERANCE = 1e-9


@dataclass(frozen=True)
class BaseParameters:
    """The base parameters of a model: ``columns`` (indices of π, ascending) of the
    independent regressor columns, ``regrouping`` R (r × 10·nbodies) with
    π_base = R π, ``names`` ("body.param") of the base columns, and the singular values of
    the normalised stack (its numerical rank is r)."""

    columns: tuple[int, ...]
    regrouping: np.ndarray
    names: tuple[str, ...]
    singular_values: np.ndarray

    @property
    def count(self) -> int:
        return len(self.columns)

    def of(self, pi: np.ndarray) -> np.ndarray:
        """π_base = R π."""
        return self.regrouping @ np.asarray(pi, float)


def parameter_names(model: Model) -> list[str]:
    """"body.param" for every entry of π."""
    return [f"{b.name}.{p}" for b in model.bodies for p in PARAMETER_NAMES]


def stacked_regressor(model: Model, samples: int = SAMPLES, seed: int = 0,
                      params: dict[str, float] | None = None) -> np.ndarray:
    """Y at ``samples`` random states (q on the joint manifolds, v and a standard normal),
    stacked."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(samples):
        q = random_configuration(model, rng)
        rows.append(regressor(model, q, rng.normal(size=model.nv), rng.normal(size=model.nv),
                              params=params))
    return np.vstack(rows)


def base_parameters(model: Model, samples: int = SAMPLES, seed: int = 0,
                    params: dict[str, float] | None = None) -> BaseParameters:
    """The base parameters of ``model`` (module documentation)."""
    w = stacked_regressor(model, samples, seed, params)
    norms = np.linalg.norm(w, axis=0)
    scale = float(norms.max()) if norms.size else 0.0
    if scale == 0.0:
        raise SymgenError(f"model {model.name!r}: no inertial parameter acts on its dynamics")
    acting = np.flatnonzero(norms > RANK_TOLERANCE * scale)
    unit = w[:, acting] / norms[acting]
    sigma = np.linalg.svd(unit, compute_uv=False)
    rank = int(np.sum(sigma > RANK_TOLERANCE * sigma[0]))
    base = sorted(int(acting[k]) for k in pivot_rows(unit.T, rank))
    others = [j for j in range(w.shape[1]) if j not in base]
    k_matrix = np.linalg.lstsq(w[:, base], w[:, others], rcond=None)[0]
    regrouping = np.zeros((len(base), w.shape[1]))
    regrouping[:, base] = np.eye(len(base))
    regrouping[:, others] = k_matrix
    names = parameter_names(model)
    return BaseParameters(tuple(base), regrouping, tuple(names[j] for j in base), sigma)


__all__ = ["PARAMETERS_PER_BODY", "RANK_TOLERANCE", "SAMPLES", "BaseParameters",
           "base_parameters", "inertial_parameters", "parameter_names", "stacked_regressor"]
