"""The inertial-parameter regressor in numpy, from the Newton-Euler equations (Atkeson, An &
Hollerbach, IJRR 1986): body i's force f_i = M_i α_i + V_i ×* M_i V_i is linear in its
parameters π_i, f_i = A_i π_i (A_i's columns: that force for a unit parameter), and joint j
carries τ_j = S_jᵀ Σ_{i in the subtree of j} ⁱX_jᵀ f_i, so Y's block (j, i) is
S_jᵀ ⁱX_jᵀ A_i. Parameters per body: (m, m c, I about the body origin: xx, xy, yy, xz, yz,
zz); docs/identification.md. Couplings: Y = Tᵀ Y_tree (virtual work).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from symgen.model import Model
from symgen.reference._numeric import model_forces, prepare, tree_configuration, tree_rates
from symgen.reference.dynamics import _gravity_root
from symgen.reference.kinematics import motion_pass, tree_kinematics
from symgen.reference.spatial import cross_force

Array = np.ndarray

def unit_inertia(k: int) -> Array:
    """The 6×6 spatial inertia [[I, h×], [−h×, m 1]] of parameter vector e_k."""
    p = np.zeros(10)
    p[k] = 1.0
    m, h = p[0], p[1:4]
    inertia = np.array([[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]])
    hx = np.array([[0.0, -h[2], h[1]], [h[2], 0.0, -h[0]], [-h[1], h[0], 0.0]])
    return np.block([[inertia, hx], [-hx, m * np.eye(3)]])


UNIT_INERTIAS = [unit_inertia(k) for k in range(10)]


def regressor(model: Model, q, v, a, params: Mapping[str, float] | None = None) -> Array:
    """Y (nv × 10·nbodies) with τ = Y π, armature left out (module documentation)."""
    nm = prepare(model, params)
    q = tree_configuration(nm, q)
    v = tree_rates(nm, "v", v)
    a = tree_rates(nm, "a", a)
    tk = tree_kinematics(nm, q)
    vs, acc = motion_pass(nm, tk, q, v, a, _gravity_root(nm.gravity))
    n = nm.nbodies
    y = np.zeros((nm.nv, 10 * n))
    for i in range(n):
        forces = np.column_stack([u @ acc[i] + cross_force(vs[i], u @ vs[i])
                                  for u in UNIT_INERTIAS])  # A_i (6 × 10), body i's frame
        j = i
        while j >= 0:  # up the tree: τ_j = S_jᵀ f carried to j
            y[nm.joints[j].v, 10 * i:10 * i + 10] = tk.s[j].T @ forces
            forces = tk.x_up[j].T @ forces
            j = nm.parents[j]
    return model_forces(nm, y)


__all__ = ["UNIT_INERTIAS", "regressor", "unit_inertia"]
