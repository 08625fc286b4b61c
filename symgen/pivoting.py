"""Greedy pivoting (Gram-Schmidt with pivoting, Golub & Van Loan, *Matrix Computations*,
4th ed., 2013, §5.4.2): the rows of a matrix picked one at a time, each the one farthest
from the span of those picked before. Used for constant choices made at generation: the
independent loop rows (:mod:`symgen.loops.analysis`) and the base inertial parameters
(:mod:`symgen.reference.base_parameters`, on the columns)."""

from __future__ import annotations

import numpy as np

#: Rows whose remaining norms are within this fraction of the largest tie: the first of
#: them is picked, so that rows of equal norm (a planar loop's two force rows) give the same
#: choice whatever the rounding of the machine's arithmetic.
TIE = 1e-12


def pivot_rows(g: np.ndarray, count: int) -> list[int]:
    """``count`` rows of ``g`` picked greedily (module documentation; ties: :data:`TIE`),
    ascending."""
    residual = np.array(g, float)
    picked: list[int] = []
    for _ in range(count):
        norms = np.linalg.norm(residual, axis=1)
        norms[picked] = -1.0
        k = int(np.flatnonzero(norms >= norms.max() * (1.0 - TIE))[0])
        picked.append(k)
        e = residual[k] / norms[k]
        residual -= np.outer(residual @ e, e)
    return sorted(picked)


__all__ = ["TIE", "pivot_rows"]
