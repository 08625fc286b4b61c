"""Newton-Euler recursions on the hinge tree: velocities, accelerations, inverse dynamics
and the composite-body mass matrix.

Jain 2009, eq. 1-3 state the recursions for a serial chain and Jain 2012, eq. 8 and 12-15
for a tree; they are the recursive Newton-Euler and composite-rigid-body algorithms of
Featherstone 2008 (Table 5.1, Table 6.2). In hinge coordinates, with ``X = φ*(℘(k), k)``
the parent → hinge transform and ``S = H*(k)`` the joint map (constant or sparse there):

    V(k) = X V(℘) + S θ̇(k)                                          Jain 2012, eq. 8
    α(k) = X α(℘) + S θ̈(k) + 𝔞(k),    𝔞(k) = c_J + (X V(℘)) × S θ̇(k)   eq. 14
    f(k) = Σ_children Xᵀ f(j) + M(k) α(k) + 𝔟(k),                   eq. 12
           𝔟(k) = V(k) ×* M(k) V(k) − f_ext(k)
    T(k) = Sᵀ f(k)                                                   eq. 13; Jain 2009, eq. 1

α is the spatial acceleration (Featherstone 2008, §2.11), c_J = S̊ θ̇ the apparent derivative
of S (Featherstone 2008, eq. 4.35), and gravity enters as the root acceleration
α(root) = [0; −g] (Featherstone 2008, §5.3).

Joint armature J_a (rotor inertia reflected on the joint, Pinocchio's ``model.armature``)
adds J_a θ̈(k) to T(k) and J_a to the diagonal of 𝓜: 𝓜 + diag(J_a).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from symgen.formulations.tree.hinges import Hinge, SymbolicTree
from symgen.ir.expr import Expr
from symgen.ir.program import ProgramBuilder
from symgen.spatial import (
    ZERO,
    Force,
    Inertia,
    JointMap,
    JointVector,
    Motion,
    add,
    cross,
    emit_vec,
    mat_vec,
    scale,
    vec3,
)


@dataclass
class Velocities:
    """Per hinge: transported parent velocity ``X V(℘)``, joint velocity ``S θ̇``,
    velocity V and Coriolis acceleration 𝔞."""

    vx: list[Motion]
    vj: list[Motion]
    V: list[Motion]
    coriolis: list[Motion]


def joint_map(hinge: Hinge) -> JointMap:
    """``S = H*(k)`` of a hinge."""
    return JointMap(hinge.S)


def hinge_rates(tree: SymbolicTree, h: int, v: Sequence[Expr]) -> JointVector:
    """θ̇(k) (or θ̈(k), T(k)): the entries of ``v`` that belong to hinge ``h``."""
    return JointVector(v[d] for d in tree.hinges[h].dofs)


def joint_rates(tree: SymbolicTree, h: int, v: Sequence[Expr]) -> list[Expr]:
    """Rates of the whole model joint that hinge ``h`` belongs to (for c_J)."""
    joint = tree.model.joints[tree.hinges[h].joint]
    return list(v[tree.model.v_slices[joint.name]])


def motion_pass(b: ProgramBuilder, tree: SymbolicTree, v: Sequence[Expr] | None) -> Velocities:
    """Velocities and Coriolis terms, base to tip (Jain 2012, eq. 8 and 14)."""
    out = Velocities([], [], [], [])
    for h, hinge in enumerate(tree.hinges):
        if v is None:
            for per_hinge in (out.vx, out.vj, out.V, out.coriolis):
                per_hinge.append(Motion())
            continue
        X, S = hinge.X, joint_map(hinge)
        V_parent = out.V[hinge.parent] if hinge.parent >= 0 else Motion()
        vx = (X @ V_parent).emit(b)  # φ*(℘(k), k) V(℘(k))
        vj = (S @ hinge_rates(tree, h, v)).emit(b)  # H*(k) θ̇(k)
        out.vx.append(vx)
        out.vj.append(vj)
        out.V.append((vx + vj).emit(b))  # V(k) = φ* V(℘) + H* θ̇
        # 𝔞(k) = (X V(℘)) × H* θ̇ + c_J; sub-hinges of a split joint take X V(℘) of its first
        a = out.vx[hinge.coriolis_from].cross(vj).emit(b)
        if hinge.bias is not None:
            a = (a + Motion(hinge.bias(b, joint_rates(tree, h, v)))).emit(b)
        out.coriolis.append(a)
    return out


def root_acceleration(tree: SymbolicTree, gravity: bool) -> Motion:
    """``[0; −g]``: gravity as an upward acceleration of the root (Featherstone 2008,
    §5.3)."""
    if not gravity:
        return Motion()
    return Motion((ZERO, ZERO, ZERO, *(-g for g in tree.gravity)))


def acceleration_pass(
    b: ProgramBuilder,
    tree: SymbolicTree,
    vel: Velocities,
    a: Sequence[Expr] | None,
    a_root: Motion,
) -> list[Motion]:
    """``α(k) = X α(℘) + S θ̈ + 𝔞(k)``, base to tip (Jain 2012, eq. 14)."""
    acc: list[Motion] = []
    for h, hinge in enumerate(tree.hinges):
        X, S = hinge.X, joint_map(hinge)
        alpha_parent = acc[hinge.parent] if hinge.parent >= 0 else a_root
        alpha = (X @ alpha_parent).emit(b) + vel.coriolis[h]
        if a is not None:
            alpha = alpha + (S @ hinge_rates(tree, h, a)).emit(b)
        acc.append(alpha.emit(b))
    return acc


def gyroscopic(
    b: ProgramBuilder, tree: SymbolicTree, vel: Velocities, f_ext: Sequence[Expr] | None
) -> list[Force]:
    """``𝔟(k) = V ×* M V − f_ext(k)`` per hinge (Jain 2012, eq. 12; zero on mass-less
    sub-hinges)."""
    out: list[Force] = []
    for h, hinge in enumerate(tree.hinges):
        M = hinge.inertia
        if M is None:
            out.append(Force())
            continue
        bias = body_force(b, M, vel.V[h], Motion()).emit(b)  # V ×* M V
        if f_ext is not None and hinge.body is not None:
            bias = (bias - Force(f_ext[6 * hinge.body : 6 * hinge.body + 6])).emit(b)
        out.append(bias)
    return out


def body_force(b: ProgramBuilder, M: Inertia, V: Motion, alpha: Motion) -> Force:
    """``M α + V ×* M V`` (Jain 2012, eq. 12) in the classical Newton-Euler form (Luh, Walker
    & Paul, "On-line computational scheme for mechanical manipulators", 1980), which drops the
    terms that cancel (ν × mν = 0, and two triple products
    that add up to h × (ω × ν) by Jacobi's identity): with V = (ω, ν), α = (ω̇, ν̇), M = (m, h,
    J) and a₀ = ν̇ + ω × ν the classical acceleration of the frame origin,

        n = J ω̇ + ω × (J ω) + h × a₀,    f = m a₀ + ω̇ × h + ω × (ω × h)."""
    w, nu = V.angular, V.linear
    dw = alpha.angular
    a0 = emit_vec(b, add(alpha.linear, cross(w, nu)))
    jw = emit_vec(b, mat_vec(M.J, w))
    wh = emit_vec(b, cross(w, M.h))
    n = add(add(mat_vec(M.J, dw), cross(w, jw)), cross(M.h, a0))
    f = add(add(scale(M.m, a0), cross(dw, M.h)), cross(w, wh))
    return Force(vec3(n) + vec3(f))


def inverse_dynamics(
    b: ProgramBuilder,
    tree: SymbolicTree,
    v: Sequence[Expr] | None,
    a: Sequence[Expr] | None,
    f_ext: Sequence[Expr] | None = None,
    gravity: bool = True,
) -> list[Expr]:
    """Joint forces T = Hφ(Mα + 𝔟) by the Newton-Euler recursion (Jain 2009, eq. 1-3;
    trees: Jain 2012, eq. 15). ``v``/``a`` None stand for zero velocity/acceleration."""
    vel = motion_pass(b, tree, v)
    acc = acceleration_pass(b, tree, vel, a, root_acceleration(tree, gravity))
    f: list[Force] = []
    for h, hinge in enumerate(tree.hinges):
        M = hinge.inertia
        if M is None:
            f.append(Force())
            continue
        force = body_force(b, M, vel.V[h], acc[h])
        if f_ext is not None and hinge.body is not None:
            force = force - Force(f_ext[6 * hinge.body : 6 * hinge.body + 6])
        f.append(force.emit(b))
    tau: list[Expr] = [ZERO] * tree.nv
    for h in reversed(range(len(tree.hinges))):
        hinge = tree.hinges[h]
        X, S = hinge.X, joint_map(hinge)
        T = (S.T @ f[h]).emit(b)  # T(k) = H(k) f(k)
        for d, value in zip(hinge.dofs, T, strict=True):
            tau[d] = accumulate(b, tau[d], value)  # coupled joints share their master's
        if hinge.armature is not None and a is not None:
            for d, arm in zip(hinge.dofs, hinge.armature, strict=True):
                tau[d] = b.emit(tau[d] + arm * a[d])
        if hinge.parent >= 0:
            f[hinge.parent] = (f[hinge.parent] + X.T @ f[h]).emit(b)  # + φ(℘(k), k) f(k)
    return tau


def composite_inertias(b: ProgramBuilder, tree: SymbolicTree) -> list[Inertia | None]:
    """``R(k) = M(k) + Σ_children φ(k, j) R(j) φ*(k, j)``, tip to base: the inertia of the
    subtree rooted at k (Featherstone 2008, Table 6.2)."""
    R: list[Inertia | None] = [h.inertia for h in tree.hinges]
    for h in reversed(range(len(tree.hinges))):
        hinge = tree.hinges[h]
        Rk = R[h]
        if hinge.parent < 0 or Rk is None:
            continue
        X = hinge.X
        moved = (X.T @ Rk @ X).realize(b)
        own = R[hinge.parent]
        R[hinge.parent] = moved if own is None else (own + moved).emit(b)
    return R


def mass_matrix(b: ProgramBuilder, tree: SymbolicTree) -> list[list[Expr]]:
    """𝓜 = HφMφ*H* (Jain 2009, eq. 3) the composite-body way (Featherstone 2008,
    Table 6.2): 𝓜(k, k) = H R(k) H*, and walking inward from k, ``F ← φ F``,
    𝓜(j, k) = H(j) F. Blocks of unrelated hinges are zero."""
    R = composite_inertias(b, tree)
    n = tree.nv
    M: list[list[Expr]] = [[ZERO] * n for _ in range(n)]
    for h, hinge in enumerate(tree.hinges):
        Rk = R[h]
        if Rk is None:
            continue
        S = joint_map(hinge)
        F = [(Rk @ s).emit(b) for s in S]  # F = R(k) H*(k)
        block = [list((S.T @ f).emit(b)) for f in F]
        if hinge.armature is not None:
            block = [
                [b.emit(x + arm) if r == col else x for r, x in enumerate(values)]
                for col, (values, arm) in enumerate(zip(block, hinge.armature, strict=True))
            ]
        _fill(b, M, hinge.dofs, hinge.dofs, block, diagonal=True)
        j = h
        while tree.hinges[j].parent >= 0:
            X = tree.hinges[j].X
            F = [(X.T @ f).emit(b) for f in F]  # F ← φ(℘(j), j) F
            j = tree.hinges[j].parent
            anc = tree.hinges[j]
            _fill(b, M, anc.dofs, hinge.dofs, [list((joint_map(anc).T @ f).emit(b)) for f in F])
    return M


def accumulate(b: ProgramBuilder, total: Expr, value: Expr) -> Expr:
    """``total + value``, emitted only when ``total`` already holds a term: a coupled joint
    adds its share to its master's DOF (τ = Tᵀ τ_tree, :mod:`symgen.model.couplings`)."""
    return value if total is ZERO else b.emit(total + value)


def _fill(b: ProgramBuilder, M: list[list[Expr]], rows: list[int], cols: list[int],
          by_col: list[list[Expr]], diagonal: bool = False):
    """Add block (rows, cols), given per column, and its mirror (M = Tᵀ M_tree T: a coupled
    joint adds its blocks to its master's DOFs). A ``diagonal`` block (a hinge with itself)
    holds both triangles already and is added once."""
    for c, values in zip(cols, by_col, strict=True):
        for r, value in zip(rows, values, strict=True):
            M[r][c] = accumulate(b, M[r][c], value)
            if not diagonal:
                M[c][r] = accumulate(b, M[c][r], value)


__all__ = [
    "Velocities",
    "accumulate",
    "acceleration_pass",
    "body_force",
    "composite_inertias",
    "gyroscopic",
    "hinge_rates",
    "inverse_dynamics",
    "joint_map",
    "mass_matrix",
    "motion_pass",
    "root_acceleration",
]
