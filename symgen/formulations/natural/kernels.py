"""Natural-coordinate kernels as straight-line programs (emitted to C like every kernel).

- ``nc_mass_matrix``: the constant M (book eq. 4.48 / 4.61);
- ``nc_constraints``, ``nc_jacobian``, ``nc_jacobian_dot_qdot``: Φ(q), Φ_q(q) (dense,
  row-major; its sparsity pattern is fixed and listed in the kernel's documentation) and
  Φ̇_q q̇;
- ``nc_forces``: Q (gravity; constant with these elements);
- ``nc_accelerations``: q̈ and λ by Lagrange multipliers with Baumgarte stabilisation
  (book eq. 5.10, 5.28), through the Schur complement Φ_q M⁻¹ Φ_qᵀ with the constant M⁻¹
  computed at generation: one unrolled m×m LDLᵀ (needs independent constraints);
- ``nc_step``, ``nc_step_rk4``: the integration steps (:mod:`.step`);
- ``nc_assemble``: Newton-Raphson on Φ(q) = 0 with damped least-squares steps
  (ΦqᵀΦq + εI)Δq = −ΦqᵀΦ (eq. 3.15; redundancy tolerated), a fixed number of iterations.

- ``nc_joint_values``: each 1-DOF joint's angle/displacement and rate, angles continued
  from the previous values (unwrapped);
- ``nc_velocities``: consistent velocities from the independent joints' rates;
- ``nc_body_poses``: the world pose of every body (A = X X̄⁻¹).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import sympy

from symgen.formulations import sparse
from symgen.formulations.dense import Matrix, Vector, gram
from symgen.formulations.natural.derivatives import sparse_gradient
from symgen.formulations.natural.forces import add_force_elements, element_forces, params_input
from symgen.formulations.natural.model import NaturalModel, Spring
from symgen.formulations.natural.penalty import REFERENCE_STEP, PenaltyChoice, choose_penalty
from symgen.ir.expr import ZERO, Expr, as_expr, atan2, cos, esum, from_sympy, sin
from symgen.ir.program import Program, ProgramBuilder


@dataclass(frozen=True)
class NaturalOptions:
    """Generation settings of the natural-coordinate kernels."""

    step: float = REFERENCE_STEP
    alpha: float | None = None
    mu: float | None = None
    iterations: int = 2
    baumgarte: float = 10.0
    assembly_iterations: int = 8

    @property
    def damping(self) -> float:
        """μ of the step's penalty term α(Φ + μΦ̇) (default h/50)."""
        return self.mu if self.mu is not None else self.step / 50.0

    def penalty(self, nm: NaturalModel) -> PenaltyChoice:
        """The step's penalty matrix (:func:`.penalty.choose_penalty`)."""
        return choose_penalty(nm, self.step, self.damping, self.alpha)


class Evaluator:
    """Φ, Φ_q, Φ̇_q q̇ and Q of a natural model at program atoms, emitted."""

    def __init__(self, nm: NaturalModel) -> None:
        self.nm = nm
        self.jac = [[nm.jacobian[i, j] for j in range(nm.n)] for i in range(nm.m)]
        self.jdq = [nm.jacobian_dot_qdot[i] for i in range(nm.m)]

    def _map(self, q: Sequence[Expr], qd: Sequence[Expr] | None = None) -> dict:
        out = {s: q[i] for i, s in enumerate(self.nm.symbols)}
        if qd is not None:
            out.update({s: qd[i] for i, s in enumerate(self.nm._rate_symbols)})
        return out

    def phi(self, b: ProgramBuilder, q) -> Vector:
        mp = self._map(q)
        return Vector(b.emit(from_sympy(c, mp)) for c in self.nm.constraints)

    def phi_q(self, b: ProgramBuilder, q) -> Matrix:
        mp = self._map(q)
        return Matrix(([b.emit(from_sympy(e, mp)) if e != 0 else ZERO for e in row]
                       for row in self.jac), self.nm.n)

    def phi_q_dot_qdot(self, b: ProgramBuilder, q, qd) -> Vector:
        mp = self._map(q, qd)
        return Vector(b.emit(from_sympy(e, mp)) for e in self.jdq)

    def forces(self, b: ProgramBuilder, q, qd, tau) -> Vector:
        """Q(q, q̇, τ, p) = gravity + springs/dampers/actuators + Σ τ_j ∂θ_j/∂q; the force
        parameters p are the program's ``params`` input (declared on first use)."""
        nm = self.nm
        mp = self._map(q, qd)
        if nm.force_parameters:
            mp.update(zip(nm.force_parameter_symbols, params_input(b, nm), strict=True))
        total: list[Expr] = [b.emit(float(x)) for x in nm.forces]
        if nm.spring_forces is not None:
            total = [b.emit(t + from_sympy(e, mp)) for t, e in zip(total, nm.spring_forces,
                                                                   strict=True)]
        planar = _planar_joint_torques(nm)
        for j, name in enumerate(nm.actuated):
            if j in planar:
                continue
            grad = nm.joint_gradient(name)
            total = [b.emit(t + tau[j] * from_sympy(g, mp)) if g != 0 else t
                     for t, g in zip(total, grad, strict=True)]
        if planar:
            total = _add_body_torques(b, nm, mp, tau, planar, total)
        return Vector(total)


def _planar_joint_torques(nm: NaturalModel) -> dict[int, tuple[int, int, float]]:
    """For a planar model: {index in ``tau``: (parent, child, sign)} of its revolute joints.
    Such a joint's angle is θ = sign·(φ_child − φ_parent) + const, φ_b the direction angle
    of body b's base vector e_b = r_j − r_i (the joint's reading vectors are e_p and e_c
    turned and scaled by constants), so its virtual power τ θ̇ distributes as body torques
    (:func:`_add_body_torques`)."""
    from symgen.formulations.natural.planar import PlanarModeller

    mod = getattr(nm, "modeller", None)
    if not isinstance(mod, PlanarModeller):
        return {}
    index = {name: k for k, name in enumerate(nm.actuated)}
    out = {}
    for joint, parent, child in mod.revolute:
        jc = nm.joint_coordinates[joint.name]
        out[index[joint.name]] = (parent, child, float(jc.sign))
    return out


def _add_body_torques(b: ProgramBuilder, nm: NaturalModel, mp: dict,
                      tau, planar: dict[int, tuple[int, int, float]],
                      total: list[Expr]) -> list[Expr]:
    """Q += Σ_b T_b ∂φ_b/∂q with T_b = Σ_j ±sign_j τ_j the net joint torque on body b and
    ∂φ/∂e = n(e)/|e|² (n(e) = (−e_y, e_x): the gradient of the direction angle of e),
    applied to the body's base points as +∂/∂r_j, −∂/∂r_i: the same generalized force as
    Σ τ_j ∂θ_j/∂q (virtual power), O(bodies) operations instead of a gradient per joint."""
    mod = nm.modeller
    net: dict[int, Expr] = {}
    for j, (parent, child, sign) in planar.items():
        for body, s in ((child, sign), (parent, -sign)):
            if body >= 0:
                net[body] = net.get(body, ZERO) + s * tau[j]
    total = list(total)
    for body in sorted(net):
        torque = b.emit(net[body])
        i, j = mod._base(body)
        e, _ = mod.base_vectors[body]
        ex, ey = (b.emit(from_sympy(c, mp)) for c in e)
        scale = b.emit(torque / (ex * ex + ey * ey))
        gx, gy = b.emit(-ey * scale), b.emit(ex * scale)
        for point, sign in ((j, 1.0), (i, -1.0)):
            slots = mod.index.get(point)
            if slots is None:
                continue
            total[slots[0]] = b.emit(total[slots[0]] + sign * gx)
            total[slots[1]] = b.emit(total[slots[1]] + sign * gy)
    return total


def state_inputs(b: ProgramBuilder, nm: NaturalModel):
    """Inputs q, qd and, when the model has 1-DOF joints, their forces tau; then, when
    force elements keep runtime parameters, params (:func:`.forces.params_input`)."""
    q = b.input("q", nm.n, "natural coordinates")
    qd = b.input("qd", nm.n, "natural velocities")
    tau = b.input("tau", len(nm.actuated), "joint forces/torques (" +
                  ", ".join(nm.actuated) + ")") if nm.actuated else []
    if nm.force_parameters:
        params_input(b, nm)
    return q, qd, tau


def mass_matrix_program(nm: NaturalModel) -> Program:
    b = ProgramBuilder("nc_mass_matrix", "constant mass matrix M of the natural coordinates")
    b.output("M", (nm.n, nm.n), [float(x) for x in nm.mass_matrix.reshape(-1)],
             "mass matrix (n x n, row-major), constant")
    return b.build()


def constraint_programs(nm: NaturalModel) -> list[Program]:
    ev = Evaluator(nm)
    out = []
    b = ProgramBuilder("nc_constraints", "constraint vector Phi(q)")
    q = b.input("q", nm.n, "natural coordinates")
    b.output("phi", nm.m, ev.phi(b, q), "constraint residuals")
    out.append(b.build())
    b = ProgramBuilder("nc_jacobian", "constraint Jacobian Phi_q(q), m x n, row-major")
    q = b.input("q", nm.n, "natural coordinates")
    b.output("Phi_q", (nm.m, nm.n), [x for row in ev.phi_q(b, q) for x in row],
             "constraint Jacobian (m x n, row-major); fixed sparsity pattern")
    out.append(b.build())
    b = ProgramBuilder("nc_jacobian_dot_qdot", "dPhi_q/dt * qdot (constant in q)")
    q = b.input("q", nm.n, "natural coordinates")
    qd = b.input("qd", nm.n, "natural velocities")
    b.output("phi_q_dot_qd", nm.m, ev.phi_q_dot_qdot(b, q, qd), "dPhi_q/dt * qdot")
    out.append(b.build())
    b = ProgramBuilder("nc_forces", "generalized forces Q (gravity, springs, joint forces)")
    q, qd, tau = state_inputs(b, nm)
    b.output("Q", nm.n, ev.forces(b, q, qd, tau), "generalized forces")
    out.append(b.build())
    return out


@dataclass
class Saddle:
    """The saddle-point system of a configuration, [[A, Φ_qᵀ], [Φ_q, 0]], factored once:
    A = M, or M + γΦ_qᵀΦ_q for a singular M (``gamma`` > 0). Two factorizations, the
    cheaper chosen at generation (:func:`saddle`): the range-space (Schur complement)
    one with W = A⁻¹Φ_qᵀ and S = Φ_q W (dense m × m: small mechanisms), or a sparse LDLᵀ
    of the whole matrix (:func:`.sparse.factor_saddle`: long chains). Both drop the
    multipliers of redundant constraints (semidefinite pivots)."""

    solve: Callable[[Sequence[Expr], Sequence[Expr]], tuple[Sequence[Expr], Sequence[Expr]]]
    gamma: float

    def correction(self, b: ProgramBuilder, n: int, residual: Sequence[Expr]) -> Vector:
        """The A-orthogonal (least-kinetic-energy) Δ with Φ_q Δ = −r."""
        return Vector(self.solve([ZERO] * n, (-Vector(residual)).emit(b))[0])


def _pivot_scales(nm: NaturalModel) -> np.ndarray:
    """Φ_j A⁻¹ Φ_jᵀ at the assembled configuration: the size of each multiplier pivot."""
    pq = nm.phi_q(nm.q0)
    a = np.asarray(nm.mass_matrix, float) + nm.metric_shift() * pq.T @ pq
    scales = np.einsum("ij,ji->i", pq, np.linalg.solve(a, pq.T))
    return np.where(scales > 0, scales, float(scales.max(initial=1.0)) or 1.0)


def _schur_cost(nm: NaturalModel) -> int:
    """Operations of the range-space factorization and one solve, estimated: W = A⁻¹Φ_qᵀ
    with a dense A⁻¹ (2 n nnz(Φ_q)), S = Φ_q W (2 m nnz(Φ_q)), the LDLᵀ of S (m³/3)."""
    nnz = int(np.count_nonzero(nm.phi_q(nm.q0)))
    return 2 * nm.n * nnz + 2 * nm.m * nnz + nm.m ** 3 // 3


def _saddle_cost(nm: NaturalModel) -> int:
    """Operations of the sparse LDLᵀ of the saddle-point matrix and one solve (symbolic
    count, :func:`.sparse.operation_count`, in the order of :func:`.sparse.saddle_ordering`)."""
    key = "_saddle_cost"
    if key not in nm.__dict__:
        n, m = nm.n, nm.m
        pq = nm.phi_q(nm.q0)
        a = np.asarray(nm.mass_matrix, float) + (0.0 if nm.mass_matrix_regular
                                                 else pq.T @ pq)
        lower = [tuple(i for i in range(j + 1, n) if a[i, j] != 0)
                 + tuple(n + r for r in range(m) if pq[r, j] != 0) for j in range(n)]
        lower += [() for _ in range(m)]
        pattern = sparse.Pattern(n + m, tuple(lower), tuple([True] * n + [False] * m))
        nm.__dict__[key] = sparse.operation_count(pattern,
                                                  sparse.saddle_ordering(pattern, n)).total
    return nm.__dict__[key]


def _use_sparse_saddle(nm: NaturalModel) -> bool:
    """True when the sparse LDLᵀ of the saddle-point matrix costs fewer operations than the
    range-space factorization."""
    return _saddle_cost(nm) < _schur_cost(nm)


def saddle(b: ProgramBuilder, nm: NaturalModel, pq: Matrix) -> Saddle:
    """The factored saddle-point system at Φ_q = ``pq`` (:class:`Saddle`)."""
    gamma = nm.metric_shift()
    mm = Matrix.constant(nm.mass_matrix)
    if gamma:
        a = (mm + gram(b, pq, gamma)).emit(b)
    else:
        a = Matrix([as_expr(x) for x in row] for row in mm)
    if _use_sparse_saddle(nm):
        f = sparse.factor_saddle(b, a, pq, [float(x) for x in _pivot_scales(nm)])
        return Saddle(lambda top, bottom: sparse.solve_saddle(b, f, top, bottom), gamma)
    if gamma:
        lead = sparse.factor_auto(b, a)

        def solve_a(x: Sequence[Expr]) -> Vector:
            return Vector(sparse.solve(b, lead, x))

        w = Matrix([solve_a(row) for row in pq], nm.n).T  # W = A⁻¹Φ_qᵀ
    else:
        minv = Matrix.constant(np.linalg.inv(nm.mass_matrix))

        def solve_a(x: Sequence[Expr]) -> Vector:
            return (minv @ x).emit(b)

        w = (minv @ pq.T).emit(b)
    s = (pq @ w).emit(b)  # S = Φ_q W
    factor = sparse.factor_auto(b, s, semidefinite_tolerance=sparse.SEMIDEFINITE_TOLERANCE)

    def solve(top: Sequence[Expr], bottom: Sequence[Expr]) -> tuple[Vector, Vector]:
        free = solve_a(top)
        lam = Vector(sparse.solve(b, factor, (pq @ free - bottom).emit(b)))
        return (free - w @ lam).emit(b), lam

    return Saddle(solve, gamma)


def lagrange(b: ProgramBuilder, nm: NaturalModel, ev: Evaluator, q, qd, tau,
             baumgarte: float, known: tuple[Saddle, Matrix] | None = None,
             ) -> tuple[Vector, Vector, Saddle, Matrix]:
    """q̈, λ (and the factored saddle-point system and Φ_q) at (q, q̇): see
    :func:`accelerations_program`; ``known``: the system and Φ_q already built at q."""
    pq = ev.phi_q(b, q) if known is None else known[1]
    phi = ev.phi(b, q)
    jdq = ev.phi_q_dot_qdot(b, q, qd)
    a = baumgarte
    rate = (pq @ qd).emit(b)
    g = (-jdq - 2 * a * rate - a * a * phi).emit(b)  # eq. 5.28
    forces = ev.forces(b, q, qd, tau)
    sd = saddle(b, nm, pq) if known is None else known[0]
    if sd.gamma:
        forces = (forces + sd.gamma * (pq.T @ g).emit(b)).emit(b)
    qdd, lam = sd.solve(forces, g)
    return Vector(qdd), Vector(lam), sd, pq


def accelerations_program(nm: NaturalModel, opts: NaturalOptions) -> Program:
    """Lagrange multipliers + Baumgarte (α = β = ``opts.baumgarte``) by the Schur
    complement: (Φ_q A⁻¹ Φ_qᵀ) λ = Φ_q A⁻¹ Q̃ − g, q̈ = A⁻¹(Q̃ − Φ_qᵀλ),
    g = −Φ̇_q q̇ − 2αΦ̇ − β²Φ (book eq. 5.11-5.12, 5.28).

    With a regular M: A = M, Q̃ = Q, and the constant M⁻¹ is computed at generation. With a
    singular M (a body without mass or rotational inertia owns coordinates) whose null space
    the constraints cover (:meth:`.NaturalModel.inertialess_motions` is empty, checked when
    the model is built): A = M + γΦ_qᵀΦ_q, Q̃ = Q + γΦ_qᵀg, factored at run time (n×n
    LDLᵀ). Since Φ_q q̈ = g, adding γΦ_qᵀ(Φ_q q̈ − g) = 0 to M q̈ + Φ_qᵀλ = Q changes neither
    q̈ nor λ (the augmented-Lagrangian argument of book §5.2.3); γ = λ_max(M)/‖Φ_q(q₀)‖²
    makes both terms of A of one size at assembly.

    Redundant constraints make S = Φ_q A⁻¹ Φ_qᵀ singular: its LDLᵀ is semidefinite
    (:func:`.sparse.factor` with a pivot tolerance), so a dependent row's multiplier is 0
    and q̈ is the unique constrained acceleration; λ is then one of the equivalent sets."""
    ev = Evaluator(nm)
    b = ProgramBuilder("nc_accelerations", "accelerations and multipliers (Lagrange + Baumgarte)")
    q, qd, tau = state_inputs(b, nm)
    qdd, lam, _, _ = lagrange(b, nm, ev, q, qd, tau, opts.baumgarte)
    b.output("qdd", nm.n, qdd, "natural accelerations")
    b.output("lam", nm.m, lam, "Lagrange multipliers")
    return b.build()


def joint_values_program(nm: NaturalModel) -> Program | None:
    """Each 1-DOF joint's coordinate (angle or displacement), relative to the assembled
    configuration, and its rate: θ̇ = (c ṡ − s ċ)/(s² + c²), ḋ = ∇d·q̇. An angle
    θ = sign·(atan2(s, c) − offset) is continued from ``near`` (the previous values):
    θ = near + wrap(θ − near) = near + sign·atan2(s cos ψ − c sin ψ, c cos ψ + s sin ψ),
    ψ = offset + sign·near (the reading vectors turned back by ψ), the value of θ within
    ±π of ``near``: unwrapped along a motion whose angles change by less than π between
    calls."""
    if not nm.actuated:
        return None
    b = ProgramBuilder("nc_joint_values", "joint angles/displacements and rates ("
                       + ", ".join(nm.actuated) + ")")
    q = b.input("q", nm.n, "natural coordinates")
    qd = b.input("qd", nm.n, "natural velocities")
    near = b.input("near", len(nm.actuated), "joint values to continue from (the previous "
                   "call's values; zeros: the angles within pi of the assembled configuration)")
    mp = {s: q[i] for i, s in enumerate(nm.symbols)}
    position = {s: i for i, s in enumerate(nm.symbols)}
    values, rates = [], []
    for jc, previous in zip(nm.joint_coordinates.values(), near, strict=True):
        comp = [b.emit(from_sympy(p, mp)) for p in jc.parts]
        dots = [b.emit(esum(from_sympy(d, mp) * qd[i] for i, d in sparse_gradient(p, position)))
                for p in jc.parts]
        if jc.kind == "angle":
            s, c = comp
            psi = b.emit(jc.offset + jc.sign * previous)
            cp, sp = b.emit(cos(psi)), b.emit(sin(psi))
            turned = atan2(b.emit(s * cp - c * sp), b.emit(c * cp + s * sp))
            values.append(b.emit(previous + jc.sign * turned))
            rates.append(b.emit(jc.sign * (c * dots[0] - s * dots[1]) / (s * s + c * c)))
        else:
            values.append(b.emit(comp[0] - jc.offset))
            rates.append(dots[0])
    b.output("values", len(values), values, "joint angles (rad) / displacements (m)")
    b.output("rates", len(rates), rates, "their rates")
    return b.build()


def independent_joints(nm: NaturalModel) -> list[str]:
    """1-DOF joints whose coordinates complete the constraints at assembly: chosen in order,
    each kept when it raises the rank of [Φ_q; ∇θ] (the mechanism's independent set)."""
    if "_independent_joints" in nm.__dict__:
        return list(nm.__dict__["_independent_joints"])
    rows = [nm.phi_q(nm.q0)]
    chosen = []
    rank = nm.rank(nm.q0)
    for name, row in zip(nm.actuated, nm.joint_gradient_values(nm.q0), strict=True):
        trial = np.vstack([*rows, row])
        r = int(np.linalg.matrix_rank(trial, tol=1e-9 * max(np.abs(trial).max(), 1.0)))
        if r > rank:
            rows.append(row[None, :])
            chosen.append(name)
            rank = r
    nm.__dict__["_independent_joints"] = tuple(chosen)
    return chosen


def velocities_program(nm: NaturalModel) -> Program | None:
    """Consistent velocities from the rates of the independent joints:
    (Φ_qᵀΦ_q + GᵀG) q̇ = Gᵀ ż with G the joints' gradients (least squares: redundant
    constraints are fine; the system is SPD when the joints complete the constraints)."""
    chosen = independent_joints(nm)
    if len(chosen) == 0 or nm.n - nm.rank(nm.q0) != len(chosen):
        return None
    ev = Evaluator(nm)
    b = ProgramBuilder("nc_velocities", "consistent velocities from the independent joint "
                       "rates (" + ", ".join(chosen) + ")")
    q = b.input("q", nm.n, "natural coordinates (assembled)")
    zd = b.input("zd", len(chosen), "rates of " + ", ".join(chosen))
    mp = {s: q[i] for i, s in enumerate(nm.symbols)}
    g = [[b.emit(from_sympy(e, mp)) if e != 0 else ZERO
          for e in nm.joint_gradient(name)] for name in chosen]
    pq = ev.phi_q(b, q)
    normal = (gram(b, pq, 1.0) + gram(b, g, 1.0)).emit(b)
    rhs = (Matrix(g, nm.n).T @ zd).emit(b)
    b.output("qd", nm.n, sparse.solve(b, sparse.factor_auto(b, normal), rhs), "natural velocities")
    return b.build()


def body_poses_program(nm: NaturalModel) -> Program:
    """World pose [R | p] of every body from the natural coordinates (A = X X̄⁻¹)."""
    mod = nm.modeller
    nb = mod.model.nbodies
    b = ProgramBuilder("nc_body_poses", "world pose [R | p] (3x4) of every body")
    q = b.input("q", nm.n, "natural coordinates")
    mp = {s: q[i] for i, s in enumerate(nm.symbols)}
    values = []
    for body in range(nb):
        rot, origin = mod.body_pose_expr(body)
        for r in range(3):
            values += [from_sympy(sympy.sympify(rot[r, c]), mp) for c in range(3)]
            values.append(from_sympy(sympy.sympify(origin[r]), mp))
    b.output("poses", (nb, 3, 4), values, "world pose of each body, model order")
    return b.build()


def assemble_program(nm: NaturalModel, opts: NaturalOptions) -> Program:
    """Damped least-squares Newton-Raphson: (Φ_qᵀΦ_q + εI) Δq = −Φ_qᵀ Φ, ε = 1e-9."""
    ev = Evaluator(nm)
    n = nm.n
    b = ProgramBuilder("nc_assemble", "assembly: Newton-Raphson on Phi(q) = 0 from a guess")
    q = Vector(b.input("q", n, "rough guess of the natural coordinates"))
    damping = Matrix.constant(1e-9 * np.eye(n))
    for _ in range(opts.assembly_iterations):
        pq = ev.phi_q(b, q)
        phi = ev.phi(b, q)
        normal = (gram(b, pq, 1.0) + damping).emit(b)
        rhs = (pq.T @ phi).emit(b)
        step = sparse.solve(b, sparse.factor_auto(b, normal), rhs)
        q = (q - step).emit(b)
    b.output("q_assembled", n, q, "assembled natural coordinates")
    return b.build()


def natural_notes(nm: NaturalModel) -> list[str]:
    """Header documentation: the coordinates, the constraints and the Jacobian's fixed
    sparsity pattern."""
    lines = [f"Natural coordinates (n = {nm.n}; {nm.m} constraints; {nm.dof} DOF):"]
    lines += [f"  q[{i}] = {name}" for i, name in enumerate(nm.coordinates)]
    lines.append("Constraints (rows of phi and Phi_q) and the columns where Phi_q is non-zero:")
    for r, name in enumerate(nm.constraint_names):
        cols = [str(c) for c in range(nm.n) if nm.jacobian[r, c] != 0]
        lines.append(f"  {r}: {name}; columns {' '.join(cols)}")
    return lines


def describe_natural(nm: NaturalModel) -> str:
    """The text of ``symgen info MODEL --natural``: coordinates, constraints, the Jacobian's
    sparsity and the count check n − rank(Φ_q) = DOF."""
    rank = nm.rank(nm.q0)
    lines = natural_notes(nm)
    lines.append(f"count check: {nm.n} coordinates - {rank} independent constraints = "
                 f"{nm.n - rank} DOF ({nm.m - rank} redundant of {nm.m} constraints, rank of "
                 "Phi_q at the assembled configuration)")
    return "\n".join(lines)


def natural_model(model, springs: Sequence[Spring] = ()) -> NaturalModel:
    """The natural-coordinate model of ``model``: planar modelling for ``plane: xy``
    models, spatial otherwise, with the model's force elements (:mod:`.forces`);
    ``springs``: further linear spring-dampers between body points."""
    from symgen.errors import SymgenError
    from symgen.formulations.natural.planar import planar_model
    from symgen.formulations.natural.spatial import spatial_model
    from symgen.model.elements import PointSpring

    if model.coupled:
        raise SymgenError(
            f"model {model.name!r} has couplings ({', '.join(model.coupled)}): the "
            "natural-coordinate formulation does not impose them; use the joint-coordinate "
            "kernels, or load the model with couplings=False (--no-couplings)"
        )
    for joint in model.joints:
        if any(x != 0 for x in joint.armature):
            raise SymgenError(
                f"joint {joint.name!r}: armature has no natural-coordinate counterpart; "
                "remove it to build the natural-coordinate model"
            )
    nm = planar_model(model) if model.plane == "xy" else spatial_model(model)
    if springs:
        nm.force_elements = [
            PointSpring(f"springs[{k}]", s.body_a, tuple(s.point_a), s.body_b, tuple(s.point_b),
                        s.stiffness, s.damping, s.rest_length)
            for k, s in enumerate(springs)]
        nm.spring_forces = element_forces(nm, nm.force_elements)
    add_force_elements(nm, model)
    return nm


__all__ = [
    "NaturalOptions",
    "accelerations_program",
    "assemble_program",
    "body_poses_program",
    "constraint_programs",
    "describe_natural",
    "independent_joints",
    "joint_values_program",
    "mass_matrix_program",
    "natural_model",
    "natural_notes",
    "velocities_program",
]
