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

Joint values back (angles, displacements) are Python readers for now
(``NaturalModel.joint_values``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...expr import ZERO, Expr, esum, from_sympy
from ...program import Program, ProgramBuilder
from .. import dense
from .model import NaturalModel


@dataclass(frozen=True)
class NaturalOptions:
    """Generation settings of the natural-coordinate kernels."""

    step: float = 1e-3
    alpha: float | None = None
    mu: float | None = None
    iterations: int = 2
    baumgarte: float = 10.0
    assembly_iterations: int = 8

    def penalty(self, mass_matrix: np.ndarray) -> float:
        from .solvers import StepSettings

        return StepSettings(self.step, self.alpha, self.mu, self.iterations).penalty(mass_matrix)


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


def _mat_vec(b, a, x) -> list[Expr]:
    return [b.emit(esum(a_ij * x_j for a_ij, x_j in zip(row, x, strict=True))) for row in a]


def _mat_t_vec(b, a, x) -> list[Expr]:
    return [b.emit(esum(a[i][j] * x[i] for i in range(len(a)))) for j in range(len(a[0]))]


def _const(m: np.ndarray) -> list[list[float]]:
    return [[float(x) for x in row] for row in m]


def _gram(b, a, weight: float) -> list[list[Expr]]:
    """weight · aᵀ a (symmetric; upper triangle emitted)."""
    n = len(a[0])
    upper = {}
    for i in range(n):
        for j in range(i, n):
            upper[i, j] = b.emit(weight * esum(a[k][i] * a[k][j] for k in range(len(a))))
    return [[upper[min(i, j), max(i, j)] for j in range(n)] for i in range(n)]


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
    b = ProgramBuilder("nc_forces", "generalized forces Q (gravity)")
    q = b.input("q", nm.n, "natural coordinates")
    b.output("Q", nm.n, [float(x) for x in nm.forces], "generalized forces")
    out.append(b.build())
    return out


def accelerations_program(nm: NaturalModel, opts: NaturalOptions) -> Program:
    """Lagrange multipliers + Baumgarte (α = β = ``opts.baumgarte``) by the Schur
    complement: (Φ_q M⁻¹ Φ_qᵀ) λ = Φ_q M⁻¹ Q − g, q̈ = M⁻¹(Q − Φ_qᵀλ),
    g = −Φ̇_q q̇ − 2αΦ̇ − β²Φ (book eq. 5.11-5.12, 5.28)."""
    ev = _Evaluator(nm)
    b = ProgramBuilder("nc_accelerations", "accelerations and multipliers (Lagrange + Baumgarte)")
    q = b.input("q", nm.n, "natural coordinates")
    qd = b.input("qd", nm.n, "natural velocities")
    minv = _const(np.linalg.inv(nm.mass_matrix))
    pq = ev.phi_q(b, q)
    phi = ev.phi(b, q)
    jdq = ev.phi_q_dot_qdot(b, q, qd)
    a = opts.baumgarte
    rate = _mat_vec(b, pq, qd)
    g = [b.emit(-jdq[i] - 2 * a * rate[i] - a * a * phi[i]) for i in range(nm.m)]
    forces = [float(x) for x in nm.forces]
    free = [b.emit(esum(minv[i][j] * forces[j] for j in range(nm.n))) for i in range(nm.n)]
    # W = M⁻¹ Φ_qᵀ (n × m), S = Φ_q W (m × m)
    w = [[b.emit(esum(minv[i][k] * pq[c][k] for k in range(nm.n))) for c in range(nm.m)]
         for i in range(nm.n)]
    s = [[b.emit(esum(pq[r][k] * w[k][c] for k in range(nm.n))) for c in range(nm.m)]
         for r in range(nm.m)]
    rhs = [b.emit(esum(pq[r][k] * free[k] for k in range(nm.n)) - g[r]) for r in range(nm.m)]
    lam = dense.solve(b, dense.ldlt(b, s), rhs)
    qdd = [b.emit(free[i] - esum(w[i][c] * lam[c] for c in range(nm.m))) for i in range(nm.n)]
    b.output("qdd", nm.n, qdd, "natural accelerations")
    b.output("lam", nm.m, lam, "Lagrange multipliers")
    return b.build()


def step_program(nm: NaturalModel, opts: NaturalOptions) -> Program:
    """One index-3 augmented-Lagrangian trapezoidal step (see :func:`.solvers.
    trapezoidal_step`, which this program reproduces operation for operation)."""
    ev = _Evaluator(nm)
    n, m = nm.n, nm.m
    h = opts.step
    alpha = opts.penalty(nm.mass_matrix)
    mu = opts.mu if opts.mu is not None else h / 50.0
    beta = alpha * (1 + 2 * mu / h)
    mm = _const(nm.mass_matrix)
    forces = [float(x) for x in nm.forces]
    b = ProgramBuilder("nc_step", f"one augmented-Lagrangian trapezoidal step, h = {h:g} s")
    q = b.input("q", n, "natural coordinates at t")
    qd = b.input("qd", n, "natural velocities at t")
    qdd = b.input("qdd", n, "natural accelerations at t")
    lam = list(b.input("lam", m, "augmented-Lagrangian multipliers (zeros at the start)"))
    hat_d = [b.emit(qd[i] + (2 / h) * q[i]) for i in range(n)]
    hat_dd = [b.emit(qdd[i] + (4 / h) * qd[i] + (4 / h**2) * q[i]) for i in range(n)]
    q1 = [b.emit(q[i] + h * qd[i] + 0.5 * h * h * qdd[i]) for i in range(n)]
    for _ in range(opts.iterations):
        v1 = [b.emit((2 / h) * q1[i] - hat_d[i]) for i in range(n)]
        a1 = [b.emit((4 / h**2) * q1[i] - hat_dd[i]) for i in range(n)]
        pq = ev.phi_q(b, q1)
        phi = ev.phi(b, q1)
        rate = _mat_vec(b, pq, v1)
        weight = [b.emit(alpha * (phi[r] + mu * rate[r]) + lam[r]) for r in range(m)]
        force = _mat_t_vec(b, pq, weight)
        ma = _mat_vec(b, mm, a1)
        f = [b.emit(ma[i] + force[i] - forces[i]) for i in range(n)]
        gram = _gram(b, pq, beta)
        tangent = [[b.emit((4 / h**2) * mm[i][j] + gram[i][j]) for j in range(n)]
                   for i in range(n)]
        step = dense.solve(b, dense.ldlt(b, tangent), f)
        q1 = [b.emit(q1[i] - step[i]) for i in range(n)]
        v1 = [b.emit((2 / h) * q1[i] - hat_d[i]) for i in range(n)]
        phi = ev.phi(b, q1)
        rate = _mat_vec(b, ev.phi_q(b, q1), v1)
        lam = [b.emit(lam[r] + alpha * (phi[r] + mu * rate[r])) for r in range(m)]
    v1 = [b.emit((2 / h) * q1[i] - hat_d[i]) for i in range(n)]
    a1 = [b.emit((4 / h**2) * q1[i] - hat_dd[i]) for i in range(n)]
    pq = ev.phi_q(b, q1)
    gram = _gram(b, pq, (h * h / 4) * alpha)
    projector = dense.ldlt(b, [[b.emit(mm[i][j] + gram[i][j]) for j in range(n)]
                               for i in range(n)])
    v1 = dense.solve(b, projector, _mat_vec(b, mm, v1))
    bias = _mat_t_vec(b, pq, ev.phi_q_dot_qdot(b, q1, v1))
    ma = _mat_vec(b, mm, a1)
    a1 = dense.solve(b, projector, [b.emit(ma[i] - (h * h / 4) * alpha * bias[i])
                                    for i in range(n)])
    b.output("q_next", n, q1, "natural coordinates at t + h")
    b.output("qd_next", n, v1, "natural velocities at t + h (projected)")
    b.output("qdd_next", n, a1, "natural accelerations at t + h (projected)")
    b.output("lam_next", m, lam, "multipliers to pass to the next step")
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
        step = dense.solve(b, dense.ldlt(b, normal), rhs)
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


def natural_model(model) -> NaturalModel:
    """The natural-coordinate model of ``model``: planar modelling for ``plane: xy``
    models, spatial otherwise."""
    from .planar import planar_model
    from .spatial import spatial_model

    return planar_model(model) if model.plane == "xy" else spatial_model(model)


def natural_kernels(model, opts: NaturalOptions | None = None, nm: NaturalModel | None = None):
    """(NaturalModel, KernelSet) with every natural-coordinate kernel of ``model``,
    optimised, ready for :meth:`KernelSet.write` / :meth:`KernelSet.compile`."""
    from ...generate import KernelSet, Options
    from ...optimize import optimize

    opts = opts or NaturalOptions()
    nm = nm or natural_model(model)
    programs = [mass_matrix_program(nm), *constraint_programs(nm),
                accelerations_program(nm, opts), step_program(nm, opts),
                assemble_program(nm, opts)]
    ks = KernelSet(model.resolve(), Options())
    ks.notes = natural_notes(nm)
    for program in programs:
        ks.programs[program.name] = optimize(program)
        ks.kernel_of[program.name] = program.name
    return nm, ks


__all__ = [
    "NaturalOptions",
    "accelerations_program",
    "assemble_program",
    "constraint_programs",
    "describe_natural",
    "mass_matrix_program",
    "natural_kernels",
    "natural_model",
    "natural_notes",
    "step_program",
]
