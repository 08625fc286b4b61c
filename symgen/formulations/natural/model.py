"""Natural-coordinate models (García de Jalón & Bayo 1994, ch. 2 and 4): dependent Cartesian
coordinates q (points, and unit vectors in 3-D), quadratic or linear constraints Φ(q) = 0, a
constant mass matrix M and generalized forces Q.

A :class:`NaturalModel` holds everything symbolically (sympy, the expressions are small:
quadratic polynomials of a few coordinates) and numerically evaluates Φ, Φ_q and Φ̇_q q̇ for
the reference solvers (:mod:`symgen.reference.natural`); the generated kernels are built
from the same expressions (:mod:`.kernels`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import sympy

from symgen.formulations.natural.derivatives import gradient, sparse_gradient
from symgen.formulations.natural.evaluate import Unsupported, jacobian_at, value_and_gradient
from symgen.ir.printer import evaluate


def _dot(a: Sequence[sympy.Expr], b: Sequence[sympy.Expr]) -> sympy.Expr:
    """a·b as sympy's matrix product of a row and a column builds it (0 when empty)."""
    if not a:
        return sympy.S.Zero
    return (sympy.Matrix(1, len(a), list(a)) * sympy.Matrix(len(b), 1, list(b)))[0, 0]


@dataclass(frozen=True)
class JointCoordinate:
    """A 1-DOF joint's coordinate as a function of q: for a revolute joint
    ``sign·(atan2(s, c) − offset)`` with s, c the sine- and cosine-like products of two
    body-fixed vectors; for a prismatic joint ``d − offset``. Zero at assembly."""

    kind: str  # "angle" or "length"
    parts: tuple[sympy.Expr, ...]
    offset: float = 0.0
    sign: float = 1.0

    @cached_property
    def expr(self) -> sympy.Expr:
        if self.kind == "angle":
            s, c = self.parts
            return self.sign * (sympy.atan2(s, c) - self.offset)
        return self.parts[0] - self.offset


@dataclass
class Spring:
    """A linear spring-damper between two points fixed on bodies (body-frame coordinates;
    a body name of the model, or its root): force k(L − L₀) + c L̇ along the line joining
    them; ``rest_length`` None means the assembled distance."""

    body_a: str
    point_a: tuple[float, float, float]
    body_b: str
    point_b: tuple[float, float, float]
    stiffness: float
    damping: float = 0.0
    rest_length: float | None = None


@dataclass
class NaturalModel:
    """Coordinates, constraints, mass matrix and forces of a natural-coordinate model.

    - ``coordinates``: names of the dependent coordinates q (``"A.x"``, ``"u1.z"``, ...);
    - ``constraints``: Φ(q) as sympy expressions of :attr:`symbols`, with their names;
    - ``mass_matrix``: the constant n×n matrix M (book eq. 4.48 planar, 4.61 spatial);
    - ``forces``: constant generalized forces Q (gravity, eq. 4.129-4.130), n-vector;
    - ``dof``: degrees of freedom of the mechanism (n minus independent constraints);
    - ``joint_values``: per original joint, its coordinate(s) as functions of q (for
      comparison with relative-coordinate models);
    - ``joint_coordinates``: the 1-DOF joints' coordinates as expressions of q (their
      generalized forces τ enter as Q = Σ τ ∂θ/∂q, by virtual power);
    - ``spring_forces``: symbolic generalized forces of springs, dampers and actuators (of
      q, q̇ and the force parameters; :mod:`.forces`);
    - ``force_parameters``: the model parameters the force elements keep as runtime inputs
      (``params`` of the kernels that take forces), in the model's order, with their
      ``force_parameter_defaults``;
    - ``force_elements``: the elements behind ``spring_forces`` (the model's, with the
      runtime parameters kept, and further springs), for their potential
      (:func:`.forces.element_potential`).
    """

    name: str
    coordinates: list[str]
    constraints: list[sympy.Expr]
    constraint_names: list[str]
    mass_matrix: np.ndarray
    forces: np.ndarray
    dof: int | None = None
    joint_values: dict[str, Callable[[np.ndarray], float]] = field(default_factory=dict)
    joint_coordinates: dict[str, JointCoordinate] = field(default_factory=dict)
    spring_forces: list[sympy.Expr] | None = None
    q0: np.ndarray | None = None
    force_parameters: list[str] = field(default_factory=list)
    force_parameter_defaults: list[float] = field(default_factory=list)
    force_elements: list[Any] = field(default_factory=list)

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

    @property
    def force_parameter_symbols(self) -> list[sympy.Symbol]:
        """The sympy symbols of :attr:`force_parameters` (the model's parameter symbols)."""
        from symgen.model.scalars import parameter_symbol

        return [parameter_symbol(name) for name in self.force_parameters]

    @cached_property
    def _index(self) -> dict[sympy.Symbol, int]:
        """Position of every coordinate symbol."""
        return {s: i for i, s in enumerate(self.symbols)}

    @cached_property
    def _jacobian_rows(self) -> list[list[tuple[int, sympy.Expr]]]:
        """The non-zero entries (column, ∂Φ_i/∂q_j) of every row of Φ_q: a constraint
        involves a few coordinates, and ∂Φ_i/∂q_j = 0 for the others."""
        return [sparse_gradient(c, self._index) for c in self.constraints]

    @cached_property
    def jacobian(self) -> sympy.Matrix:
        """Φ_q (m × n): linear in q, since Φ is at most quadratic."""
        out = sympy.zeros(self.m, self.n)
        for r, row in enumerate(self._jacobian_rows):
            for c, d in row:
                out[r, c] = d
        return out

    @cached_property
    def jacobian_dot_qdot(self) -> sympy.Matrix:
        """Φ̇_q q̇ = (∂(Φ_q q̇)/∂q) q̇: quadratic in q̇ and constant in q (Φ_qq is constant).
        Row by row over the coordinates of each constraint (the other columns are zero)."""
        qd = self._rate_symbols
        out = []
        for row in self._jacobian_rows:
            velocity = _dot([d for _, d in row], [qd[c] for c, _ in row])
            hessian = sparse_gradient(velocity, self._index)
            out.append(_dot([d for _, d in hessian], [qd[c] for c, _ in hessian]))
        return sympy.Matrix(self.m, 1, out)

    @cached_property
    def _phi_function(self) -> Callable:
        return sympy.lambdify([self.symbols], sympy.Matrix(self.constraints), "numpy")

    @cached_property
    def _jacobian_function(self) -> tuple[Callable, np.ndarray, np.ndarray]:
        """The non-zero entries of Φ_q as one function of q, and their rows and columns."""
        cells = [(r, c, d) for r, row in enumerate(self._jacobian_rows) for c, d in row]
        rows = np.array([r for r, _, _ in cells], dtype=int)
        cols = np.array([c for _, c, _ in cells], dtype=int)
        return sympy.lambdify([self.symbols], [d for _, _, d in cells], "numpy"), rows, cols

    @cached_property
    def _jdq_function(self) -> Callable:
        return sympy.lambdify([self.symbols, self._rate_symbols], self.jacobian_dot_qdot,
                              "numpy")

    @cached_property
    def actuated(self) -> list[str]:
        """The joints whose forces/torques are inputs ``tau`` (1-DOF joints, in order)."""
        return list(self.joint_coordinates)

    @cached_property
    def joint_gradients(self) -> list[list[sympy.Expr]]:
        """∂θ_j/∂q for every joint coordinate (rows)."""
        return [self.joint_gradient(name) for name in self.joint_coordinates]

    @cached_property
    def _joint_gradient_rows(self) -> dict[str, list[sympy.Expr]]:
        return {}

    def joint_gradient(self, name: str) -> list[sympy.Expr]:
        """∂θ/∂q of joint ``name`` (its row of :attr:`joint_gradients`), built on first use."""
        rows = self._joint_gradient_rows
        if name not in rows:
            rows[name] = gradient(self.joint_coordinates[name].expr, self.symbols)
        return rows[name]

    @cached_property
    def _force_function(self) -> Callable:
        tau = sympy.symbols(f"tau0:{max(len(self.actuated), 1)}", real=True)
        total = sympy.Matrix([float(x) for x in self.forces])
        if self.spring_forces is not None:
            total += sympy.Matrix(self.spring_forces)
        for j, grad in enumerate(self.joint_gradients):
            total += tau[j] * sympy.Matrix(grad)
        return sympy.lambdify([self.symbols, self._rate_symbols, tau,
                               self.force_parameter_symbols], total, "numpy", cse=True)

    def generalized_forces(self, q, qd, tau=None, params=None) -> np.ndarray:
        """Q(q, q̇, τ, p): gravity, springs, dampers and actuators, and joint forces τ (one
        per entry of :attr:`actuated`; default zero); ``params``: values of
        :attr:`force_parameters` (default: their defaults)."""
        tau = np.zeros(max(len(self.actuated), 1)) if tau is None else np.asarray(tau, float)
        if tau.size == 0:
            tau = np.zeros(1)
        p = self.force_parameter_defaults if params is None else params
        p = np.asarray(p, float).reshape(-1)
        if p.size != len(self.force_parameters):
            from symgen.errors import SymgenError

            raise SymgenError(f"{self.name}: params needs {len(self.force_parameters)} values "
                              f"({', '.join(self.force_parameters) or 'none'}), got {p.size}")
        out = self._force_function(np.asarray(q, float), np.asarray(qd, float), tau, p)
        return np.asarray(out, float).reshape(self.n)

    def phi(self, q: Sequence[float]) -> np.ndarray:
        """Φ(q)."""
        return np.asarray(self._phi_function(np.asarray(q, float)), float).reshape(self.m)

    def phi_q(self, q: Sequence[float]) -> np.ndarray:
        """Φ_q(q), m × n."""
        fn, rows, cols = self._jacobian_function
        out = np.zeros((self.m, self.n))
        out[rows, cols] = np.asarray(fn(np.asarray(q, float)), float).reshape(-1)
        return out

    def phi_q_dot_qdot(self, q: Sequence[float], qd: Sequence[float]) -> np.ndarray:
        """Φ̇_q q̇."""
        out = self._jdq_function(np.asarray(q, float), np.asarray(qd, float))
        return np.asarray(out, float).reshape(self.m)

    def _jacobian_at(self, q: Sequence[float]) -> np.ndarray:
        """Φ_q at one q, evaluated from the constraints' trees (:mod:`.evaluate`) unless the
        lambdified Φ_q exists already."""
        if "_jacobian_function" not in self.__dict__:
            try:
                return jacobian_at(self.constraints, q, self._index, self.n)
            except Unsupported:
                pass
        return self.phi_q(q)

    @cached_property
    def _part_gradient_rows(self) -> dict[str, list[list[tuple[int, sympy.Expr]]]]:
        return {}

    def part_gradients(self, name: str) -> list[list[tuple[int, sympy.Expr]]]:
        """For each part (s, c or d) of joint ``name``'s coordinate, its non-zero partial
        derivatives (position, ∂part/∂q_position) in position order: the expressions
        ``sympy.diff`` gives, built on first use."""
        rows = self._part_gradient_rows
        if name not in rows:
            rows[name] = [sparse_gradient(p, self._index)
                          for p in self.joint_coordinates[name].parts]
        return rows[name]

    def joint_gradient_values(self, q: Sequence[float]) -> np.ndarray:
        """∂θ_j/∂q at q (one row per entry of :attr:`actuated`): the numbers of
        :attr:`joint_gradients`, evaluated from the parts of each coordinate (for an angle
        ∇θ = sign·(c∇s − s∇c)/(s² + c²)) without building the derivatives."""
        out = np.zeros((len(self.joint_coordinates), self.n))
        for row, (name, jc) in zip(out, self.joint_coordinates.items(), strict=True):
            try:
                parts = [value_and_gradient(p, q, self._index) for p in jc.parts]
            except Unsupported:
                fn = sympy.lambdify([self.symbols], self.joint_gradient(name), "numpy")
                row[:] = np.asarray(fn(np.asarray(q, float)), float).reshape(self.n)
                continue
            if jc.kind == "angle":
                (s, gs), (c, gc) = parts
                scale = jc.sign / (s * s + c * c)
                weights = ((gs, scale * c), (gc, -scale * s))
            else:
                weights = ((parts[0][1], 1.0),)
            for grad, w in weights:
                for i, v in grad.items():
                    row[i] += w * v
        return out

    def rank(self, q: Sequence[float], tol: float = 1e-9) -> int:
        """Numerical rank of Φ_q at q (independent constraints there)."""
        s = np.linalg.svd(self._jacobian_at(q), compute_uv=False)
        return int(np.sum(s > tol * max(s.max(initial=0.0), 1.0)))

    @cached_property
    def mass_null_space(self) -> np.ndarray:
        """Orthonormal basis (n × k) of the null space of M; k = 0 when M is regular.

        M is symmetric positive semi-definite; an eigenvalue below 10³·n·ε·λ_max is zero
        (the eigenvalues' rounding error is O(n·ε·λ_max), and past that point the constant
        M⁻¹ of ``nc_accelerations`` would keep no significant digit in those directions).
        M is singular when a body without mass, or without rotational inertia about some
        axis, owns natural coordinates (e.g. a point-mass body's unit vectors)."""
        m = np.asarray(self.mass_matrix, float)
        if m.size == 0:
            return np.zeros((0, 0))
        w, v = np.linalg.eigh(m)
        tol = 1e3 * self.n * np.finfo(float).eps * max(float(w[-1]), 0.0)
        return v[:, w <= tol]

    @property
    def mass_matrix_regular(self) -> bool:
        """True when M is positive definite (see :attr:`mass_null_space`)."""
        return self.mass_null_space.shape[1] == 0

    def metric_shift(self, q: Sequence[float] | None = None) -> float:
        """γ of the metric M + γΦ_qᵀΦ_q used in place of a singular M: λ_max(M)/‖Φ_q‖² at
        the assembled configuration (at ``q`` when the model has none), so both terms are of
        one size there; 0 when M is regular. Adding γΦ_qᵀ(Φ_q q̈ − g) = 0 changes neither q̈
        nor λ (the augmented-Lagrangian argument of García de Jalón & Bayo 1994, §5.2.3)."""
        if self.mass_matrix_regular:
            return 0.0
        ref = self.phi_q(self.q0 if self.q0 is not None else q)
        top = float(np.linalg.eigvalsh(np.asarray(self.mass_matrix, float))[-1])
        return top / max(float(np.linalg.norm(ref, 2)) ** 2, 1e-300)

    def step_penalty(self, h: float, mu: float, alpha: float | None = None,
                     q: Sequence[float] | None = None) -> np.ndarray:
        """The penalty matrix's diagonal of the augmented-Lagrangian step of size ``h`` with
        damping ``mu`` (:func:`.penalty.choose_penalty`; ``alpha``: a uniform one)."""
        from symgen.formulations.natural.penalty import choose_penalty

        return choose_penalty(self, h, mu, alpha, None if q is None else np.asarray(q)).alpha

    def rk4_penalties(self) -> tuple[np.ndarray, np.ndarray]:
        """The penalty matrices' diagonals of ``nc_step_rk4``'s augmented-Lagrangian solves:
        (accelerations and velocity projection, position projection)
        (:func:`.penalty.rk4_penalties`)."""
        from symgen.formulations.natural.penalty import rk4_penalties

        stage, position = rk4_penalties(self)
        return stage.alpha, position.alpha

    def step_refits(self, h: float) -> bool:
        """Whether the augmented-Lagrangian step of size ``h`` re-fits the carried
        multipliers to their force and projects exactly (:func:`.step.step_program`): for
        a mechanism with closed loops (or one built without a model, whose loops are
        unknown) at h ≤ the penalty rule's reference step, the default 1 ms. An open chain's
        constraints (each body's rigidity, its joints to the parent) stay independent at
        every configuration, so it has no singular position to pass."""
        from symgen.formulations.natural.penalty import REFERENCE_STEP

        modeller = getattr(self, "modeller", None)
        loops = bool(modeller.model.loop_joints) if modeller is not None else True
        return self.m > 0 and loops and h <= REFERENCE_STEP * (1 + 1e-9)

    def inertialess_motions(self, q: Sequence[float], tol: float = 1e-9) -> np.ndarray:
        """Basis (n × k) of the velocities with no kinetic energy that the constraints allow
        at q: null(M) ∩ null(Φ_q). Empty (k = 0) exactly when the leading matrices
        M + c Φ_qᵀΦ_q (c > 0) of the augmented-Lagrangian formulations are positive definite,
        i.e. when the accelerations are determined although M is singular (book §5.2.3:
        the augmented Lagrangian needs M + Φ_qᵀαΦ_q, not M, to be regular)."""
        null = self.mass_null_space
        if null.shape[1] == 0 or self.m == 0:
            return null
        pq = self.phi_q(q)
        _, s, vt = np.linalg.svd(pq @ null)
        scale = max(float(np.linalg.norm(pq, 2)), 1.0)
        rank = int(np.sum(s > tol * scale))
        return null @ vt[rank:].T



def check_inertia(nm: NaturalModel, modeller) -> None:
    """Raise a :class:`SymgenError` naming the bodies when the mechanism, at its assembled
    configuration, can move with zero kinetic energy (:meth:`NaturalModel.
    inertialess_motions`): the equations of motion do not determine that motion in any
    formulation. The bodies named are those whose pose changes along such a motion (each is
    massless, or has no rotational inertia about the axis it turns about)."""
    from symgen.errors import SymgenError

    free = nm.inertialess_motions(nm.q0) if nm.q0 is not None else np.zeros((nm.n, 0))
    if free.shape[1] == 0:
        return
    model = modeller.model
    moving = []
    for b, body in enumerate(model.bodies):
        rot, origin = modeller.body_pose_expr(b)
        pose = [*sympy.Matrix(rot), *sympy.Matrix(origin)]
        rate = jacobian_at(pose, nm.q0, nm._index, nm.n) @ free
        if np.max(np.abs(rate), initial=0.0) > 1e-9:
            moving.append(body)
    names = ", ".join(f"'{b.name}'" for b in moving) or "(none)"
    who = f"body {names} has" if len(moving) == 1 else f"bodies {names} have"
    lacks = ("mass" if moving and all(float(b.mass) == 0.0 for b in moving)
             else "rotational inertia")
    raise SymgenError(
        f"{nm.name}: {who} no {lacks} for a motion the joints leave free "
        f"({free.shape[1]} such motion(s) at the assembled configuration), so the "
        "natural-coordinate mass matrix is singular on the mechanism's motion and the "
        "accelerations are undetermined; give the body a mass and a rotational inertia "
        "about every axis it can turn about")


def neutral_joint_configuration(model) -> np.ndarray:
    """The model's neutral joint configuration (zeros, identity quaternions)."""
    from symgen.model.reduction import neutral_values

    return np.array([x for j in model.joints for x in neutral_values(j)], dtype=float)


def _tree_program(model, kernel: str, frame: str | None = None):
    """The tree formulation's (unoptimised) program of ``kernel``, evaluated in Python by
    the natural modellers for their numeric conversions."""
    from symgen.formulations.spatial_operators import build_kernel

    pose_names = tuple(model.body_names) + tuple(model.frame_names)
    return build_kernel(model, kernel, frame=frame, pose_names=pose_names), pose_names


def tree_poses(model, joint_q: np.ndarray) -> dict[str, np.ndarray]:
    """World 4×4 pose of the root and of every body and frame of ``model`` at ``joint_q``,
    from the tree formulation's forward kinematics."""
    program, names = _tree_program(model, "forward_kinematics")
    inputs = {"q": joint_q}
    if model.parameters:
        inputs["params"] = [p.default for p in model.parameters]
    rows = evaluate(program, **inputs)["poses"]
    out = {model.root: np.eye(4)}
    for name, pose in zip(names, rows, strict=True):
        out[name] = np.vstack([pose, [0.0, 0.0, 0.0, 1.0]])
    return out


def tree_jacobian(model, joint_q: np.ndarray, frame: str) -> np.ndarray:
    """6×nv Jacobian [angular; linear] of ``frame`` (origin velocity, world axes), from the
    tree formulation."""
    program, _ = _tree_program(model, "frame_jacobian", frame)
    inputs = {"q": joint_q}
    if model.parameters:
        inputs["params"] = [p.default for p in model.parameters]
    return evaluate(program, **inputs)["J"]


def assembly_poses(model) -> dict[str, np.ndarray]:
    """World 4×4 pose of the root and every body at the zero configuration (the assembled
    one), from the tree formulation's forward kinematics."""
    return tree_poses(model, neutral_joint_configuration(model))


def coordinate_reader(nm: NaturalModel, jc: JointCoordinate) -> Callable[[np.ndarray], float]:
    """A numeric function q → the joint coordinate (atan2 of the two products for angles).
    The parts are lambdified at the first call, over the coordinates they involve."""
    compiled: list[tuple[np.ndarray, Callable]] = []

    def read(qv) -> float:
        if not compiled:
            index = nm._index
            used = sorted({s for p in jc.parts for s in p.free_symbols if s in index},
                          key=index.__getitem__)
            columns = np.array([index[s] for s in used], dtype=int)
            compiled.append((columns, sympy.lambdify(used, list(jc.parts), "numpy")))
        columns, fn = compiled[0]
        parts = [float(x) for x in fn(*np.asarray(qv, float)[columns])]
        if jc.kind == "angle":
            return jc.sign * (float(np.arctan2(parts[0], parts[1])) - jc.offset)
        return parts[0] - jc.offset

    return read


def spring_forces(
    symbols: Sequence[sympy.Symbol], rates: Sequence[sympy.Symbol],
    springs: Sequence[tuple[sympy.Matrix, sympy.Matrix, Any, sympy.Expr | float]],
) -> list[sympy.Expr]:
    """Generalized forces of linear spring-dampers between points r_a(q), r_b(q) (book
    eq. 4.102-4.107, with Q = −∂V/∂q and the damper's −c L̇ ∂L/∂q):
    Q = −(k(L − L₀) + c L̇) ∂L/∂q, L = |d|, d = r_b − r_a, written with d's Jacobian
    D = ∂d/∂q as ∂L/∂q = dᵀD/L and L̇ = dᵀ(D q̇)/L (compact: each Q entry holds d once).
    Each spring is (r_a, r_b, element, assembled length); the element (a :class:`Spring` or
    a model's ``PointSpring``) gives k, c and L₀ (None: the assembled length), numbers or
    parameter symbols."""
    total = [sympy.Integer(0)] * len(symbols)
    position = {s: i for i, s in enumerate(symbols)}
    for ra, rb, spring, assembled in springs:
        d = sympy.Matrix(rb - ra)
        # D's columns of the coordinates d involves (the others are zero)
        used = sorted({position[s] for s in d.free_symbols if s in position})
        if not used:  # both points fixed: no generalized force
            continue
        jac = d.jacobian([symbols[i] for i in used])
        length = sympy.sqrt(d.dot(d))
        rate = d.dot(jac * sympy.Matrix([rates[i] for i in used])) / length
        rest = assembled if spring.rest_length is None else spring.rest_length
        force = spring.stiffness * (length - rest) + spring.damping * rate
        for k, i in enumerate(used):
            g = d.dot(jac[:, k]) / length
            if g != 0:
                total[i] = total[i] - force * g
    return total


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


__all__ = [
    "JointCoordinate",
    "assembly_poses",
    "neutral_joint_configuration",
    "tree_jacobian",
    "tree_poses",
    "NaturalModel",
    "Spring",
    "bar_mass_matrix",
    "check_inertia",
    "coordinate_reader",
    "spring_forces",
]
