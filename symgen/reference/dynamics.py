"""Inverse dynamics (RNEA), mass matrix (CRBA) and forward dynamics (ABA).

Featherstone, *Rigid Body Dynamics Algorithms* (2008): Table 5.1 (RNEA), Table 6.2 (CRBA)
and Table 7.1 (ABA), for multi-DOF joints with configuration-dependent S (bias c_J). Loop
joints are not imposed (the dynamics of the spanning tree); couplings are: the tree's
algorithms run on the tree coordinates q_tree = P q + q0, v_tree = T v, and τ = Tᵀ τ_tree,
M = Tᵀ M_tree T (virtual work; :mod:`symgen.model.couplings`).
External forces are per body, in body coordinates about the body-frame origin, applied to
the body.

Joint armature J_a (a rotor of inertia J_a spinning at the joint rate, its reaction taken by
the parent) adds the term J_a q̈ to the joint's equation: τ_i = S_iᵀ f_i + J_a,i q̈_i. Hence
τ += J_a ∘ a in the RNEA, M += diag(J_a) in the CRBA, and, in the ABA, the joint's equation
τ_i = S_iᵀ(I_i^A a_i + p_i^A) + J_a,i q̈_i with a_i = a'_i + S_i q̈_i gives
q̈_i = D_i⁻¹(u_i − U_iᵀ a'_i) with D_i = S_iᵀ I_i^A S_i + diag(J_a,i).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from symgen.model import Model
from symgen.reference._numeric import (
    external_forces,
    model_forces,
    model_matrix,
    prepare,
    tree_configuration,
    tree_rates,
    vector,
)
from symgen.reference.joints import bias_acceleration
from symgen.reference.kinematics import motion_pass, tree_kinematics
from symgen.reference.spatial import cross_force, cross_motion

Array = np.ndarray
Params = Mapping[str, float] | None


def _gravity_root(gravity: Array) -> Array:
    """Root acceleration ``-a_g``: the fictitious upward acceleration that accounts for
    gravity (Featherstone 2008, §5.3)."""
    return np.concatenate([np.zeros(3), -gravity])


def inverse_dynamics(
    model: Model, q, v, a, f_ext: Mapping[str, object] | None = None, params: Params = None
) -> Array:
    """Joint forces τ = M(q) a + C(q, v) v + g(q) − Σ J_iᵀ f_ext,i (RNEA, Featherstone 2008,
    Table 5.1), plus the armature term J_a ∘ a."""
    nm = prepare(model, params)
    q = tree_configuration(nm, q)
    v = tree_rates(nm, "v", v)
    a = tree_rates(nm, "a", a)
    fx = external_forces(nm, f_ext)
    tk = tree_kinematics(nm, q)
    vs, acc = motion_pass(nm, tk, q, v, a, _gravity_root(nm.gravity))
    f = [
        nm.inertias[i] @ acc[i] + cross_force(vs[i], nm.inertias[i] @ vs[i]) - fx[i]
        for i in range(nm.nbodies)
    ]
    tau = np.zeros(nm.nv)
    for i in reversed(range(nm.nbodies)):
        joint = nm.joints[i]
        tau[joint.v] = tk.s[i].T @ f[i] + joint.armature * a[joint.v]
        lam = nm.parents[i]
        if lam >= 0:
            f[lam] = f[lam] + tk.x_up[i].T @ f[i]
    return model_forces(nm, tau)


def bias_forces(model: Model, q, v, params: Params = None) -> Array:
    """C(q, v) v + g(q): inverse dynamics at zero acceleration."""
    nm = prepare(model, params)
    return inverse_dynamics(model, q, v, np.zeros(nm.model_nv), params=params)


def gravity_forces(model: Model, q, params: Params = None) -> Array:
    """g(q): inverse dynamics at zero velocity and acceleration."""
    nm = prepare(model, params)
    zero = np.zeros(nm.model_nv)
    return inverse_dynamics(model, q, zero, zero, params=params)


def mass_matrix(model: Model, q, params: Params = None) -> Array:
    """Joint-space inertia matrix M(q) by the composite-rigid-body algorithm (Featherstone
    2008, Table 6.2), plus diag(J_a) for the joint armature."""
    nm = prepare(model, params)
    q = tree_configuration(nm, q)
    tk = tree_kinematics(nm, q)
    ic = [inertia.copy() for inertia in nm.inertias]
    m = np.zeros((nm.nv, nm.nv))
    for i in reversed(range(nm.nbodies)):
        lam = nm.parents[i]
        if lam >= 0:
            ic[lam] += tk.x_up[i].T @ ic[i] @ tk.x_up[i]
        force = ic[i] @ tk.s[i]
        vi = nm.joints[i].v
        m[vi, vi] = tk.s[i].T @ force + np.diag(nm.joints[i].armature)
        j = i
        while nm.parents[j] >= 0:
            force = tk.x_up[j].T @ force
            j = nm.parents[j]
            vj = nm.joints[j].v
            m[vi, vj] = force.T @ tk.s[j]
            m[vj, vi] = m[vi, vj].T
    return model_matrix(nm, m)


def forward_dynamics(
    model: Model, q, v, tau, f_ext: Mapping[str, object] | None = None, params: Params = None
) -> Array:
    """Joint accelerations by the articulated-body algorithm, O(N) (Featherstone 2008,
    Table 7.1), with D_i = S_iᵀ I_i^A S_i + diag(J_a,i) for the joint armature. With
    couplings (one DOF driving several joints, where the ABA does not apply), the dense
    solve M q̈ = τ − C of :func:`mass_matrix` and :func:`inverse_dynamics`."""
    nm = prepare(model, params)
    if nm.coupling is not None:
        zero = np.zeros(nm.model_nv)
        rhs = vector("tau", tau, nm.model_nv) - inverse_dynamics(model, q, v, zero, f_ext,
                                                                  params)
        return np.linalg.solve(mass_matrix(model, q, params), rhs)
    q = vector("q", q, nm.nq)
    v = vector("v", v, nm.nv)
    tau = vector("tau", tau, nm.nv)
    fx = external_forces(nm, f_ext)
    tk = tree_kinematics(nm, q)
    n = nm.nbodies
    vs: list[Array] = []
    c: list[Array] = []
    ia: list[Array] = []
    pa: list[Array] = []
    for i, joint in enumerate(nm.joints):
        lam = nm.parents[i]
        vj = v[joint.v]
        v_joint = tk.s[i] @ vj
        vi = (tk.x_up[i] @ vs[lam] if lam >= 0 else np.zeros(6)) + v_joint
        vs.append(vi)
        c.append(bias_acceleration(joint, q[joint.q], vj) + cross_motion(vi, v_joint))
        ia.append(nm.inertias[i].copy())
        pa.append(cross_force(vi, nm.inertias[i] @ vi) - fx[i])
    u_mat: list[Array] = [np.zeros(0)] * n
    d_inv: list[Array] = [np.zeros(0)] * n
    u: list[Array] = [np.zeros(0)] * n
    for i in reversed(range(n)):
        s = tk.s[i]
        u_mat[i] = ia[i] @ s
        d = s.T @ u_mat[i] + np.diag(nm.joints[i].armature)
        d_inv[i] = 1.0 / d if d.shape == (1, 1) else np.linalg.inv(d)
        u[i] = tau[nm.joints[i].v] - s.T @ pa[i]
        lam = nm.parents[i]
        if lam >= 0:
            ud = u_mat[i] @ d_inv[i]
            i_a = ia[i] - ud @ u_mat[i].T
            p_a = pa[i] + i_a @ c[i] + ud @ u[i]
            x = tk.x_up[i]
            ia[lam] += x.T @ i_a @ x
            pa[lam] += x.T @ p_a
    qdd = np.zeros(nm.nv)
    acc: list[Array] = []
    a_root = _gravity_root(nm.gravity)
    for i, joint in enumerate(nm.joints):
        lam = nm.parents[i]
        a_prime = tk.x_up[i] @ (acc[lam] if lam >= 0 else a_root) + c[i]
        qdd_i = d_inv[i] @ (u[i] - u_mat[i].T @ a_prime)
        qdd[joint.v] = qdd_i
        acc.append(a_prime + tk.s[i] @ qdd_i)
    return qdd


__all__ = [
    "bias_forces",
    "forward_dynamics",
    "gravity_forces",
    "inverse_dynamics",
    "mass_matrix",
]
