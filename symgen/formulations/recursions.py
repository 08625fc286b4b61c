"""Newton-Euler recursions on the hinge tree: velocities, accelerations, inverse dynamics
and the composite-body mass matrix (Jain 2009 eq. 1-3, Jain 2012 eq. 12; papers-digest
§2.1, §6.3).

Local frames (papers-digest §10.2): with ``X = φ*(℘(k), k)`` the parent → hinge transform
and ``S = H*(k)`` the joint map in hinge coordinates,

    V(k) = X V(℘) + S θ̇(k)
    α(k) = X α(℘) + S θ̈(k) + 𝔞(k),     𝔞(k) = c_J + (X V(℘)) × S θ̇(k)
    f(k) = Σ_children Xᵀ f(j) + M(k) α(k) + 𝔟(k),   𝔟(k) = V(k) ×* M(k) V(k) − f_ext(k)
    T(k) = Sᵀ f(k)

α is the spatial acceleration (Featherstone's convention, papers-digest §6.1 allows either),
c_J = S̊ θ̇ the apparent derivative of S, and gravity enters as the root acceleration
α(root) = [0; −g] (papers-digest §6.2).

Joint armature J_a (rotor inertia reflected on the joint, Pinocchio's ``model.armature``)
adds J_a θ̈(k) to T(k) and J_a to the diagonal of 𝓜: 𝓜 + diag(J_a).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..expr import Expr, esum
from ..program import ProgramBuilder
from ..spatial import (
    ZERO,
    ZERO6,
    RigidInertia,
    Vec6,
    add,
    emit_vec,
    force_cross,
    motion_cross,
    scale,
    sub,
)
from .tree import SymbolicTree


@dataclass
class Motion:
    """Per hinge: transported parent velocity ``X V(℘)``, joint velocity ``S θ̇``,
    velocity V and Coriolis term 𝔞."""

    vx: list[Vec6]
    vj: list[Vec6]
    V: list[Vec6]
    coriolis: list[Vec6]


def combine(b: ProgramBuilder, cols: Sequence[Vec6], rates: Sequence[Expr]) -> Vec6:
    """``S θ`` for joint-map columns S and rates θ."""
    total: tuple[Expr, ...] = ZERO6
    for col, rate in zip(cols, rates, strict=True):
        total = add(total, scale(rate, col))
    return emit_vec(b, total)  # type: ignore[return-value]


def transpose_times(b: ProgramBuilder, cols: Sequence[Vec6], f: Sequence[Expr]) -> list[Expr]:
    """``Sᵀ f``."""
    return [b.emit(esum([c * x for c, x in zip(col, f, strict=True)])) for col in cols]


def hinge_rates(tree: SymbolicTree, h: int, v: Sequence[Expr]) -> list[Expr]:
    return [v[d] for d in tree.hinges[h].dofs]


def joint_rates(tree: SymbolicTree, h: int, v: Sequence[Expr]) -> list[Expr]:
    """Rates of the whole model joint that hinge ``h`` belongs to (for c_J)."""
    joint = tree.model.joints[tree.hinges[h].joint]
    return list(v[tree.model.v_slices[joint.name]])


def motion_pass(b: ProgramBuilder, tree: SymbolicTree, v: Sequence[Expr] | None) -> Motion:
    """Velocities and Coriolis terms, base to tip (Jain 2009 eq. 1, top; digest §6.1)."""
    n = len(tree.hinges)
    vx: list[Vec6] = []
    vj: list[Vec6] = []
    V: list[Vec6] = []
    coriolis: list[Vec6] = []
    for h in range(n):
        hinge = tree.hinges[h]
        if v is None:
            vx.append(ZERO6)
            vj.append(ZERO6)
            V.append(ZERO6)
            coriolis.append(ZERO6)
            continue
        parent_v = V[hinge.parent] if hinge.parent >= 0 else ZERO6
        vx.append(hinge.X.motion(b, parent_v))
        vj.append(combine(b, hinge.S, hinge_rates(tree, h, v)))
        V.append(emit_vec(b, add(vx[h], vj[h])))  # type: ignore[arg-type]
        term = motion_cross(b, vx[hinge.coriolis_from], vj[h])
        if hinge.bias is not None:
            term = emit_vec(b, add(term, hinge.bias(b, joint_rates(tree, h, v))))  # type: ignore
        coriolis.append(term)
    return Motion(vx, vj, V, coriolis)


def root_acceleration(tree: SymbolicTree, gravity: bool) -> Vec6:
    """``[0; −g]``: gravity as an upward acceleration of the root (digest §6.2)."""
    if not gravity:
        return ZERO6
    return (ZERO, ZERO, ZERO) + tuple(-g for g in tree.gravity)  # type: ignore[return-value]


def acceleration_pass(
    b: ProgramBuilder,
    tree: SymbolicTree,
    motion: Motion,
    a: Sequence[Expr] | None,
    a_root: Vec6,
) -> list[Vec6]:
    """``α(k) = X α(℘) + S θ̈ + 𝔞(k)``, base to tip."""
    acc: list[Vec6] = []
    for h, hinge in enumerate(tree.hinges):
        parent_a = acc[hinge.parent] if hinge.parent >= 0 else a_root
        total = add(hinge.X.motion(b, parent_a), motion.coriolis[h])
        if a is not None:
            total = add(total, combine(b, hinge.S, hinge_rates(tree, h, a)))
        acc.append(emit_vec(b, total))  # type: ignore[arg-type]
    return acc


def gyroscopic(
    b: ProgramBuilder, tree: SymbolicTree, motion: Motion, f_ext: Sequence[Expr] | None
) -> list[Vec6]:
    """``𝔟(k) = V ×* M V − f_ext(k)`` per hinge (zero on mass-less sub-hinges)."""
    out: list[Vec6] = []
    for h, hinge in enumerate(tree.hinges):
        if hinge.inertia is None:
            out.append(ZERO6)
            continue
        term = force_cross(b, motion.V[h], hinge.inertia.times(b, motion.V[h]))
        if f_ext is not None and hinge.body is not None:
            term = emit_vec(b, sub(term, f_ext[6 * hinge.body : 6 * hinge.body + 6]))  # type: ignore
        out.append(term)
    return out


def inverse_dynamics(
    b: ProgramBuilder,
    tree: SymbolicTree,
    v: Sequence[Expr] | None,
    a: Sequence[Expr] | None,
    f_ext: Sequence[Expr] | None = None,
    gravity: bool = True,
) -> list[Expr]:
    """Joint forces T = Hφ(Mα + 𝔟) by the Newton-Euler recursion (Jain 2009 eq. 1;
    trees: Jain 2012 eq. 12). ``v``/``a`` None stand for zero velocity/acceleration."""
    motion = motion_pass(b, tree, v)
    acc = acceleration_pass(b, tree, motion, a, root_acceleration(tree, gravity))
    bias = gyroscopic(b, tree, motion, f_ext)
    forces: list[Vec6] = []
    for h, hinge in enumerate(tree.hinges):
        if hinge.inertia is None:
            forces.append(ZERO6)
        else:
            forces.append(emit_vec(b, add(hinge.inertia.times(b, acc[h]), bias[h])))  # type: ignore
    tau: list[Expr] = [ZERO] * tree.nv
    for h in reversed(range(len(tree.hinges))):
        hinge = tree.hinges[h]
        for d, value in zip(hinge.dofs, transpose_times(b, hinge.S, forces[h]), strict=True):
            tau[d] = value
        if hinge.armature is not None and a is not None:
            for d, arm in zip(hinge.dofs, hinge.armature, strict=True):
                tau[d] = b.emit(tau[d] + arm * a[d])
        if hinge.parent >= 0:
            moved = hinge.X.force_to_parent(b, forces[h])
            forces[hinge.parent] = emit_vec(b, add(forces[hinge.parent], moved))  # type: ignore
    return tau


def composite_inertias(b: ProgramBuilder, tree: SymbolicTree) -> list[RigidInertia | None]:
    """``R(k) = Σ_children φ R(j) φ* + M(k)`` (digest §6.3), tip to base."""
    comp: list[RigidInertia | None] = [h.inertia for h in tree.hinges]
    for h in reversed(range(len(tree.hinges))):
        hinge = tree.hinges[h]
        c = comp[h]
        if hinge.parent < 0 or c is None:
            continue
        moved = c.to_parent(b, hinge.X)
        own = comp[hinge.parent]
        comp[hinge.parent] = moved if own is None else own.add(b, moved)
    return comp


def mass_matrix(b: ProgramBuilder, tree: SymbolicTree) -> list[list[Expr]]:
    """𝓜 = HφMφ*H* the composite-body way (digest §6.3): 𝓜(k,k) = H R(k) H*, and walking
    inward from k, ``F ← φ F``, 𝓜(j,k) = H(j) F. Blocks of unrelated hinges are zero."""
    comp = composite_inertias(b, tree)
    n = tree.nv
    M: list[list[Expr]] = [[ZERO] * n for _ in range(n)]
    for h, hinge in enumerate(tree.hinges):
        c = comp[h]
        if c is None:
            continue
        F = [c.times(b, col) for col in hinge.S]
        block = [transpose_times(b, hinge.S, f) for f in F]
        if hinge.armature is not None:
            block = [
                [b.emit(x + arm) if r == col else x for r, x in enumerate(values)]
                for col, (values, arm) in enumerate(zip(block, hinge.armature, strict=True))
            ]
        _fill(M, hinge.dofs, hinge.dofs, block)
        j = h
        while tree.hinges[j].parent >= 0:
            F = [tree.hinges[j].X.force_to_parent(b, f) for f in F]
            j = tree.hinges[j].parent
            anc = tree.hinges[j]
            _fill(M, anc.dofs, hinge.dofs, [transpose_times(b, anc.S, f) for f in F])
    return M


def _fill(M: list[list[Expr]], rows: list[int], cols: list[int], by_col: list[list[Expr]]):
    """Set block (rows, cols) from per-column values and mirror it."""
    for c, values in zip(cols, by_col, strict=True):
        for r, value in zip(rows, values, strict=True):
            M[r][c] = value
            M[c][r] = value


__all__ = [
    "Motion",
    "acceleration_pass",
    "combine",
    "composite_inertias",
    "gyroscopic",
    "inverse_dynamics",
    "mass_matrix",
    "motion_pass",
    "root_acceleration",
    "transpose_times",
]
