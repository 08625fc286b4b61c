"""Constraint embedding: dynamics of a tree closed by local loops (and couplings) in the
independent coordinates (Jain 2009, "Recursive algorithms using local constraint
embedding", §4-5; Jain 2012, §6), on the aggregates of :mod:`symgen.loops.embedding`.

**EmbeddingMap map** (Jain 2009, eq. 35-39). Per aggregate S, Y = the independent loop rows
restricted to S's velocity coordinates, split into the dependent columns Y₁ (square) and
the independent ones Y₂: θ̇_S = X_S θ̇_R with X_S = [−Y₁⁻¹Y₂; I], and
Ẋ_S θ̇_R = [−Y₁⁻¹ Ẏ θ̇_S; 0], where Ẏ θ̇_S is the loop bias Ġ q̇ of the same rows
(:func:`.loop_constraints.bias`). Y₁ is factored by LU with the row order chosen at
generation (partial pivoting at the reference configuration).

**Embedded articulated-body forward dynamics** (Jain 2009, eq. 19-24 as corrected, in the
"underlined" form of eq. 25-34: the aggregate's quantities carried to its parent hinge p).
A hinge outside every aggregate is one node of the ordinary recursion
(:mod:`.articulated`). An aggregate is one node of n_R DOF: each of its hinges k moves as
α_k = Φ_k α_p + Ĥ_k θ̈_R + c_k with Ĥ_k = J_k X_S (J_k the Jacobian of S's hinges in k's
frame, built base to tip: Ĥ_k = X_k Ĥ_℘(k) + S_k X_S[k]) and c_k = X_k c_℘(k) + 𝔞_k +
S_k (Ẋ_S θ̇_R)_k. With P_k its body inertia plus the articulated inertias of the nodes
hanging from it, and z_k the bias forces they carry:

    D = Σ_k Ĥ_kᵀ P_k Ĥ_k (+ X_Sᵀ J_a X_S),        ε = X_Sᵀ T_S − Σ_k Ĥ_kᵀ (P_k c_k + z_k)
    U = Σ_k Φ_kᵀ P_k Ĥ_k,   P_S = Σ_k Φ_kᵀ P_k Φ_k,   z_S = Σ_k Φ_kᵀ (P_k c_k + z_k)
    G = U D⁻¹,   P⁺ = P_S − G Uᵀ,   z⁺ = z_S + G ε     (added to P_p, z_p: already in p's frame)
    θ̈_R = D⁻¹(ε − Uᵀ α_p),   θ̈_S = X_S θ̈_R + Ẋ_S θ̇_R

(D = X_Sᵀ 𝓜_S X_S, Jain 2009, eq. 20; T_R = X_Sᵀ T_S is the generalized force of the
independent coordinates, the virtual-power projection the paper leaves implicit). The Σ
over Φ_kᵀ are accumulated inward through S like composite inertias.

**Inverse dynamics and mass matrix**: T_R = X_Sᵀ T_S with T_S the tree's Newton-Euler
forces at θ̈_S = X_S θ̈_R + Ẋ_S θ̇_R, and 𝓜_R = Xᵀ 𝓜 X. The model's force elements add Q
to T (:mod:`.element_forces`).

**Constraint forces** (:func:`constrained_forward_dynamics`): with the map built from every
rate v (not only θ̇_R), θ̈ = X θ̈_R + Ẋ θ̇_R spans the solutions of G θ̈ = −γ at any state, so
the reduced equations give the q̈ of M q̈ + C = T + Gᵀλ, G q̈ + γ = 0 (Müller 2014, eq. 4),
and λ follows from the dependent coordinates' rows: Y₁ᵀ λ_S = (𝓜 X θ̈_R − r)_dep, r = T −
𝒞 − 𝓜 Ẋθ̇_R (:func:`multipliers`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from symgen.errors import SymgenError
from symgen.formulations import dense
from symgen.formulations.articulated import _gain, hinge_factor
from symgen.formulations.dense import Matrix, Vector
from symgen.formulations.loop_constraints import bias as loop_bias
from symgen.formulations.loop_constraints import jacobian as loop_jacobian
from symgen.formulations.loop_constraints import stabilised_bias
from symgen.formulations.recursions import (
    gyroscopic,
    hinge_rates,
    joint_map,
    mass_matrix,
    motion_pass,
    root_acceleration,
)
from symgen.formulations.recursions import inverse_dynamics as tree_inverse_dynamics
from symgen.formulations.tree.hinges import SymbolicTree
from symgen.ir.expr import ONE, ZERO, Expr, esum
from symgen.ir.program import ProgramBuilder
from symgen.spatial import ArticulatedInertia, Force, ForceMap, JointMap, JointVector, Motion


@dataclass(frozen=True)
class Node:
    """An aggregate on the hinge tree: its hinges (base to tip), the hinge it hangs from
    (-1: the root), its velocity coordinates, the independent and dependent ones, its rows
    of the loop Jacobian's kept rows and the LU row order of Y₁."""

    hinges: tuple[int, ...]
    parent: int
    dofs: tuple[int, ...]
    independent: tuple[int, ...]
    dependent: tuple[int, ...]
    rows: tuple[int, ...]
    pivots: tuple[int, ...]


def nodes(tree: SymbolicTree, embedding, keep: Sequence[int]) -> list[Node]:
    """The aggregates of ``embedding`` (:class:`symgen.loops.embedding.Embedding`) as nodes
    of ``tree``; ``keep`` the independent rows of the stacked kept rows."""
    model = tree.model
    joint_index = {j.name: i for i, j in enumerate(model.joints)}
    out = []
    for agg in embedding.aggregates:
        members = {joint_index[name] for name in agg.joints}
        hinges = tuple(h for h, hinge in enumerate(tree.hinges) if hinge.joint in members)
        # the first hinge's parent, outside the aggregate: the node every top hinge hangs
        # from (the aggregation condition)
        out.append(Node(hinges, tree.hinges[hinges[0]].parent, agg.dofs, agg.independent,
                        agg.dependent, tuple(keep[i] for i in agg.rows), agg.pivots))
    return out


@dataclass
class LU:
    """Y₁ = Pᵀ L U (Doolittle, rows in a fixed pivot order): ``rows`` the order,
    ``lower`` the multipliers, ``upper`` U and ``inv_pivot`` 1/U_ii."""

    rows: tuple[int, ...]
    lower: list[list[Expr]]
    upper: list[list[Expr]]
    inv_pivot: list[Expr]


def lu(b: ProgramBuilder, a: Sequence[Sequence[Expr]], pivots: Sequence[int]) -> LU:
    """Unrolled LU of the square ``a`` with its rows in the order ``pivots``."""
    n = len(a)
    rows = [list(a[p]) for p in pivots]
    lower = [[ZERO] * n for _ in range(n)]
    inv_pivot: list[Expr] = []
    for k in range(n):
        inv_pivot.append(b.emit(ONE / rows[k][k]))
        for i in range(k + 1, n):
            m = b.emit(rows[i][k] * inv_pivot[k])
            lower[i][k] = m
            for j in range(k + 1, n):
                rows[i][j] = b.emit(rows[i][j] - m * rows[k][j])
    return LU(tuple(pivots), lower, rows, inv_pivot)


def lu_solve(b: ProgramBuilder, f: LU, rhs: Sequence[Expr]) -> list[Expr]:
    """``Y₁⁻¹ rhs``."""
    n = len(f.rows)
    y: list[Expr] = []
    for i in range(n):
        y.append(b.emit(rhs[f.rows[i]] - esum([f.lower[i][k] * y[k] for k in range(i)])))
    x: list[Expr] = [ZERO] * n
    for i in reversed(range(n)):
        x[i] = b.emit((y[i] - esum([f.upper[i][k] * x[k] for k in range(i + 1, n)]))
                      * f.inv_pivot[i])
    return x


def lu_transposed_solve(b: ProgramBuilder, f: LU, rhs: Sequence[Expr]) -> list[Expr]:
    """``Y₁⁻ᵀ rhs``: Y₁ᵀ = Uᵀ Lᵀ P (P the row order), so Uᵀ y = rhs (forward), Lᵀ w = y
    (backward, unit diagonal) and x = Pᵀ w."""
    n = len(f.rows)
    y: list[Expr] = []
    for i in range(n):
        y.append(b.emit((rhs[i] - esum([f.upper[k][i] * y[k] for k in range(i)]))
                        * f.inv_pivot[i]))
    w: list[Expr] = [ZERO] * n
    for i in reversed(range(n)):
        w[i] = b.emit(y[i] - esum([f.lower[k][i] * w[k] for k in range(i + 1, n)]))
    x: list[Expr] = [ZERO] * n
    for k, row in enumerate(f.rows):
        x[row] = w[k]
    return x


@dataclass
class EmbeddingMap:
    """The embedding map at one configuration: per node its X_S (rows: the node's DOFs in
    order, columns: its independent ones), the LU of Y₁, the full rates θ̇ and Ẋ_S θ̇_R."""

    nodes: list[Node]
    X: list[Matrix]
    lu: list[LU | None]
    v: list[Expr]
    xdot_v: list[Expr]
    independent: tuple[int, ...]

    def column(self, n: int, d: int) -> list[Expr]:
        """Row of X_S of node ``n`` for its DOF ``d`` (one entry per independent DOF)."""
        return self.X[n][self.nodes[n].dofs.index(d)]


def embedding_map(b: ProgramBuilder, tree: SymbolicTree, rows: Sequence[np.ndarray],
                  node_list: list[Node], independent: Sequence[int],
                  v_ind: Sequence[Expr] | None, *, v: Sequence[Expr] | None = None,
                  baumgarte: tuple[float, float] | None = None) -> EmbeddingMap:
    """X_S of every node and, given the independent rates ``v_ind`` (in the order of
    ``independent``), the full rates θ̇ = X θ̇_R and Ẋ_S θ̇_R (module documentation).

    Given instead every rate ``v`` (any v, on the loop manifold or not), θ̇ = v and the
    particular acceleration −Y₁⁻¹γ of each node's dependent coordinates takes the
    constraint's right-hand side at that v: γ = Ġ q̇, with ``baumgarte`` = (α, β) also
    2α G q̇ + β² Φ (:func:`.loop_constraints.stabilised_bias`). θ̈ = X θ̈_R + Ẋ θ̇_R then
    spans exactly the solutions of G θ̈ = −γ, and the embedded dynamics equal those with
    multipliers (:mod:`.constrained`) at every state."""
    g = loop_jacobian(b, tree, rows) if any(n.rows for n in node_list) else []
    xs: list[Matrix] = []
    lus: list[LU | None] = []
    for node in node_list:
        x_rows: dict[int, Sequence[Expr]] = {  # the identity block of X_S (eq. 39)
            d: [ONE if d == r else ZERO for r in node.independent] for d in node.independent}
        factor = None
        if node.rows:
            y = Matrix([g[i] for i in node.rows])
            y1 = Matrix([row[d] for d in node.dependent] for row in y)  # Y₁ (square)
            y2 = Matrix([row[r] for r in node.independent] for row in y)  # Y₂
            factor = lu(b, y1, node.pivots)
            y1_inv_y2 = Matrix([lu_solve(b, factor, col) for col in y2.T], len(y1)).T
            x_rows.update(zip(node.dependent, (-y1_inv_y2).emit(b), strict=True))  # −Y₁⁻¹Y₂
        xs.append(Matrix([x_rows[d] for d in node.dofs], len(node.independent)))  # X_S
        lus.append(factor)
    rates: list[Expr] = [ZERO] * tree.nv if v is None else list(v)
    xdot_v: list[Expr] = [ZERO] * tree.nv
    if v_ind is not None and v is None:
        for d, value in zip(independent, v_ind, strict=True):
            rates[d] = value
        for node, x in zip(node_list, xs, strict=True):  # θ̇_S = X_S θ̇_R
            full = x @ [rates[d] for d in node.independent]
            for d, rate in zip(node.dofs, full, strict=True):
                if d in node.dependent:
                    rates[d] = b.emit(rate)
    if (v_ind is not None or v is not None) and any(n.rows for n in node_list):
        used = [i for node in node_list for i in node.rows]
        rhs = dict(zip(used, stabilised_bias(b, tree, rates, rows, g,
                                             loop_bias(b, tree, rates, rows), used, baumgarte),
                       strict=True))
        for node, factor in zip(node_list, lus, strict=True):
            if factor is None:
                continue
            w = lu_solve(b, factor, [rhs[i] for i in node.rows])
            for d, value in zip(node.dependent, w, strict=True):
                xdot_v[d] = b.emit(-value)
    return EmbeddingMap(node_list, xs, lus, rates, xdot_v, tuple(independent))


def project(b: ProgramBuilder, emb: EmbeddingMap, t: Sequence[Expr]) -> list[Expr]:
    """T_R = Xᵀ T: the independent coordinates' share of the joint forces ``t``."""
    out = {d: t[d] for d in emb.independent}
    for node, x in zip(emb.nodes, emb.X, strict=True):
        for k, r in enumerate(node.independent):
            out[r] = b.emit(esum([row[k] * t[d] for d, row in zip(node.dofs, x, strict=True)]))
    return [out[d] for d in emb.independent]


def expand(b: ProgramBuilder, emb: EmbeddingMap, a_ind: Sequence[Expr]) -> list[Expr]:
    """θ̈ = X θ̈_R + Ẋ θ̇_R over every coordinate."""
    a: list[Expr] = [ZERO] * len(emb.v)
    for d, value in zip(emb.independent, a_ind, strict=True):
        a[d] = value
    for node, x in zip(emb.nodes, emb.X, strict=True):
        ind = [a[d] for d in node.independent]
        for d, row in zip(node.dofs, x, strict=True):
            if d in node.dependent:
                a[d] = b.emit(esum([c * r for c, r in zip(row, ind, strict=True)])
                              + emb.xdot_v[d])
    return a


def forward_dynamics(b: ProgramBuilder, tree: SymbolicTree, emb: EmbeddingMap,
                     tau: Sequence[Expr], f_ext: Sequence[Expr] | None = None
                     ) -> tuple[list[Expr], list[Expr]]:
    """(θ̈_R, θ̈) by the embedded articulated-body recursion (module documentation); ``tau``
    the joint forces of every coordinate (nv), force elements included."""
    hinges = tree.hinges
    owner = {h: n for n, node in enumerate(emb.nodes) for h in node.hinges}
    top = {node.hinges[0]: n for n, node in enumerate(emb.nodes)}
    vel = motion_pass(b, tree, emb.v)
    z = gyroscopic(b, tree, vel, f_ext)
    P = [ArticulatedInertia(h.inertia.matrix()) if h.inertia else ArticulatedInertia.zero()
         for h in hinges]
    single: dict[int, tuple] = {}
    grouped: dict[int, tuple] = {}
    t_r = dict(zip(emb.independent, project(b, emb, tau), strict=True))  # T_R = X_Sᵀ T_S
    for k in reversed(range(len(hinges))):
        hinge = hinges[k]
        if k in owner:
            if k in top:
                grouped[top[k]] = _aggregate_sweep(b, tree, emb, top[k], P, z, vel, t_r)
            continue
        fac = hinge_factor(b, hinge, k, P)  # the ordinary articulated-body step
        eps = (hinge_rates(tree, k, tau) - (joint_map(hinge).T @ z[k]).emit(b)).emit(b)
        single[k] = (fac.U, fac.D, eps)
        if fac.P_plus is not None:
            z_plus = (z[k] + fac.P_plus @ vel.coriolis[k] + fac.G @ eps).emit(b)
            z[hinge.parent] = (z[hinge.parent] + hinge.X.T @ z_plus).emit(b)
    qdd: list[Expr] = [ZERO] * tree.nv
    a_ind: dict[int, Expr] = {}
    acc: list[Motion] = []
    a_root = root_acceleration(tree, gravity=True)
    for k, hinge in enumerate(hinges):
        alpha_parent = acc[hinge.parent] if hinge.parent >= 0 else a_root
        if k in top:  # the aggregate's θ̈_R, then θ̈_S
            n = top[k]
            node, (U, D_fac, eps) = emb.nodes[n], grouped[n]
            alpha_p = acc[node.parent] if node.parent >= 0 else a_root
            rates = dense.solve(b, D_fac, [b.emit(e - u.dot(alpha_p))
                                           for e, u in zip(eps, U, strict=True)])
            for d, r in zip(node.independent, rates, strict=True):
                a_ind[d] = r
            for d, row in zip(node.dofs, emb.X[n], strict=True):
                qdd[d] = b.emit(esum([c * r for c, r in zip(row, rates, strict=True)])
                                + emb.xdot_v[d])
        if k in owner:
            S = joint_map(hinge)
            alpha = (hinge.X @ alpha_parent + vel.coriolis[k]
                     + S @ hinge_rates(tree, k, qdd)).emit(b)
            acc.append(alpha)
            continue
        U, D_fac, eps = single[k]
        alpha_plus = (hinge.X @ alpha_parent + vel.coriolis[k]).emit(b)
        rates = dense.solve(b, D_fac, eps - (U.T @ alpha_plus).emit(b))
        for d, r in zip(hinge.dofs, rates, strict=True):
            qdd[d] = r
            a_ind[d] = r
        acc.append((alpha_plus + joint_map(hinge) @ rates).emit(b))
    return [a_ind[d] for d in emb.independent], qdd


def _aggregate_sweep(b: ProgramBuilder, tree: SymbolicTree, emb: EmbeddingMap, n: int,
                     P: list[ArticulatedInertia], z: list[Force], vel, t_r: dict[int, Expr]
                     ) -> tuple[ForceMap, dense.LDLT, list[Expr]]:
    """One aggregate of the backward sweep: D, U, ε, and P⁺, z⁺ added to its parent
    (module documentation); ``t_r`` the independent coordinates' T_R. Returns (U, D
    factored, ε)."""
    node = emb.nodes[n]
    hinges = tree.hinges
    members = set(node.hinges)
    n_r = len(node.independent)
    h_cols: dict[int, list[Motion]] = {}
    bias: dict[int, Motion] = {}
    for k in node.hinges:  # base to tip: Ĥ_k and c_k
        hinge = hinges[k]
        S = joint_map(hinge)
        inner = hinge.parent in members
        cols = []
        for c in range(n_r):
            own = S @ [emb.column(n, d)[c] for d in hinge.dofs]
            col = (hinge.X @ h_cols[hinge.parent][c] + own) if inner else own
            cols.append(col.emit(b))
        h_cols[k] = cols
        own_bias = vel.coriolis[k] + S @ [emb.xdot_v[d] for d in hinge.dofs]
        bias[k] = ((hinge.X @ bias[hinge.parent] + own_bias) if inner else own_bias).emit(b)
    w: dict[int, list[Force]] = {}
    y: dict[int, Force] = {}
    for k in node.hinges:
        w[k] = [(P[k] @ col).emit(b) for col in h_cols[k]]
        y[k] = (P[k] @ bias[k] + z[k]).emit(b)
    H = {k: JointMap(h_cols[k]) for k in node.hinges}  # Ĥ_k
    # D = Σ_k Ĥ_kᵀ P_k Ĥ_k, ε = X_Sᵀ T_S − Σ_k Ĥ_kᵀ (P_k c_k + z_k) (Jain 2009, eq. 20, 29)
    D = Matrix.total(Matrix([H[k].T @ ws for ws in w[k]]).T for k in node.hinges).emit(b)
    eps = (Vector(t_r[d] for d in node.independent)
           - Vector.total(H[k].T @ y[k] for k in node.hinges)).emit(b)
    d_mat = [list(row) for row in D]
    eps = list(eps)
    # armature: T_d = Sᵀf + J θ̈_d on each DOF of the aggregate; entry by entry (ε_r, then
    # row r of D: the emission order of the generated code)
    for k in node.hinges:
        hinge = hinges[k]
        if hinge.armature is None:
            continue
        for d, arm in zip(hinge.dofs, hinge.armature, strict=True):
            row = emb.column(n, d)
            for r in range(n_r):
                eps[r] = b.emit(eps[r] - row[r] * arm * emb.xdot_v[d])
                for s in range(n_r):
                    d_mat[r][s] = b.emit(d_mat[r][s] + row[r] * arm * row[s])
    D_fac = dense.ldlt(b, d_mat)
    # inward through the aggregate: U, P_S, z_S in the parent hinge's frame
    u_acc: dict[int, list[Force]] = {k: list(w[k]) for k in node.hinges}
    z_acc: dict[int, Force] = dict(y)
    p_acc: dict[int, ArticulatedInertia] = {k: P[k] for k in node.hinges}
    U_cols: list[Force] = [Force() for _ in range(n_r)]
    P_S = ArticulatedInertia.zero()
    z_S = Force()
    for k in reversed(node.hinges):
        hinge = hinges[k]
        X = hinge.X
        u_up = [(X.T @ u).emit(b) for u in u_acc[k]]
        if hinge.parent in members:
            p = hinge.parent
            u_acc[p] = [(a + c).emit(b) for a, c in zip(u_acc[p], u_up, strict=True)]
            if node.parent >= 0:
                z_acc[p] = (z_acc[p] + X.T @ z_acc[k]).emit(b)
                p_acc[p] = (p_acc[p] + X.T @ p_acc[k] @ X).emit(b)
            continue
        U_cols = [(a + c).emit(b) for a, c in zip(U_cols, u_up, strict=True)]
        if node.parent >= 0:
            z_S = (z_S + X.T @ z_acc[k]).emit(b)
            P_S = (P_S + X.T @ p_acc[k] @ X).emit(b)
    U = ForceMap(U_cols)
    if node.parent >= 0:
        G = _gain(b, U, D_fac)
        P[node.parent] = (P[node.parent] + (P_S - G @ U.T)).emit(b)
        z[node.parent] = (z[node.parent] + z_S + G @ JointVector(eps)).emit(b)
    return U, D_fac, eps


@dataclass
class ReducedSolution:
    """The reduced equations solved (:func:`reduced_solution`): θ̈_R, θ̈, 𝓜 X (nv × n_R)
    and r = T − 𝒞 − 𝓜 Ẋθ̇_R over every coordinate (T the joint forces)."""

    a_ind: list[Expr]
    a: list[Expr]
    mx: list[list[Expr]]
    residual: list[Expr]


def reduced_solution(b: ProgramBuilder, tree: SymbolicTree, emb: EmbeddingMap,
                     tau: Sequence[Expr], f_ext: Sequence[Expr] | None = None
                     ) -> ReducedSolution:
    """The reduced equations 𝓜_R θ̈_R = Xᵀ(T − 𝒞 − 𝓜 Ẋθ̇_R) (Jain 2009, eq. 20: D_S =
    X_S* 𝓜_S X_S, and the check of §2.7), with 𝓜 by composite bodies, 𝒞 by one
    Newton-Euler pass at θ̈ = 0 (whose passes the loop bias shares), 𝓜 Ẋθ̇_R from 𝓜, and
    𝓜_R by a dense LDLᵀ."""
    m = mass_matrix(b, tree)
    mx = _mass_times_x(b, tree, emb, m)
    m_r = _x_transposed_times(b, tree, emb, mx)
    # 𝒞 (+ g) by Newton-Euler at θ̈ = 0, whose passes the loop bias shares, then + 𝓜 Ẋθ̇
    bias = tree_inverse_dynamics(b, tree, emb.v, None, f_ext)
    moving = [d for d in range(tree.nv) if emb.xdot_v[d] is not ZERO]
    residual = [b.emit(tau[i] - bias[i] - esum([m[i][d] * emb.xdot_v[d] for d in moving]))
                for i in range(tree.nv)]
    a_ind = dense.solve(b, dense.ldlt(b, m_r), project(b, emb, residual))
    return ReducedSolution(a_ind, expand(b, emb, a_ind), mx, residual)


def reduced_forward_dynamics(b: ProgramBuilder, tree: SymbolicTree, emb: EmbeddingMap,
                             tau: Sequence[Expr], f_ext: Sequence[Expr] | None = None
                             ) -> tuple[list[Expr], list[Expr]]:
    """(θ̈_R, θ̈) from the reduced equations (:func:`reduced_solution`): the cheaper route
    when the aggregates are large against the tree (small, planar or redundant
    mechanisms)."""
    solution = reduced_solution(b, tree, emb, tau, f_ext)
    return solution.a_ind, solution.a


def multipliers(b: ProgramBuilder, emb: EmbeddingMap, solution: ReducedSolution,
                keep: Sequence[int]) -> list[Expr]:
    """λ of the independent loop rows ``keep`` (in that order) with 𝓜 θ̈ + 𝒞 = T + Gᵀλ at
    the solution of the reduced equations. 𝓜 θ̈ + 𝒞 − T = 𝓜 X θ̈_R − r lies in the range
    of Gᵀ (Xᵀ annihilates it, and G X = 0), and a node's rows act on its own coordinates
    only: on its dependent ones, Y₁ᵀ λ_S = (𝓜 X θ̈_R − r)_dep, solved with the LU of Y₁
    the map already holds (the constraint forces are what the tree's inverse dynamics
    leaves unbalanced)."""
    position = {row: i for i, row in enumerate(keep)}
    lam: list[Expr | None] = [None] * len(keep)
    for node, factor in zip(emb.nodes, emb.lu, strict=True):
        if factor is None:
            continue
        unbalanced = [b.emit(esum([x * a for x, a in zip(solution.mx[d], solution.a_ind,
                                                         strict=True)])
                             - solution.residual[d]) for d in node.dependent]
        for row, value in zip(node.rows, lu_transposed_solve(b, factor, unbalanced),
                              strict=True):
            lam[position[row]] = value
    if any(x is None for x in lam):
        raise SymgenError("a loop row outside every aggregate: no multipliers by embedding")
    return [x for x in lam if x is not None]


def constrained_forward_dynamics(b: ProgramBuilder, tree: SymbolicTree, emb: EmbeddingMap,
                                 tau: Sequence[Expr], keep: Sequence[int],
                                 f_ext: Sequence[Expr] | None = None
                                 ) -> tuple[list[Expr], list[Expr]]:
    """(θ̈, λ) of 𝓜 θ̈ + 𝒞 = T + Gᵀλ, G θ̈ + γ = 0 by embedding: θ̈ from the reduced
    equations (:func:`reduced_solution`), λ from the dependent coordinates' rows
    (:func:`multipliers`); ``emb`` built from every rate (``embedding_map(v=...)``), so
    that the result is that of :func:`.constrained.forward_dynamics` at every state."""
    solution = reduced_solution(b, tree, emb, tau, f_ext)
    return solution.a, multipliers(b, emb, solution, keep)


def inverse_dynamics(b: ProgramBuilder, tree: SymbolicTree, emb: EmbeddingMap,
                     a_ind: Sequence[Expr], f_ext: Sequence[Expr] | None = None,
                     forces: Sequence[Expr] | None = None) -> tuple[list[Expr], list[Expr]]:
    """(T_R, θ̈): T_R = Xᵀ(T_S − Q) at θ̈ = X θ̈_R + Ẋ θ̇_R (module documentation)."""
    a = expand(b, emb, a_ind)
    tau = tree_inverse_dynamics(b, tree, emb.v, a, f_ext)
    if forces is not None:
        tau = [b.emit(t - f) for t, f in zip(tau, forces, strict=True)]
    return project(b, emb, tau), a


def reduced_mass_matrix(b: ProgramBuilder, tree: SymbolicTree, emb: EmbeddingMap,
                        m: list[list[Expr]] | None = None) -> list[list[Expr]]:
    """𝓜_R = Xᵀ 𝓜 X (``m``, else 𝓜 by composite bodies, Featherstone 2008, Table 6.2)."""
    m = mass_matrix(b, tree) if m is None else m
    return _x_transposed_times(b, tree, emb, _mass_times_x(b, tree, emb, m))


def _x_map(emb: EmbeddingMap) -> dict[int, list[tuple[int, Expr]]]:
    """X as a sparse map: coordinate d -> [(independent position, coefficient)]."""
    index = {d: i for i, d in enumerate(emb.independent)}
    x_of: dict[int, list[tuple[int, Expr]]] = {d: [(index[d], ONE)] for d in emb.independent}
    for node, x in zip(emb.nodes, emb.X, strict=True):
        for d, row in zip(node.dofs, x, strict=True):
            if d in node.dependent:
                x_of[d] = [(index[r], c) for r, c in zip(node.independent, row, strict=True)]
    return x_of


def _mass_times_x(b: ProgramBuilder, tree: SymbolicTree, emb: EmbeddingMap,
                  m: list[list[Expr]]) -> list[list[Expr]]:
    """𝓜 X (nv × n_R)."""
    n = len(emb.independent)
    x_of = _x_map(emb)
    mx = [[ZERO] * n for _ in range(tree.nv)]
    for i in range(tree.nv):
        for c in range(n):
            terms = [m[i][d] * coef for d, entries in x_of.items() for (col, coef) in entries
                     if col == c and m[i][d] is not ZERO]
            mx[i][c] = b.emit(esum(terms)) if terms else ZERO
    return mx


def _x_transposed_times(b: ProgramBuilder, tree: SymbolicTree, emb: EmbeddingMap,
                        mx: list[list[Expr]]) -> list[list[Expr]]:
    """Xᵀ (𝓜 X), symmetric: its lower triangle computed."""
    n = len(emb.independent)
    x_of = _x_map(emb)
    out = [[ZERO] * n for _ in range(n)]
    for r in range(n):
        for c in range(r + 1):
            terms = [coef * mx[d][c] for d, entries in x_of.items() for (row, coef) in entries
                     if row == r and mx[d][c] is not ZERO]
            value = b.emit(esum(terms)) if terms else ZERO
            out[r][c] = out[c][r] = value
    return out


__all__ = ["EmbeddingMap", "Node", "ReducedSolution", "constrained_forward_dynamics",
           "embedding_map", "expand", "forward_dynamics", "inverse_dynamics", "lu", "lu_solve",
           "lu_transposed_solve", "multipliers", "nodes", "project", "reduced_forward_dynamics",
           "reduced_mass_matrix", "reduced_solution"]
