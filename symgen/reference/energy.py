"""Kinetic and potential energy (docs/conventions.md, "Energy")."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from symgen.model import Model
from symgen.reference._numeric import prepare, tree_configuration, tree_rates
from symgen.reference.kinematics import motion_pass, tree_kinematics


def kinetic_energy(model: Model, q, v, params: Mapping[str, float] | None = None) -> float:
    """T = Σ ½ v_iᵀ I_i v_i over the bodies, with v_i the body spatial velocity
    (Featherstone 2008, eq. 2.67), plus ½ Σ J_a q̇² for the joint armature (a rotor spinning
    at the joint rate, as Pinocchio's computeKineticEnergy); equals ½ vᵀ M(q) v."""
    nm = prepare(model, params)
    q = tree_configuration(nm, q)
    v = tree_rates(nm, "v", v)
    tk = tree_kinematics(nm, q)
    vs, _ = motion_pass(nm, tk, q, v, np.zeros(nm.nv), np.zeros(6))
    bodies = sum(0.5 * vi @ inertia @ vi for vi, inertia in zip(vs, nm.inertias, strict=True))
    rotors = sum(0.5 * j.armature @ (v[j.v] * v[j.v]) for j in nm.joints)
    return float(bodies + rotors)


def potential_energy(model: Model, q, params: Mapping[str, float] | None = None) -> float:
    """U = −Σ m_i g·c_i with c_i the world position of body i's centre of mass."""
    nm = prepare(model, params)
    q = tree_configuration(nm, q)
    tk = tree_kinematics(nm, q)
    total = 0.0
    for i in range(nm.nbodies):
        c_world = tk.rotation[i] @ nm.coms[i] + tk.position[i]
        total -= nm.masses[i] * (nm.gravity @ c_world)
    return float(total)


__all__ = ["kinetic_energy", "potential_energy"]
