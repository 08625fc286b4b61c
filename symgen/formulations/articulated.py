"""Articulated-body quantities: O(N) forward dynamics by the innovations recursion and the
mass-matrix inverse from the operator factorization (Jain 2009, eq. 6-9; Featherstone 2008,
Table 7.1, is the same algorithm).

Local-frame forms used here, with S = H*(k), X = φ*(℘(k), k), P the articulated inertia
(Jain 2009, eq. 9; the tree form sums over children as in Jain 2012, eq. 12):

    P(k)  = M(k) + Σ_children Xᵀ P⁺(j) X
    U = P S,  D = Sᵀ U,  G = U D⁻¹,  τ̄ = I − G Sᵀ,  P⁺ = τ̄ P = P − G Uᵀ
    z(k)  = 𝔟(k) + Σ_children Xᵀ z⁺(j),   u = T − Sᵀ z
    z⁺(k) = z + P⁺ 𝔞 + G u            (= Jain's z + G ε with ε = u − Uᵀ𝔞)
    α⁺ = X α(℘) + 𝔞,   θ̈ = D⁻¹(u − Uᵀ α⁺),   α = α⁺ + S θ̈

Jain's z (eq. 9) includes P(k)𝔞(k); carrying P⁺𝔞 across the hinge instead is the same
recursion (P𝔞 − G Sᵀ P𝔞 = P⁺𝔞) and spares the product at the hinges next to the root.

Joint armature J_a enters as D = Sᵀ U + J_a (Pinocchio's ABA, Carpentier et al. 2019): the
hinge's equation T = Sᵀ f + J_a θ̈ is the articulated-body one with Sᵀ P S replaced by D, so
G, P⁺, θ̈ and the 𝓜⁻¹ factors below all use that D.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from symgen.errors import SymgenError
from symgen.formulations import dense
from symgen.formulations.recursions import (
    gyroscopic,
    hinge_rates,
    joint_map,
    motion_pass,
    root_acceleration,
)
from symgen.formulations.tree.hinges import Hinge, SymbolicTree
from symgen.ir.expr import Expr, esum
from symgen.ir.program import ProgramBuilder
from symgen.spatial import (
    ZERO,
    ArticulatedInertia,
    Compliance,
    Force,
    ForceMap,
    JointVector,
    Motion,
)


@dataclass
class Factor:
    """Per hinge: articulated inertia P, U = P S, D = Sᵀ U (factored), G = U D⁻¹ and P⁺
    (None next to the root, where it is not needed)."""

    P: ArticulatedInertia
    U: ForceMap
    D: dense.LDLT
    G: ForceMap
    P_plus: ArticulatedInertia | None


def _gain(b: ProgramBuilder, U: ForceMap, D: dense.LDLT) -> ForceMap:
    """``G = U D⁻¹`` (each row of U solved against D)."""
    n = D.n
    if n == 1:
        return ForceMap([(U[0] * D.inv_d[0]).emit(b)])
    rows = [dense.solve(b, D, [U[c][r] for c in range(n)]) for r in range(6)]
    return ForceMap(Force(rows[r][c] for r in range(6)) for c in range(n))


def articulated_factors(b: ProgramBuilder, tree: SymbolicTree) -> list[Factor]:
    """The Riccati sweep for P, D, G, tip to base (Jain 2009, eq. 9). A DOF shared by the
    hinges of coupled joints breaks the recursion's one-hinge-per-DOF structure: those trees
    use the mass matrix and LᵀDL (:mod:`.ltdl`), as Pinocchio's ABA rejects mimic joints."""
    if tree.coupled:
        raise SymgenError(f"model {tree.model.name!r} has coupled joints: the articulated-body "
                          "recursion does not apply (use forward_dynamics='ltdl')")
    P = [
        ArticulatedInertia(h.inertia.matrix()) if h.inertia else ArticulatedInertia.zero()
        for h in tree.hinges
    ]
    out: dict[int, Factor] = {}
    for k in reversed(range(len(tree.hinges))):
        out[k] = hinge_factor(b, tree.hinges[k], k, P)
    return [out[k] for k in range(len(tree.hinges))]


def hinge_factor(b: ProgramBuilder, hinge: Hinge, k: int, P: list[ArticulatedInertia]
                 ) -> Factor:
    """One hinge ``k`` of the Riccati sweep (Jain 2009, eq. 9): U = P H*, 𝒟 = H P H*
    (+ armature), 𝒢 = U 𝒟⁻¹ and, below the root, P⁺ = P − 𝒢 Uᵀ, added to the parent's
    articulated inertia in ``P`` as φ P⁺ φ*."""
    X, S, Pk = hinge.X, joint_map(hinge), P[k]
    U = ForceMap((Pk @ s).emit(b) for s in S)  # U = P H*
    D = [[b.emit(s.dot(u)) for u in U] for s in S]  # 𝒟 = H P H*
    if hinge.armature is not None:
        for i, arm in enumerate(hinge.armature):
            D[i][i] = b.emit(D[i][i] + arm)
    D_fac = dense.ldlt(b, D)
    G = _gain(b, U, D_fac)  # 𝒢 = P H* 𝒟⁻¹
    P_plus = None
    if hinge.parent >= 0:
        P_plus = (Pk - G @ U.T).emit(b)  # P⁺ = τ̄ P = P − 𝒢 H P
        P[hinge.parent] = (P[hinge.parent] + X.T @ P_plus @ X).emit(b)  # + φ P⁺ φ*
    return Factor(Pk, U, D_fac, G, P_plus)


def forward_dynamics(
    b: ProgramBuilder,
    tree: SymbolicTree,
    v: Sequence[Expr],
    tau: Sequence[Expr],
    f_ext: Sequence[Expr] | None = None,
) -> list[Expr]:
    """θ̈ = 𝓜⁻¹(T − 𝒞) by the O(N) articulated-body recursion (Jain 2009, eq. 7-9); 𝓜 and
    𝒞 are never formed."""
    vel = motion_pass(b, tree, v)
    z = gyroscopic(b, tree, vel, f_ext)  # z(k) starts from 𝔟(k)
    facs = articulated_factors(b, tree)
    hinges = tree.hinges
    eps: dict[int, JointVector] = {}
    for k in reversed(range(len(hinges))):
        hinge, fac = hinges[k], facs[k]
        S = joint_map(hinge)
        eps[k] = (hinge_rates(tree, k, tau) - (S.T @ z[k]).emit(b)).emit(b)  # T − H z
        if fac.P_plus is not None:  # not at the root
            z_plus = (z[k] + fac.P_plus @ vel.coriolis[k] + fac.G @ eps[k]).emit(b)
            z[hinge.parent] = (z[hinge.parent] + hinge.X.T @ z_plus).emit(b)  # + φ z⁺
    qdd: list[Expr] = [ZERO] * tree.nv
    acc: list[Motion] = []
    a_root = root_acceleration(tree, gravity=True)
    for k, hinge in enumerate(hinges):
        fac = facs[k]
        alpha_parent = acc[hinge.parent] if hinge.parent >= 0 else a_root
        alpha_plus = (hinge.X @ alpha_parent + vel.coriolis[k]).emit(b)  # φ* α(℘) + 𝔞
        rates = dense.solve(b, fac.D, eps[k] - (fac.U.T @ alpha_plus).emit(b))  # D⁻¹(ε − Uᵀα⁺)
        for d, r in zip(hinge.dofs, rates, strict=True):
            qdd[d] = r
        acc.append((alpha_plus + joint_map(hinge) @ rates).emit(b))  # α = α⁺ + H* θ̈
    return qdd


def mass_matrix_inverse(b: ProgramBuilder, tree: SymbolicTree) -> list[list[Expr]]:
    """𝓜⁻¹ = [I − HψK]* 𝒟⁻¹ [I − HψK] (Jain 2009, eq. 6) without forming or inverting 𝓜.

    With L = I − HψK, column block k of L is −H(i) Q(i,k) at each ancestor i, where
    ``Q(℘(k),k) = φ G(k)`` and ``Q(℘(i),k) = φ τ̄(i) Q(i,k)``. The compliance
    ``Υ(k) = τ̄ᵀ Υ⁺ τ̄ + S D⁻¹ Sᵀ``, ``Υ⁺(k) = X Υ(℘) Xᵀ`` (Jain, *Partitioning*, eq. 22,
    with τ̄ = I − G Sᵀ in place of the printed τ) sums the ancestors' terms of
    𝓜⁻¹ = Lᵀ𝒟⁻¹L, so that, for a tree:

    - 𝓜⁻¹(k,k) = D⁻¹ + Gᵀ Υ⁺ G;
    - j an ancestor of k: 𝓜⁻¹(j,k) = Gᵀ(j) Υ⁺(j) τ̄(j) Q(j,k) − D⁻¹(j) Sᵀ(j) Q(j,k);
    - j, k on different branches below their nearest common ancestor c:
      𝓜⁻¹(j,k) = Q(c,j)ᵀ Υ(c) Q(c,k); zero when they meet only at the root.
    """
    facs = articulated_factors(b, tree)
    hinges = tree.hinges
    n = len(hinges)
    d_inv = [dense.inverse(b, f.D) for f in facs]
    Y: list[Compliance] = []
    W: list[list[Motion]] = []  # Υ⁺ G
    for k, hinge in enumerate(hinges):
        G, X = facs[k].G, hinge.X
        parent = hinge.parent
        Y_plus = (X @ Y[parent] @ X.T).emit(b) if parent >= 0 else Compliance.zero()
        w = [(Y_plus @ g).emit(b) for g in G]
        W.append(w)
        gw = [[b.emit(gi.dot(wj)) for wj in w] for gi in G]
        Y.append(Compliance(_compliance(Y_plus, joint_map(hinge), w, gw, d_inv[k])).emit(b))
    nv = tree.nv
    Minv: list[list[Expr]] = [[ZERO] * nv for _ in range(nv)]
    # Q(i, k) for every strict ancestor i of k, in i's frame
    Q: dict[tuple[int, int], list[Force]] = {}
    for k in range(n):
        hk, fk = hinges[k], facs[k]
        diag = [[b.emit(d_inv[k][r][c] + fk.G[r].dot(W[k][c])) for c in range(hk.ndof)]
                for r in range(hk.ndof)]  # D⁻¹ + Gᵀ Υ⁺ G
        _set_block(Minv, hk.dofs, hk.dofs, diag)
        cols = list(fk.G)
        i = k
        while hinges[i].parent >= 0:
            X = hinges[i].X
            cols = [(X.T @ c).emit(b) for c in cols]  # φ(℘(i), i) Q(i, k)
            i = hinges[i].parent
            Q[i, k] = cols
            fi, hi = facs[i], hinges[i]
            sq = [(joint_map(hi).T @ c).emit(b) for c in cols]  # per column of k: Sᵀ(i) Q
            cols = [(c - fi.G @ s).emit(b) for c, s in zip(cols, sq, strict=True)]  # τ̄(i) Q
            block = [
                [b.emit(W[i][r].dot(cols[c])
                        - esum([d_inv[i][r][m] * sq[c][m] for m in range(hi.ndof)]))
                 for c in range(hk.ndof)]
                for r in range(hi.ndof)
            ]  # Gᵀ Υ⁺ τ̄ Q − D⁻¹ Sᵀ Q
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
                        yq = [(Y[c] @ q).emit(b) for q in Q[c, k]]  # Υ(c) Q(c, k)
                        block = [[b.emit(qj.dot(yk)) for yk in yq] for qj in Q[c, j]]
                        _set_block(Minv, hinges[j].dofs, hinges[k].dofs, block)
    return Minv


def _compliance(
    Y_plus: Compliance,
    S: Sequence[Motion],
    W: Sequence[Motion],
    GW: Sequence[Sequence[Expr]],
    D_inv: Sequence[Sequence[Expr]],
) -> list[list[Expr]]:
    """``Υ = τ̄ᵀ Υ⁺ τ̄ + S D⁻¹ Sᵀ`` expanded with W = Υ⁺ G and τ̄ = I − G Sᵀ:
    ``Υ = Υ⁺ − S Wᵀ − W Sᵀ + S (Gᵀ W + D⁻¹) Sᵀ``, entry by entry."""
    entries = []
    for i in range(6):
        row = []
        for j in range(6):
            e = Y_plus.rows[i][j]
            for c in range(len(S)):
                e = e - S[c][i] * W[c][j] - W[c][i] * S[c][j]
                for c2 in range(len(S)):
                    e = e + S[c][i] * (GW[c][c2] + D_inv[c][c2]) * S[c2][j]
            row.append(e)
        entries.append(row)
    return entries


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


__all__ = ["Factor", "articulated_factors", "forward_dynamics", "hinge_factor",
           "mass_matrix_inverse"]
