"""Map states between MuJoCo's ``qpos``/``qvel``/``qacc``/``qfrc`` and symgen's q, v, a, τ.

For a model read from MJCF (``model.file_coordinates``), joint by joint:

=========  ==============================  ====================================================
joint      MuJoCo                          symgen (docs/conventions.md)
=========  ==============================  ====================================================
hinge,     qpos (rad or m), measured so    q = qpos − qpos0 (0 where MuJoCo's body frames are
slide      that qpos0 (``ref``) is the     placed); v = qvel, a = qacc, τ = qfrc
           body's placed pose
ball       quaternion (w, x, y, z); qvel   quaternion (x, y, z, w); v = ω in the child frame
           = ω in the child frame          (the same numbers)
free       position, quaternion (w, x, y,  position, quaternion (x, y, z, w); v = (ω, Rᵀ ṗ)
           z); qvel = (ṗ in world, ω in    both in the body frame; a = v̇ = (ω̇, Rᵀ p̈ − ω ×
           the body frame)                 Rᵀ ṗ); τ = (n, Rᵀ f) for MuJoCo's (f, n)
=========  ==============================  ====================================================

A coupled joint (MJCF ``<equality><joint>``) has no coordinate of its own in symgen: going to
MuJoCo it is filled from its master (q = ratio·q_master + offset); a locked joint is filled
with its value. Generalized forces map by equal power (τ_mj·qvel = τ·v).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from symgen.errors import SymgenError
from symgen.model import Model
from symgen.model.joint_motion import quaternion_rotation
from symgen.model.source_data import FileCoordinates, FileJoint


def _layout(model: Model) -> FileCoordinates:
    layout = model.file_coordinates
    if layout is None or layout.convention != "mujoco":
        raise SymgenError(f"model {model.name!r} was not read from an MJCF file: it has no "
                          "MuJoCo coordinates")
    return layout


def _vector(values, n: int, what: str) -> np.ndarray:
    out = np.asarray(values, dtype=float).reshape(-1)
    if out.shape != (n,):
        raise SymgenError(f"{what} has length {out.size}, expected {n}")
    return out


def _rotation(quat_xyzw: np.ndarray) -> np.ndarray:
    x, y, z, w = quat_xyzw / np.linalg.norm(quat_xyzw)
    return np.array(quaternion_rotation(x, y, z, w), dtype=float)


def _joints(model: Model) -> list[tuple[FileJoint, slice, slice]]:
    """(file joint, symgen q slice, symgen v slice) of every independent joint."""
    layout = _layout(model)
    out = []
    for joint in model.independent_joints:
        fj = layout.joint(joint.name)
        if fj is None:  # pragma: no cover - every tree joint of an MJCF model is a file joint
            raise SymgenError(f"joint {joint.name!r} is not in the MJCF coordinates")
        out.append((fj, model.q_slices[joint.name], model.v_slices[joint.name]))
    return out


def from_mujoco(model: Model, qpos: Sequence[float], qvel: Sequence[float] | None = None,
                qacc: Sequence[float] | None = None
                ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """symgen's (q, v, a) from MuJoCo's (qpos, qvel, qacc); v and a are None when not given
    (a needs qvel). Coupled and locked joints' MuJoCo values are not read."""
    layout = _layout(model)
    qpos = _vector(qpos, layout.nq, "qpos")
    qvel = None if qvel is None else _vector(qvel, layout.nv, "qvel")
    qacc = None if qacc is None else _vector(qacc, layout.nv, "qacc")
    if qacc is not None and qvel is None:
        raise SymgenError("from_mujoco: qacc needs qvel (a free joint's acceleration depends "
                          "on its velocity)")
    q = np.zeros(model.nq)
    v = None if qvel is None else np.zeros(model.nv)
    a = None if qacc is None else np.zeros(model.nv)
    for fj, qs, vs in _joints(model):
        i, d = fj.qpos_address, fj.dof_address
        if fj.kind in ("hinge", "slide"):
            q[qs] = qpos[i] - fj.zero
            if v is not None:
                v[vs] = qvel[d]
            if a is not None:
                a[vs] = qacc[d]
        elif fj.kind == "ball":
            q[qs] = np.r_[qpos[i + 1:i + 4], qpos[i]]
            if v is not None:
                v[vs] = qvel[d:d + 3]
            if a is not None:
                a[vs] = qacc[d:d + 3]
        else:  # free
            quat = np.r_[qpos[i + 4:i + 7], qpos[i + 3]]
            q[qs] = np.r_[qpos[i:i + 3], quat]
            if v is not None:
                rotation = _rotation(quat)
                omega, linear = qvel[d + 3:d + 6], rotation.T @ qvel[d:d + 3]
                v[vs] = np.r_[omega, linear]
                if a is not None:
                    a[vs] = np.r_[qacc[d + 3:d + 6],
                                  rotation.T @ qacc[d:d + 3] - np.cross(omega, linear)]
    return q, v, a


def to_mujoco(model: Model, q: Sequence[float], v: Sequence[float] | None = None,
              a: Sequence[float] | None = None
              ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """MuJoCo's (qpos, qvel, qacc) from symgen's (q, v, a): the inverse of
    :func:`from_mujoco`, filling coupled joints from their masters and locked joints with
    their values (joints absent from the model keep ``qpos0`` and zero rates)."""
    layout = _layout(model)
    q = _vector(q, model.nq, "q")
    v = None if v is None else _vector(v, model.nv, "v")
    a = None if a is None else _vector(a, model.nv, "a")
    if a is not None and v is None:
        raise SymgenError("to_mujoco: a needs v (a free joint's acceleration depends on its "
                          "velocity)")
    qpos = np.array(layout.reference)
    qvel = None if v is None else np.zeros(layout.nv)
    qacc = None if a is None else np.zeros(layout.nv)
    for fj, qs, vs in _joints(model):
        i, d = fj.qpos_address, fj.dof_address
        if fj.kind in ("hinge", "slide"):
            qpos[i] = q[qs][0] + fj.zero
            if qvel is not None:
                qvel[d] = v[vs][0]
            if qacc is not None:
                qacc[d] = a[vs][0]
        elif fj.kind == "ball":
            x, y, z, w = q[qs]
            qpos[i:i + 4] = (w, x, y, z)
            if qvel is not None:
                qvel[d:d + 3] = v[vs]
            if qacc is not None:
                qacc[d:d + 3] = a[vs]
        else:
            position, (x, y, z, w) = q[qs][:3], q[qs][3:]
            qpos[i:i + 7] = (*position, w, x, y, z)
            if qvel is not None:
                rotation = _rotation(np.array([x, y, z, w]))
                omega, linear = v[vs][:3], v[vs][3:]
                qvel[d:d + 6] = np.r_[rotation @ linear, omega]
                if qacc is not None:
                    alpha, linear_rate = a[vs][:3], a[vs][3:]
                    qacc[d:d + 6] = np.r_[rotation @ (linear_rate + np.cross(omega, linear)),
                                          alpha]
    _fill_dependent(model, layout, qpos, qvel, qacc)
    return qpos, qvel, qacc


def _fill_dependent(model: Model, layout: FileCoordinates, qpos: np.ndarray,
                    qvel: np.ndarray | None, qacc: np.ndarray | None) -> None:
    """Coupled joints from their masters, locked joints at their values."""
    for name, coupling in model.coupled.items():
        fj, master = layout.joint(name), layout.joint(coupling.master)
        if fj is None or master is None:  # pragma: no cover
            continue
        ratio, offset = float(coupling.ratio), float(coupling.offset)
        qpos[fj.qpos_address] = fj.zero + ratio * (qpos[master.qpos_address] - master.zero) \
            + offset
        for rates in (qvel, qacc):
            if rates is not None:
                rates[fj.dof_address] = ratio * rates[master.dof_address]
    for lock in model.locks:
        fj = layout.joint(lock.name)
        if fj is not None and fj.kind in ("hinge", "slide"):
            qpos[fj.qpos_address] = fj.zero + float(lock.values[0])


def forces_to_mujoco(model: Model, q: Sequence[float], tau: Sequence[float]) -> np.ndarray:
    """MuJoCo's generalized force (``qfrc``, length nv) equal in power to symgen's τ at q: a
    free joint's (n, f) in the body frame becomes (R f, n); coupled joints get zero (their
    share is in their master's τ)."""
    layout = _layout(model)
    q = _vector(q, model.nq, "q")
    tau = _vector(tau, model.nv, "tau")
    out = np.zeros(layout.nv)
    for fj, qs, vs in _joints(model):
        d = fj.dof_address
        if fj.kind == "free":
            rotation = _rotation(q[qs][3:])
            out[d:d + 6] = np.r_[rotation @ tau[vs][3:], tau[vs][:3]]
        else:
            out[d:d + len(tau[vs])] = tau[vs]
    return out


def forces_from_mujoco(model: Model, q: Sequence[float], qfrc: Sequence[float]) -> np.ndarray:
    """symgen's τ from MuJoCo's generalized force at q (the inverse of
    :func:`forces_to_mujoco` on a model without couplings; with couplings a coupled joint's
    force reaches its master as ratio·force, by virtual work)."""
    layout = _layout(model)
    q = _vector(q, model.nq, "q")
    qfrc = _vector(qfrc, layout.nv, "qfrc")
    tau = np.zeros(model.nv)
    for fj, qs, vs in _joints(model):
        d = fj.dof_address
        if fj.kind == "free":
            rotation = _rotation(q[qs][3:])
            tau[vs] = np.r_[qfrc[d + 3:d + 6], rotation.T @ qfrc[d:d + 3]]
        else:
            tau[vs] = qfrc[d:d + vs.stop - vs.start]
    for name, coupling in model.coupled.items():
        fj = layout.joint(name)
        if fj is not None:
            tau[model.v_slices[coupling.master]] += float(coupling.ratio) * qfrc[fj.dof_address]
    return tau


def keyframe(model: Model, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(q, v) of the MJCF keyframe ``name`` in symgen's coordinates."""
    for key in model.keyframes:
        if key.name == name:
            q, v, _ = from_mujoco(model, key.qpos, key.qvel)
            assert v is not None
            return q, v
    known = ", ".join(k.name for k in model.keyframes) or "none"
    raise SymgenError(f"model {model.name!r} has no keyframe {name!r} (keyframes: {known})")


__all__ = ["forces_from_mujoco", "forces_to_mujoco", "from_mujoco", "keyframe", "to_mujoco"]
