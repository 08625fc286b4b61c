"""Articulated-body quantities: O(N) forward dynamics by the innovations recursion and the
mass-matrix inverse from the operator factorization (Jain 2009 eq. 6-9; papers-digest
§2.3-2.4, §3.5, §6.4).

Local-frame forms used here, with S = H*(k), X = φ*(℘(k), k), P the articulated inertia:

    P(k)  = M(k) + Σ_children Xᵀ P⁺(j) X
    U = P S,  D = Sᵀ U,  G = U D⁻¹,  τ̄ = I − G Sᵀ,  P⁺ = τ̄ P = P − G Uᵀ
    z(k)  = 𝔟(k) + Σ_children Xᵀ z⁺(j),   u = T − Sᵀ z
    z⁺(k) = z + P⁺ 𝔞 + G u            (= Jain's z + Gε with ε = u − Uᵀ𝔞)
    α⁺ = X α(℘) + 𝔞,   θ̈ = D⁻¹(u − Uᵀ α⁺),   α = α⁺ + S θ̈

(papers-digest §2.4: Jain's z includes P𝔞; moving P𝔞 behind the projection is the same
recursion and spares it at the hinges next to the root.)

Joint armature J_a enters as D = Sᵀ U + J_a (Pinocchio's ABA, Carpentier et al. 2019): the
hinge's equation T = Sᵀ f + J_a θ̈ is the articulated-body one with Sᵀ P S replaced by D, so
G, P⁺, θ̈ and the 𝓜⁻¹ factors below all use that D.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..expr import Expr, esum
from ..program import ProgramBuilder
from ..spatial import (
    ZERO,
    ZERO6,
    Mat,
    Vec6,
    add,
    emit_sym,
    emit_vec,
    mat_vec,
    motion_sym6_to_child,
    sub,
    sym6_to_parent,
)
from . import dense
from .recursions import (
    gyroscopic,
    motion_pass,
    root_acceleration,
    transpose_times,
)
from .tree import SymbolicTree

ZERO66: Mat = tuple((ZERO,) * 6 for _ in range(6))


@dataclass
class Factor:
    """Per hinge: articulated inertia P, U = P S, D = Sᵀ U (factored), G = U D⁻¹ (columns)
    and P⁺ (None next to the root, where it is not needed)."""

    P: Mat
    U: list[Vec6]
    D: dense.LDLT
    G: list[Vec6]
    P_plus: Mat | None


def _outer_sub(b: ProgramBuilder, p: Mat, g: list[Vec6], u: list[Vec6]) -> Mat:
    """``P − G Uᵀ`` (symmetric)."""
    return emit_sym(
        b,
        [
            [p[i][j] - esum([gc[i] * uc[j] for gc, uc in zip(g, u, strict=True)])
             for j in range(6)]
            for i in range(6)
        ],
    )


def _gain(b: ProgramBuilder, U: list[Vec6], D: dense.LDLT) -> list[Vec6]:
    """``G = U D⁻¹`` as columns (each row of U solved against D)."""
    n = D.n
    if n == 1:
        return [emit_vec(b, [x * D.inv_d[0] for x in U[0]])]  # type: ignore[list-item]
    rows = [dense.solve(b, D, [U[c][r] for c in range(n)]) for r in range(6)]
    return [tuple(rows[r][c] for r in range(6)) for c in range(n)]  # type: ignore[misc]


def articulated_factors(b: ProgramBuilder, tree: SymbolicTree) -> list[Factor]:
    """The Riccati sweep for P, D, G (Jain 2009 eq. 9, tip to base)."""
    n = len(tree.hinges)
    P: list[Mat] = [h.inertia.matrix() if h.inertia else ZERO66 for h in tree.hinges]
    out: list[Factor | None] = [None] * n
    for h in reversed(range(n)):
        hinge = tree.hinges[h]
        p = P[h]
        U = [emit_vec(b, mat_vec(p, col)) for col in hinge.S]
        D = [[b.emit(esum([s * x for s, x in zip(si, uj, strict=True)]))
              for uj in U] for si in hinge.S]
        if hinge.armature is not None:
            for i, arm in enumerate(hinge.armature):
                D[i][i] = b.emit(D[i][i] + arm)
        fac = dense.ldlt(b, D)
        G = _gain(b, U, fac)  # type: ignore[arg-type]
        p_plus = None
        if hinge.parent >= 0:
            p_plus = _outer_sub(b, p, G, U)  # type: ignore[arg-type]
            moved = sym6_to_parent(b, hinge.X, p_plus)
            P[hinge.parent] = emit_sym(
                b, [add(r1, r2) for r1, r2 in zip(P[hinge.parent], moved, strict=True)]
            )
        out[h] = Factor(p, U, fac, G, p_plus)  # type: ignore[arg-type]
    return out  # type: ignore[return-value]


def forward_dynamics(
    b: ProgramBuilder,
    tree: SymbolicTree,
    v: Sequence[Expr],
    tau: Sequence[Expr],
    f_ext: Sequence[Expr] | None = None,
) -> list[Expr]:
    """θ̈ = 𝓜⁻¹(T − 𝒞) by the O(N) articulated-body recursion (Jain 2009 eq. 7-9); 𝓜 and
    𝒞 are never formed."""
    motion = motion_pass(b, tree, v)
    z = gyroscopic(b, tree, motion, f_ext)
    facs = articulated_factors(b, tree)
    n = len(tree.hinges)
    u: list[list[Expr]] = [[] for _ in range(n)]
    for h in reversed(range(n)):
        hinge, fac = tree.hinges[h], facs[h]
        sz = transpose_times(b, hinge.S, z[h])
        u[h] = [b.emit(tau[d] - x) for d, x in zip(hinge.dofs, sz, strict=True)]
        if hinge.parent >= 0:
            zp = add(z[h], mat_vec(fac.P_plus, motion.coriolis[h]))  # type: ignore[arg-type]
            for gc, uc in zip(fac.G, u[h], strict=True):
                zp = add(zp, [g * uc for g in gc])
            moved = hinge.X.force_to_parent(b, emit_vec(b, zp))
            z[hinge.parent] = emit_vec(b, add(z[hinge.parent], moved))  # type: ignore
    qdd: list[Expr] = [ZERO] * tree.nv
    acc: list[Vec6] = []
    a_root = root_acceleration(tree, gravity=True)
    for h, hinge in enumerate(tree.hinges):
        fac = facs[h]
        parent_a = acc[hinge.parent] if hinge.parent >= 0 else a_root
        a_plus = emit_vec(b, add(hinge.X.motion(b, parent_a), motion.coriolis[h]))
        ua = transpose_times(b, fac.U, a_plus)
        rates = dense.solve(b, fac.D, [x - y for x, y in zip(u[h], ua, strict=True)])
        for d, r in zip(hinge.dofs, rates, strict=True):
            qdd[d] = r
        total = a_plus
        for col, r in zip(hinge.S, rates, strict=True):
            total = add(total, [c * r for c in col])
        acc.append(emit_vec(b, total))  # type: ignore[arg-type]
    return qdd


def mass_matrix_inverse(b: ProgramBuilder, tree: SymbolicTree) -> list[list[Expr]]:
    """𝓜⁻¹ = [I − HψK]* 𝒟⁻¹ [I − HψK] (Jain 2009 eq. 6) without forming or inverting 𝓜.

    With L = I − HψK, column block k of L is −H(i) Q(i,k) at each ancestor i, where
    ``Q(℘(k),k) = φ G(k)`` and ``Q(℘(i),k) = φ τ̄(i) Q(i,k)``. The compliance
    ``Υ(k) = τ̄ᵀ Υ⁺ τ̄ + S D⁻¹ Sᵀ``, ``Υ⁺(k) = X Υ(℘) Xᵀ`` (J-P eq. 22, corrected τ̄) sums
    the ancestors' terms of 𝓜⁻¹ = Lᵀ𝒟⁻¹L, so that (papers-digest §6.4, extended to trees):

    - 𝓜⁻¹(k,k) = D⁻¹ + Gᵀ Υ⁺ G;
    - j an ancestor of k: 𝓜⁻¹(j,k) = Gᵀ(j) Υ⁺(j) τ̄(j) Q(j,k) − D⁻¹(j) Sᵀ(j) Q(j,k);
    - j, k on different branches below their nearest common ancestor c:
      𝓜⁻¹(j,k) = Q(c,j)ᵀ Υ(c) Q(c,k); zero when they meet only at the root.
    """
    facs = articulated_factors(b, tree)
    hinges = tree.hinges
    n = len(hinges)
    d_inv = [dense.inverse(b, f.D) for f in facs]
    ups_plus: list[Mat] = []
    ups: list[Mat] = []
    W: list[list[Vec6]] = []  # Υ⁺ G
    for h, hinge in enumerate(hinges):
        fac = facs[h]
        parent = hinge.parent
        yp = motion_sym6_to_child(b, hinge.X, ups[parent]) if parent >= 0 else ZERO66
        ups_plus.append(yp)
        w = [emit_vec(b, mat_vec(yp, g)) for g in fac.G]
        W.append(w)  # type: ignore[arg-type]
        gw = [[b.emit(esum([x * y for x, y in zip(gi, wj, strict=True)])) for wj in w]
              for gi in fac.G]
        S = hinge.S
        k = len(S)
        entries = []
        for i in range(6):
            row = []
            for j in range(6):
                e = yp[i][j]
                for c in range(k):
                    e = e - S[c][i] * w[c][j] - w[c][i] * S[c][j]
                    for c2 in range(k):
                        e = e + S[c][i] * (gw[c][c2] + d_inv[h][c][c2]) * S[c2][j]
                row.append(e)
            entries.append(row)
        ups.append(emit_sym(b, entries))
    nv = tree.nv
    Minv: list[list[Expr]] = [[ZERO] * nv for _ in range(nv)]
    # Q(i, k) for every strict ancestor i of k, in i's frame
    Q: dict[tuple[int, int], list[Vec6]] = {}
    for k in range(n):
        hk, fk = hinges[k], facs[k]
        diag = [[b.emit(d_inv[k][r][c] + esum([x * y for x, y in zip(fk.G[r], W[k][c],
                                                                             strict=True)]))
                 for c in range(hk.ndof)] for r in range(hk.ndof)]
        _set_block(Minv, hk.dofs, hk.dofs, diag)
        cols = fk.G
        i = k
        while hinges[i].parent >= 0:
            cols = [hinges[i].X.force_to_parent(b, c) for c in cols]
            i = hinges[i].parent
            Q[i, k] = cols
            fi = facs[i]
            hi = hinges[i]
            sq = [transpose_times(b, hi.S, c) for c in cols]  # per column of k: Sᵀ(i) Q
            cols = [
                emit_vec(b, sub(c, _combine_cols(fi.G, s)))  # type: ignore[misc]
                for c, s in zip(cols, sq, strict=True)
            ]  # τ̄(i) Q
            block = [
                [b.emit(esum([x * y for x, y in zip(W[i][r], cols[c], strict=True)])
                        - esum([d_inv[i][r][m] * sq[c][m] for m in range(hi.ndof)]))
                 for c in range(hk.ndof)]
                for r in range(hi.ndof)
            ]
            _set_block(Minv, hi.dofs, hk.dofs, block)
    # pairs on different branches: nearest common ancestor c
    for c in range(n):
        kids = hinges[c].children
        if len(kids) < 2:
            continue
        subtrees = [_subtree(tree, kid) for kid in kids]
        for a_idx in range(len(kids)):
            for b_idx in range(a_idx + 1, len(kids)):
                for j in subtrees[a_idx]:
                    for k in subtrees[b_idx]:
                        yq = [emit_vec(b, mat_vec(ups[c], col)) for col in Q[c, k]]
                        block = [
                            [b.emit(esum([x * y for x, y in zip(qj, yk, strict=True)]))
                             for yk in yq]
                            for qj in Q[c, j]
                        ]
                        _set_block(Minv, hinges[j].dofs, hinges[k].dofs, block)
    return Minv


def _combine_cols(cols: Sequence[Vec6], coeffs: Sequence[Expr]) -> tuple[Expr, ...]:
    total: tuple[Expr, ...] = ZERO6
    for col, x in zip(cols, coeffs, strict=True):
        total = add(total, [c * x for c in col])
    return total


def _subtree(tree: SymbolicTree, h: int) -> list[int]:
    out, stack = [], [h]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(tree.hinges[x].children)
    return sorted(out)


def _set_block(M: list[list[Expr]], rows: list[int], cols: list[int], block) -> None:
    for r, row in zip(rows, block, strict=True):
        for c, value in zip(cols, row, strict=True):
            M[r][c] = value
            M[c][r] = value


__all__ = ["Factor", "articulated_factors", "forward_dynamics", "mass_matrix_inverse"]

