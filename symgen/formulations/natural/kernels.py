"""Natural-coordinate kernels as straight-line programs (emitted to C like every kernel).

- ``nc_mass_matrix``: the constant M (book eq. 4.48 / 4.61);
- ``nc_constraints``, ``nc_jacobian``, ``nc_jacobian_dot_qdot``: Φ(q), Φ_q(q) (dense,
  row-major; its sparsity pattern is fixed and listed in the kernel's documentation) and
  Φ̇_q q̇;
- ``nc_forces``: Q (gravity; constant with these elements);
- ``nc_accelerations``: q̈ and λ by Lagrange multipliers with Baumgarte stabilisation
  (book eq. 5.10, 5.28), through the Schur complement Φ_q M⁻¹ Φ_qᵀ with the constant M⁻¹
  computed at generation: one unrolled m×m LDLᵀ (needs independent constraints);
- ``nc_step``: one step of the index-3 augmented Lagrangian with the trapezoidal rule, a
  fixed number of Newton iterations on the quasi-tangent (4/h²)M + βΦ_qᵀΦ_q (unrolled n×n
  LDLᵀ), the Heun/Taylor predictor and mass-orthogonal projections (book §8.5; reference:
  :func:`.solvers.trapezoidal_step`); h, α, μ and the iteration count are baked in;
- ``nc_assemble``: Newton-Raphson on Φ(q) = 0 with damped least-squares steps
  (ΦqᵀΦq + εI)Δq = −ΦqᵀΦ (eq. 3.15; redundancy tolerated), a fixed number of iterations.

- ``nc_joint_values``: each 1-DOF joint's angle/displacement and rate;
- ``nc_velocities``: consistent velocities from the independent joints' rates;
- ``nc_body_poses``: the world pose of every body (A = X X̄⁻¹).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import sympy

from symgen.formulations import sparse
from symgen.formulations.natural.derivatives import sparse_gradient
from symgen.formulations.natural.forces import add_force_elements, element_forces, params_input
from symgen.formulations.natural.model import NaturalModel, Spring
from symgen.ir.expr import ZERO, Expr, as_expr, atan2, esum, from_sympy
from symgen.ir.program import Program, ProgramBuilder


@dataclass(frozen=True)
class NaturalOptions:
    """Generation settings of the natural-coordinate kernels."""

    step: float = 1e-3
    alpha: float | None = None
    mu: float | None = None
    iterations: int = 2
    baumgarte: float = 10.0
    assembly_iterations: int = 8

    @property
    def damping(self) -> float:
        """μ of the step's penalty term α(Φ + μΦ̇) (default h/50)."""
        return self.mu if self.mu is not None else self.step / 50.0

    def penalty(self, nm: NaturalModel):
        """The step's penalty matrix (:func:`.penalty.choose_penalty`)."""
        from symgen.formulations.natural.penalty import choose_penalty

        return choose_penalty(nm, self.step, self.damping, self.alpha)


class _Evaluator:
    """Φ, Φ_q and Φ̇_q q̇ of a natural model at program atoms."""

    def __init__(self, nm: NaturalModel) -> None:
        self.nm = nm
        self.jac = [[nm.jacobian[i, j] for j in range(nm.n)] for i in range(nm.m)]
        self.jdq = [nm.jacobian_dot_qdot[i] for i in range(nm.m)]

    def _map(self, q: Sequence[Expr], qd: Sequence[Expr] | None = None) -> dict:
        out = {s: q[i] for i, s in enumerate(self.nm.symbols)}
        if qd is not None:
            out.update({s: qd[i] for i, s in enumerate(self.nm._rate_symbols)})
        return out

    def phi(self, b: ProgramBuilder, q) -> list[Expr]:
        mp = self._map(q)
        return [b.emit(from_sympy(c, mp)) for c in self.nm.constraints]

    def phi_q(self, b: ProgramBuilder, q) -> list[list[Expr]]:
        mp = self._map(q)
        return [[b.emit(from_sympy(e, mp)) if e != 0 else ZERO for e in row] for row in self.jac]

    def phi_q_dot_qdot(self, b: ProgramBuilder, q, qd) -> list[Expr]:
        mp = self._map(q, qd)
        return [b.emit(from_sympy(e, mp)) for e in self.jdq]

    def forces(self, b: ProgramBuilder, q, qd, tau) -> list[Expr]:
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
        return total


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


def _state_inputs(b: ProgramBuilder, nm: NaturalModel):
    """Inputs q, qd and, when the model has 1-DOF joints, their forces tau; then, when
    force elements keep runtime parameters, params (:func:`.forces.params_input`)."""
    q = b.input("q", nm.n, "natural coordinates")
    qd = b.input("qd", nm.n, "natural velocities")
    tau = b.input("tau", len(nm.actuated), "joint forces/torques (" +
                  ", ".join(nm.actuated) + ")") if nm.actuated else []
    if nm.force_parameters:
        params_input(b, nm)
    return q, qd, tau


def _mat_vec(b, a, x) -> list[Expr]:
    return [b.emit(esum(a_ij * x_j for a_ij, x_j in zip(row, x, strict=True))) for row in a]


def _mat_t_vec(b, a, x) -> list[Expr]:
    return [b.emit(esum(a[i][j] * x[i] for i in range(len(a)))) for j in range(len(a[0]))]


def _const(m: np.ndarray) -> list[list[float]]:
    return [[float(x) for x in row] for row in m]


def _gram(b, a, weight) -> list[list[Expr]]:
    """aᵀ W a with W = weight·I (a number) or diag(weight) (one per row of a); symmetric,
    upper triangle emitted. Only the pairs of columns that share a row of a's fixed
    sparsity pattern are formed (generation speed on long chains)."""
    n = len(a[0])
    rows = len(a)
    w = [float(x) for x in weight] if np.ndim(weight) else [float(weight)] * rows
    uniform = np.ndim(weight) == 0
    shared: dict[tuple[int, int], list[int]] = {}
    for k in range(rows):
        support = [c for c in range(n) if not sparse.structural_zero(a[k][c])]
        for x, i in enumerate(support):
            for j in support[x:]:
                shared.setdefault((i, j), []).append(k)
    upper: dict[tuple[int, int], Expr] = {}
    for (i, j), ks in sorted(shared.items()):
        if uniform:
            upper[i, j] = b.emit(w[0] * esum(a[k][i] * a[k][j] for k in ks))
        else:
            upper[i, j] = b.emit(esum(w[k] * a[k][i] * a[k][j] for k in ks))
    return [[upper.get((min(i, j), max(i, j)), ZERO) for j in range(n)] for i in range(n)]


def mass_matrix_program(nm: NaturalModel) -> Program:
    b = ProgramBuilder("nc_mass_matrix", "constant mass matrix M of the natural coordinates")
    b.output("M", (nm.n, nm.n), [float(x) for x in nm.mass_matrix.reshape(-1)],
             "mass matrix (n x n, row-major), constant")
    return b.build()


def constraint_programs(nm: NaturalModel) -> list[Program]:
    ev = _Evaluator(nm)
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
    q, qd, tau = _state_inputs(b, nm)
    b.output("Q", nm.n, ev.forces(b, q, qd, tau), "generalized forces")
    out.append(b.build())
    return out


@dataclass
class _Saddle:
    """The saddle-point system of a configuration, [[A, Φ_qᵀ], [Φ_q, 0]], factored once:
    A = M, or M + γΦ_qᵀΦ_q for a singular M (``gamma`` > 0). Two factorizations, the
    cheaper chosen at generation (:func:`_saddle`): the range-space (Schur complement)
    one with W = A⁻¹Φ_qᵀ and S = Φ_q W (dense m × m: small mechanisms), or a sparse LDLᵀ
    of the whole matrix (:func:`.sparse.factor_saddle`: long chains). Both drop the
    multipliers of redundant constraints (semidefinite pivots)."""

    solve: Callable[[list[Expr], list[Expr]], tuple[list[Expr], list[Expr]]]
    gamma: float

    def correction(self, b: ProgramBuilder, n: int, residual: Sequence[Expr]) -> list[Expr]:
        """The A-orthogonal (least-kinetic-energy) Δ with Φ_q Δ = −r."""
        return self.solve([ZERO] * n, [b.emit(-r) for r in residual])[0]


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


def _saddle(b: ProgramBuilder, nm: NaturalModel, pq) -> _Saddle:
    n, m = nm.n, nm.m
    gamma = nm.metric_shift()
    mm = _const(nm.mass_matrix)
    if gamma:
        gram = _gram(b, pq, gamma)
        a = [[b.emit(mm[i][j] + gram[i][j]) for j in range(n)] for i in range(n)]
    else:
        a = [[as_expr(mm[i][j]) for j in range(n)] for i in range(n)]
    if _use_sparse_saddle(nm):
        f = sparse.factor_saddle(b, a, pq, [float(x) for x in _pivot_scales(nm)])
        return _Saddle(lambda top, bottom: sparse.solve_saddle(b, f, top, bottom), gamma)
    if gamma:
        lead = sparse.factor_auto(b, a)

        def solve_a(x: list[Expr]) -> list[Expr]:
            return sparse.solve(b, lead, x)

        cols = [solve_a([pq[c][k] for k in range(n)]) for c in range(m)]
        w = [[cols[c][i] for c in range(m)] for i in range(n)]
    else:
        minv = _const(np.linalg.inv(nm.mass_matrix))

        def solve_a(x: list[Expr]) -> list[Expr]:
            return [b.emit(esum(minv[i][j] * x[j] for j in range(n))) for i in range(n)]

        w = [[b.emit(esum(minv[i][k] * pq[c][k] for k in range(n))) for c in range(m)]
             for i in range(n)]
    s = [[b.emit(esum(pq[r][k] * w[k][c] for k in range(n))) for c in range(m)]
         for r in range(m)]
    factor = sparse.factor_auto(b, s, semidefinite_tolerance=sparse.SEMIDEFINITE_TOLERANCE)

    def solve(top: list[Expr], bottom: list[Expr]) -> tuple[list[Expr], list[Expr]]:
        free = solve_a(top)
        rhs = [b.emit(esum(pq[r][k] * free[k] for k in range(n)) - bottom[r])
               for r in range(m)]
        lam = sparse.solve(b, factor, rhs)
        x = [b.emit(free[i] - esum(w[i][c] * lam[c] for c in range(m))) for i in range(n)]
        return x, lam

    return _Saddle(solve, gamma)


def _lagrange(b: ProgramBuilder, nm: NaturalModel, ev: _Evaluator, q, qd, tau,
              baumgarte: float, known: tuple[_Saddle, list[list[Expr]]] | None = None,
              ) -> tuple[list[Expr], list[Expr], _Saddle, list[list[Expr]]]:
    """q̈, λ (and the factored saddle-point system and Φ_q) at (q, q̇): see
    :func:`accelerations_program`; ``known``: the system and Φ_q already built at q."""
    n = nm.n
    pq = ev.phi_q(b, q) if known is None else known[1]
    phi = ev.phi(b, q)
    jdq = ev.phi_q_dot_qdot(b, q, qd)
    a = baumgarte
    rate = _mat_vec(b, pq, qd)
    g = [b.emit(-jdq[i] - 2 * a * rate[i] - a * a * phi[i]) for i in range(nm.m)]
    forces = ev.forces(b, q, qd, tau)
    sd = _saddle(b, nm, pq) if known is None else known[0]
    if sd.gamma:
        shifted = _mat_t_vec(b, pq, g)
        forces = [b.emit(forces[i] + sd.gamma * shifted[i]) for i in range(n)]
    qdd, lam = sd.solve(forces, g)
    return qdd, lam, sd, pq


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
    ev = _Evaluator(nm)
    b = ProgramBuilder("nc_accelerations", "accelerations and multipliers (Lagrange + Baumgarte)")
    q, qd, tau = _state_inputs(b, nm)
    qdd, lam, _, _ = _lagrange(b, nm, ev, q, qd, tau, opts.baumgarte)
    b.output("qdd", nm.n, qdd, "natural accelerations")
    b.output("lam", nm.m, lam, "Lagrange multipliers")
    return b.build()


def rk4_step_program(nm: NaturalModel, opts: NaturalOptions) -> Program:
    """One classical Runge-Kutta step (order 4) of the index-1 equations (the Lagrange
    multipliers of :func:`accelerations_program` without Baumgarte terms), then coordinate
    projections onto the constraint manifold (Hairer, Lubich & Roche 1989; Hairer & Wanner
    1996, §VII.2): ``PROJECTION_ITERATIONS`` chord Newton steps Δq = −W S⁻¹Φ in the metric A
    (mass-orthogonal), then q̇ ← q̇ − W S⁻¹ Φ_q q̇, and the accelerations and multipliers at
    the new state (the next step's first stage). The input ``qdd`` is the first stage (the
    accelerations at (q, q̇), as returned by ``nc_accelerations`` with ``baumgarte`` 0 or by
    the previous step); ``lam`` is not read (the same signature as ``nc_step``). Reference:
    :func:`.solvers.rk4_step`."""
    ev = _Evaluator(nm)
    n, m = nm.n, nm.m
    h = opts.step
    b = ProgramBuilder("nc_step_rk4", f"one index-1 Runge-Kutta 4 step with projections, "
                       f"h = {h:g} s")
    q = b.input("q", n, "natural coordinates at t (assembled)")
    qd = b.input("qd", n, "natural velocities at t (consistent)")
    qdd = b.input("qdd", n, "natural accelerations at t (from nc_accelerations or the "
                  "previous step)")
    b.input("lam", m, "unused (the signature of nc_step)")
    tau = b.input("tau", len(nm.actuated), "joint forces/torques over the step") \
        if nm.actuated else []

    def accel(qs, vs):
        return _lagrange(b, nm, ev, qs, vs, tau, 0.0)[0]

    def shift(x, dx, c):
        return [b.emit(x[i] + c * dx[i]) for i in range(n)]

    k1q, k1v = list(qd), list(qdd)
    q2, v2 = shift(q, k1q, h / 2), shift(qd, k1v, h / 2)
    k2q, k2v = v2, accel(q2, v2)
    q3, v3 = shift(q, k2q, h / 2), shift(qd, k2v, h / 2)
    k3q, k3v = v3, accel(q3, v3)
    q4, v4 = shift(q, k3q, h), shift(qd, k3v, h)
    k4q, k4v = v4, accel(q4, v4)
    q1 = [b.emit(q[i] + (h / 6) * (k1q[i] + 2 * k2q[i] + 2 * k3q[i] + k4q[i]))
          for i in range(n)]
    v1 = [b.emit(qd[i] + (h / 6) * (k1v[i] + 2 * k2v[i] + 2 * k3v[i] + k4v[i]))
          for i in range(n)]
    pq = ev.phi_q(b, q1)
    sd = _saddle(b, nm, pq)
    for _ in range(PROJECTION_ITERATIONS):
        dq = sd.correction(b, n, ev.phi(b, q1))
        q1 = [b.emit(q1[i] + dq[i]) for i in range(n)]
    pq = ev.phi_q(b, q1)
    sd = _saddle(b, nm, pq)
    dv = sd.correction(b, n, _mat_vec(b, pq, v1))
    v1 = [b.emit(v1[i] + dv[i]) for i in range(n)]
    a1, lam1, _, _ = _lagrange(b, nm, ev, q1, v1, tau, 0.0, (sd, pq))
    b.output("q_next", n, q1, "natural coordinates at t + h (projected)")
    b.output("qd_next", n, v1, "natural velocities at t + h (projected)")
    b.output("qdd_next", n, a1, "natural accelerations at t + h")
    b.output("lam_next", m, lam1, "Lagrange multipliers at t + h")
    return b.build()


#: Iterations of the position projection of :func:`rk4_step_program`: the residual after an
#: RK4 step is O(h⁵); the first iteration is a Newton step (residual O(|Δq|²) after it, the
#: constraints being quadratic), the second a chord step with the same Jacobian (O(|Δq|³)).
PROJECTION_ITERATIONS = 2


def step_program(nm: NaturalModel, opts: NaturalOptions) -> Program:
    """One index-3 augmented-Lagrangian trapezoidal step (see :func:`.solvers.
    trapezoidal_step`, which this program reproduces operation for operation)."""
    ev = _Evaluator(nm)
    n, m = nm.n, nm.m
    h = opts.step
    choice = opts.penalty(nm)
    if choice.warning:
        warnings.warn(choice.warning, stacklevel=2)
    alpha = [float(x) for x in choice.alpha]
    mu = opts.damping
    beta = [a * (1 + 2 * mu / h) for a in alpha]
    mm = _const(nm.mass_matrix)
    b = ProgramBuilder("nc_step", f"one augmented-Lagrangian trapezoidal step, h = {h:g} s")
    q = b.input("q", n, "natural coordinates at t")
    qd = b.input("qd", n, "natural velocities at t")
    qdd = b.input("qdd", n, "natural accelerations at t")
    lam = list(b.input("lam", m, "augmented-Lagrangian multipliers (zeros at the start)"))
    tau = b.input("tau", len(nm.actuated), "joint forces/torques over the step") \
        if nm.actuated else []
    hat_d = [b.emit(qd[i] + (2 / h) * q[i]) for i in range(n)]
    hat_dd = [b.emit(qdd[i] + (4 / h) * qd[i] + (4 / h**2) * q[i]) for i in range(n)]
    q1 = [b.emit(q[i] + h * qd[i] + 0.5 * h * h * qdd[i]) for i in range(n)]
    for _ in range(opts.iterations):
        v1 = [b.emit((2 / h) * q1[i] - hat_d[i]) for i in range(n)]
        a1 = [b.emit((4 / h**2) * q1[i] - hat_dd[i]) for i in range(n)]
        pq = ev.phi_q(b, q1)
        phi = ev.phi(b, q1)
        rate = _mat_vec(b, pq, v1)
        weight = [b.emit(alpha[r] * (phi[r] + mu * rate[r]) + lam[r]) for r in range(m)]
        force = _mat_t_vec(b, pq, weight)
        ma = _mat_vec(b, mm, a1)
        forces = ev.forces(b, q1, v1, tau)
        f = [b.emit(ma[i] + force[i] - forces[i]) for i in range(n)]
        gram = _gram(b, pq, beta)
        tangent = [[b.emit((4 / h**2) * mm[i][j] + gram[i][j]) for j in range(n)]
                   for i in range(n)]
        factored = sparse.factor_auto(b, tangent)
        step = sparse.solve(b, factored, f)
        q1 = [b.emit(q1[i] - step[i]) for i in range(n)]
        v1 = [b.emit((2 / h) * q1[i] - hat_d[i]) for i in range(n)]
        phi = ev.phi(b, q1)
        rate = _mat_vec(b, ev.phi_q(b, q1), v1)
        lam = [b.emit(lam[r] + alpha[r] * (phi[r] + mu * rate[r])) for r in range(m)]
    # the projections reuse the last iteration's factored quasi-tangent T = (4/h²)P,
    # P = M + (h²/4)Φ_qᵀβΦ_q with Φ_q of that iterate: P⁻¹x = T⁻¹((4/h²)x)
    v1 = [b.emit((2 / h) * q1[i] - hat_d[i]) for i in range(n)]
    a1 = [b.emit((4 / h**2) * q1[i] - hat_dd[i]) for i in range(n)]
    scaled_mm = [[(4 / h**2) * x for x in row] for row in mm]
    v1 = sparse.solve(b, factored, _mat_vec(b, scaled_mm, v1))
    jdq = ev.phi_q_dot_qdot(b, q1, v1)
    bias = _mat_t_vec(b, pq, [b.emit(beta[r] * jdq[r]) for r in range(m)])
    ma = _mat_vec(b, scaled_mm, a1)
    a1 = sparse.solve(b, factored, [b.emit(ma[i] - bias[i]) for i in range(n)])
    if opts.alpha is None:  # multiplier filter (solvers.trapezoidal_step)
        reach = sparse.solve(b, factored, _mat_t_vec(b, pq, lam))
        lam = [b.emit(beta[r] * x) for r, x in enumerate(_mat_vec(b, pq, reach))]
    b.output("q_next", n, q1, "natural coordinates at t + h")
    b.output("qd_next", n, v1, "natural velocities at t + h (projected)")
    b.output("qdd_next", n, a1, "natural accelerations at t + h (projected)")
    b.output("lam_next", m, lam, "multipliers to pass to the next step")
    return b.build()


def joint_values_program(nm: NaturalModel) -> Program | None:
    """Each 1-DOF joint's coordinate (angle via atan2, or displacement), relative to the
    assembled configuration, and its rate: θ̇ = (c ṡ − s ċ)/(s² + c²), ḋ = ∇d·q̇."""
    if not nm.actuated:
        return None
    b = ProgramBuilder("nc_joint_values", "joint angles/displacements and rates ("
                       + ", ".join(nm.actuated) + ")")
    q = b.input("q", nm.n, "natural coordinates")
    qd = b.input("qd", nm.n, "natural velocities")
    mp = {s: q[i] for i, s in enumerate(nm.symbols)}
    position = {s: i for i, s in enumerate(nm.symbols)}
    values, rates = [], []
    for jc in nm.joint_coordinates.values():
        comp = [b.emit(from_sympy(p, mp)) for p in jc.parts]
        dots = [b.emit(esum(from_sympy(d, mp) * qd[i] for i, d in sparse_gradient(p, position)))
                for p in jc.parts]
        if jc.kind == "angle":
            s, c = comp
            values.append(b.emit(jc.sign * (atan2(s, c) - jc.offset)))
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
    ev = _Evaluator(nm)
    b = ProgramBuilder("nc_velocities", "consistent velocities from the independent joint "
                       "rates (" + ", ".join(chosen) + ")")
    q = b.input("q", nm.n, "natural coordinates (assembled)")
    zd = b.input("zd", len(chosen), "rates of " + ", ".join(chosen))
    mp = {s: q[i] for i, s in enumerate(nm.symbols)}
    g = [[b.emit(from_sympy(e, mp)) if e != 0 else ZERO
          for e in nm.joint_gradient(name)] for name in chosen]
    pq = ev.phi_q(b, q)
    normal = [[b.emit(x + y) for x, y in zip(r1, r2, strict=True)]
              for r1, r2 in zip(_gram(b, pq, 1.0), _gram(b, g, 1.0), strict=True)]
    rhs = _mat_t_vec(b, g, zd)
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
    ev = _Evaluator(nm)
    n = nm.n
    b = ProgramBuilder("nc_assemble", "assembly: Newton-Raphson on Phi(q) = 0 from a guess")
    q = list(b.input("q", n, "rough guess of the natural coordinates"))
    for _ in range(opts.assembly_iterations):
        pq = ev.phi_q(b, q)
        phi = ev.phi(b, q)
        gram = _gram(b, pq, 1.0)
        normal = [[b.emit(gram[i][j] + (1e-9 if i == j else 0.0)) for j in range(n)]
                  for i in range(n)]
        rhs = _mat_t_vec(b, pq, phi)
        step = sparse.solve(b, sparse.factor_auto(b, normal), rhs)
        q = [b.emit(q[i] - step[i]) for i in range(n)]
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
        nm.spring_forces = element_forces(nm, [
            PointSpring(f"springs[{k}]", s.body_a, tuple(s.point_a), s.body_b, tuple(s.point_b),
                        s.stiffness, s.damping, s.rest_length)
            for k, s in enumerate(springs)])
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
    "step_program",
    "velocities_program",
]
