"""Screws (twists, rows [angular; linear]) for the loop analysis: the involutive closure of
a set of screws and orthonormal complements. The adjoint maps and the Lie bracket are the
reference's spatial-algebra routines: Ad_F of a frame F = (R, p) is
``pose_to_inverse_motion_transform(R, p)`` (Featherstone's A_X_B; Murray, Li & Sastry
1994, §2.4), Ad⁻¹_F is ``pose_to_motion_transform(R, p)``, and the bracket
[(ω₁, v₁), (ω₂, v₂)] = (ω₁ × ω₂, ω₁ × v₂ − ω₂ × v₁) of se(3) (Müller 2014, eq. 25) is the
spatial cross product ``cross_motion``.
"""

from __future__ import annotations

import numpy as np

from symgen.reference.spatial import cross_motion as bracket

Array = np.ndarray

#: Singular values below this fraction of the largest (and of 1) are zero: screws are built
#: from unit vectors, positions and their cross products (Müller 2014, §6 remark 2), so
#: their scale is that of the mechanism's lengths.
RANK_TOLERANCE = 1e-9


def rank(columns: Array) -> int:
    """Numerical rank of a set of columns (:data:`RANK_TOLERANCE`)."""
    if columns.size == 0:
        return 0
    sigma = np.linalg.svd(columns, compute_uv=False)
    return int(np.sum(sigma > RANK_TOLERANCE * max(1.0, float(sigma[0]))))


def span(columns: Array) -> Array:
    """An orthonormal basis (6 × k) of the span of ``columns`` (6 × n)."""
    if columns.size == 0:
        return np.zeros((6, 0))
    u, sigma, _ = np.linalg.svd(columns, full_matrices=False)
    keep = sigma > RANK_TOLERANCE * max(1.0, float(sigma[0]))
    return u[:, keep]


def lie_closure(screws: Array) -> Array:
    """Basis of the smallest subalgebra of se(3) containing ``screws`` (6 × n): brackets of
    the basis are added until the dimension stops growing (Müller 2014, eq. 25, iterated to
    a fixed point: nested brackets of second order do not always suffice)."""
    basis = span(screws)
    while True:
        k = basis.shape[1]
        brackets = [bracket(basis[:, i], basis[:, j]) for i in range(k) for j in range(i + 1, k)]
        grown = span(np.column_stack([basis, *brackets])) if brackets else basis
        if grown.shape[1] == k:
            return basis
        basis = grown


def complement(columns: Array) -> Array:
    """Rows spanning the orthogonal complement of ``columns`` (6 × ν): a (6 − ν) × 6 matrix W
    with W Z = 0 and orthonormal rows (Müller 2014, eq. 21: the constraints of a cut joint
    with free-motion screws Z)."""
    if columns.shape[1] == 0:
        return np.eye(6)
    u, sigma, _ = np.linalg.svd(columns, full_matrices=True)
    r = int(np.sum(sigma > RANK_TOLERANCE * max(1.0, float(sigma[0]))))
    return u[:, r:].T


__all__ = ["RANK_TOLERANCE", "complement", "lie_closure", "rank", "span"]
