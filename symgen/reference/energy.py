"""Kinetic and potential energy (docs/conventions.md, "Energy"), and the potential of the
force elements (docs/model-format.md §5)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from symgen.model import Model
from symgen.model.elements import JointActuator, JointSpring, PointSpring
from symgen.reference._numeric import prepare, tree_configuration, tree_rates
from symgen.reference.forces import _loop_joint_row, _spring_rest_lengths, _world_point
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


def element_energy(model: Model, q, params: Mapping[str, float] | None = None) -> float:
    """V of the force elements: the elastic energy ½k(L − L₀)² of each point spring (L the
    distance of its two points, L₀ its rest length or the distance at the zero
    configuration; García de Jalón & Bayo 1994, §4.4) and ½k(θ − rest)² of each joint
    spring, and −F θ of each constant joint force F (the potential of a constant
    generalized force: its work is F Δθ). θ is the joint coordinate (ratio·q_master +
    offset for a coupled joint) or, for a loop joint, its relative rotation or slide from
    the zero configuration, read as :mod:`symgen.reference.forces` reads it (atan2: a loop
    joint's θ jumps by 2π at ±π). Dampers dissipate and add nothing. 0 without elements."""
    resolved = model.resolve(params)
    if not resolved.force_elements:
        return 0.0
    nm = prepare(resolved)
    q_tree = tree_configuration(nm, q)
    tk = tree_kinematics(nm, q_tree)
    rest = _spring_rest_lengths(model, params)
    tree_joints = {j.name: j for j in nm.joints}
    total = 0.0
    for e in resolved.force_elements:
        if isinstance(e, PointSpring):
            ra = _world_point(tk, nm.body_index(e.body_a), np.array(e.point_a, float))
            rb = _world_point(tk, nm.body_index(e.body_b), np.array(e.point_b, float))
            stretch = float(np.linalg.norm(rb - ra)) - rest[e.name]
            total += 0.5 * float(e.stiffness) * stretch ** 2
            continue
        if e.joint in tree_joints:
            theta = float(q_tree[tree_joints[e.joint].q][0])
        else:
            theta = _loop_joint_row(nm, tk, resolved, e.joint)[0]
        if isinstance(e, JointSpring):
            total += 0.5 * float(e.stiffness) * (theta - float(e.rest)) ** 2
        else:
            assert isinstance(e, JointActuator)
            total -= float(e.force) * theta
    return total


__all__ = ["element_energy", "kinetic_energy", "potential_energy"]
