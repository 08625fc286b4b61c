"""Couplings imposed: a coupled joint has no coordinate of its own.

A gear or mimic coupling ``q[joint] = ratio·q[master] + offset`` joins two 1-DOF tree joints.
As Pinocchio does with ``JointModelMimic`` (``buildModelFromUrdf(..., mimic=True)``), the
coupled joint is removed from q and v: its position follows its master's, its rate is
``ratio·v[master]``. A chain of couplings (j follows m, m follows n) composes into one map
onto the independent joint at its end: ``q_j = r_j r_m q_n + r_j o_m + o_j``.

With T the (tree nv × nv) map of the independent rates onto every tree joint's rate
(v_tree = T v, a_tree = T a), the principle of virtual work gives the coupled dynamics from the
tree's: τ = Tᵀ τ_tree, M = Tᵀ M_tree T (Pinocchio's mimic semantics).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from symgen.model.elements import Coupling, Joint
from symgen.model.scalars import Scalar


@dataclass(frozen=True)
class ResolvedCoupling:
    """``q[joint] = ratio·q[master] + offset`` with ``master`` an independent joint (chains
    of couplings composed)."""

    joint: str
    master: str
    ratio: Scalar
    offset: Scalar


def resolve_couplings(couplings: Sequence[Coupling]) -> dict[str, ResolvedCoupling]:
    """Every coupled joint's map onto the independent joint at the end of its chain.
    Couplings are assumed valid (no cycles; checked by the builder)."""
    direct = {c.joint: c for c in couplings}
    out: dict[str, ResolvedCoupling] = {}
    for name in direct:
        ratio: Scalar = 1.0
        offset: Scalar = 0.0
        joint = name
        while joint in direct:  # q_joint = r q_master + o, substituted down the chain
            c = direct[joint]
            offset = offset + ratio * c.offset
            ratio = ratio * c.ratio
            joint = c.master
        out[name] = ResolvedCoupling(name, joint, ratio, offset)
    return out


def coupling_matrices(
    joints: Sequence[Joint],
    coupled: dict[str, ResolvedCoupling],
    q_slices: dict[str, slice],
    v_slices: dict[str, slice],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P, q0, T) with ``q_tree = P q + q0`` and ``v_tree = T v`` for a numeric model: each
    joint's block of the tree vectors in model order, a coupled joint's one entry taken
    from its master's. Ratios and offsets must be numbers (resolve parameters first)."""
    tree_nq = sum(j.nq for j in joints)
    tree_nv = sum(j.nv for j in joints)
    nq = sum(j.nq for j in joints if j.name not in coupled)
    nv = sum(j.nv for j in joints if j.name not in coupled)
    p, q0, t = np.zeros((tree_nq, nq)), np.zeros(tree_nq), np.zeros((tree_nv, nv))
    iq = iv = 0
    for joint in joints:
        c = coupled.get(joint.name)
        if c is None:
            qs, vs = q_slices[joint.name], v_slices[joint.name]
            p[iq : iq + joint.nq, qs] = np.eye(joint.nq)
            t[iv : iv + joint.nv, vs] = np.eye(joint.nv)
        else:
            p[iq, q_slices[c.master].start] = float(c.ratio)
            q0[iq] = float(c.offset)
            t[iv, v_slices[c.master].start] = float(c.ratio)
        iq += joint.nq
        iv += joint.nv
    return p, q0, t


__all__ = ["ResolvedCoupling", "coupling_matrices", "resolve_couplings"]
