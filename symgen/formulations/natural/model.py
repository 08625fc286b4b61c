"""Natural-coordinate models (García de Jalón & Bayo 1994, ch. 2 and 4): dependent Cartesian
coordinates q (points, and unit vectors in 3-D), quadratic or linear constraints Φ(q) = 0, a
constant mass matrix M and generalized forces Q.

A :class:`NaturalModel` holds everything symbolically (sympy, the expressions are small:
quadratic polynomials of a few coordinates) and numerically evaluates Φ, Φ_q and Φ̇_q q̇ for
the reference solvers (:mod:`.solvers`); the generated kernels are built from the same
expressions (:mod:`.kernels`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import sympy

from ...model import SymgenError


@dataclass
class NaturalModel:
    """Coordinates, constraints, mass matrix and forces of a natural-coordinate model.

    - ``coordinates``: names of the dependent coordinates q (``"A.x"``, ``"u1.z"``, ...);
    - ``constraints``: Φ(q) as sympy expressions of :attr:`symbols`, with their names;
    - ``mass_matrix``: the constant n×n matrix M (book eq. 4.48 planar, 4.61 spatial);
    - ``forces``: constant generalized forces Q (gravity, eq. 4.129-4.130), n-vector;
    - ``dof``: degrees of freedom of the mechanism (n minus independent constraints);
    - ``joint_values``: per original joint, its coordinate(s) as functions of q (for
      comparison with relative-coordinate models).
    """

    name: str
    coordinates: list[str]
    constraints: list[sympy.Expr]
    constraint_names: list[str]
    mass_matrix: np.ndarray
    forces: np.ndarray
    dof: int | None = None
    joint_values: dict[str, Callable[[np.ndarray], float]] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.coordinates)

    @property
    def m(self) -> int:
        return len(self.constraints)

    @cached_property
    def symbols(self) -> list[sympy.Symbol]:
        return [sympy.Symbol(f"q{i}", real=True) for i in range(self.n)]

    @cached_property
    def _rate_symbols(self) -> list[sympy.Symbol]:
        return [sympy.Symbol(f"qd{i}", real=True) for i in range(self.n)]

    @cached_property
    def jacobian(self) -> sympy.Matrix:
        """Φ_q (m × n): linear in q, since Φ is at most quadratic."""
        return sympy.Matrix(self.constraints).jacobian(self.symbols)

    @cached_property
    def jacobian_dot_qdot(self) -> sympy.Matrix:
        """Φ̇_q q̇ = (∂(Φ_q q̇)/∂q) q̇: quadratic in q̇ and constant in q (Φ_qq is constant)."""
        qd = sympy.Matrix(self._rate_symbols)
        velocity = self.jacobian * qd
        return velocity.jacobian(self.symbols) * qd

    @cached_property
    def _numeric(self) -> tuple[Callable, Callable, Callable]:
        q, qd = self.symbols, self._rate_symbols
        phi = sympy.lambdify([q], sympy.Matrix(self.constraints), "numpy")
        jac = sympy.lambdify([q], self.jacobian, "numpy")
        jdq = sympy.lambdify([q, qd], self.jacobian_dot_qdot, "numpy")
        return phi, jac, jdq

    def phi(self, q: Sequence[float]) -> np.ndarray:
        """Φ(q)."""
        return np.asarray(self._numeric[0](np.asarray(q, float)), float).reshape(self.m)

    def phi_q(self, q: Sequence[float]) -> np.ndarray:
        """Φ_q(q), m × n."""
        return np.asarray(self._numeric[1](np.asarray(q, float)), float).reshape(self.m, self.n)

    def phi_q_dot_qdot(self, q: Sequence[float], qd: Sequence[float]) -> np.ndarray:
        """Φ̇_q q̇."""
        out = self._numeric[2](np.asarray(q, float), np.asarray(qd, float))
        return np.asarray(out, float).reshape(self.m)

    def rank(self, q: Sequence[float], tol: float = 1e-9) -> int:
        """Numerical rank of Φ_q at q (independent constraints there)."""
        s = np.linalg.svd(self.phi_q(q), compute_uv=False)
        return int(np.sum(s > tol * max(s.max(initial=0.0), 1.0)))

    def check(self) -> None:
        if self.mass_matrix.shape != (self.n, self.n) or self.forces.shape != (self.n,):
            raise SymgenError(
                f"{self.name}: mass matrix / forces do not match {self.n} coordinates"
            )
        free: set = set().union(*(c.free_symbols for c in self.constraints))
        unknown = sorted(map(str, free - set(self.symbols)))
        if unknown:
            raise SymgenError(f"{self.name}: constraints use unknown symbols {unknown}")


def bar_mass_matrix(mass: float, inertia_about_i: float, length: float, com_x: float,
                    com_y: float = 0.0) -> np.ndarray:
    """Planar element with basic points i, j (book eq. 4.48): q = (x_i, y_i, x_j, y_j); COM
    (com_x, com_y) in the element frame (origin i, x̄ towards j); ``inertia_about_i`` is the
    polar moment of inertia about point i."""
    m, L, i_i = mass, length, inertia_about_i
    a = m - 2 * m * com_x / L + i_i / L**2
    b = m * com_x / L - i_i / L**2
    c = m * com_y / L
    d = i_i / L**2
    return np.array([[a, 0, b, -c], [0, a, c, b], [b, c, d, 0], [-c, b, 0, d]])


__all__ = ["NaturalModel", "bar_mass_matrix"]
