"""Forward kinematics, frame Jacobians and J̇·v (Featherstone 2008, §4.1, §4.4, §5.3).

Body i's frame sits at its inboard joint; ``i_X_λ(i) = X_J(q_i) X_T(i)`` takes motion vectors
from the parent's coordinates to body i's (Featherstone eq. 4.1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from symgen.model import Model
from symgen.reference._numeric import (
    NumericFrame,
    NumericModel,
    model_columns,
    prepare,
    tree_configuration,
    tree_rates,
)
from symgen.reference.joints import bias_acceleration, joint_pose, motion_subspace
from symgen.reference.spatial import (
    cross,
    cross_motion,
    homogeneous,
    pose_to_inverse_motion_transform,
    pose_to_motion_transform,
    skew,
)

Array = np.ndarray
REFERENCES = ("local_world_aligned", "local", "world")


@dataclass
class TreeKinematics:
    """Per body i: ``x_up[i]`` = i_X_λ(i), ``s[i]`` = S_i(q) and the world pose
    (``rotation[i]``, ``position[i]``) of the body frame."""

    x_up: list[Array]
    s: list[Array]
    rotation: list[Array]
    position: list[Array]

    def pose(self, body: int) -> tuple[Array, Array]:
        if body < 0:
            return np.eye(3), np.zeros(3)
        return self.rotation[body], self.position[body]


def tree_kinematics(nm: NumericModel, q: Array) -> TreeKinematics:
    """Joint transforms, motion subspaces and world poses of every body, base to tip."""
    out = TreeKinematics([], [], [], [])
    for i, joint in enumerate(nm.joints):
        qj = q[joint.q]
        rj, pj = joint_pose(joint, qj)
        # pose of body i in its parent: placement ∘ joint motion
        r = joint.rotation @ rj
        p = joint.rotation @ pj + joint.translation
        out.x_up.append(pose_to_motion_transform(r, p))
        out.s.append(motion_subspace(joint, qj))
        r0, p0 = out.pose(nm.parents[i])
        out.rotation.append(r0 @ r)
        out.position.append(r0 @ p + p0)
    return out


def motion_pass(
    nm: NumericModel, tk: TreeKinematics, q: Array, v: Array, a: Array, a_root: Array
) -> tuple[list[Array], list[Array]]:
    """Body velocities and accelerations in body coordinates (Featherstone 2008, Table 5.1):
    ``v_i = X v_λ + S q̇``, ``a_i = X a_λ + S q̈ + c_J + v_i × S q̇``, with ``a_root`` the
    acceleration of the root (``-a_g`` to include gravity)."""
    vs: list[Array] = []
    acc: list[Array] = []
    for i, joint in enumerate(nm.joints):
        lam = nm.parents[i]
        v_parent = vs[lam] if lam >= 0 else np.zeros(6)
        a_parent = acc[lam] if lam >= 0 else a_root
        vj = v[joint.v]
        v_joint = tk.s[i] @ vj
        vi = tk.x_up[i] @ v_parent + v_joint
        ai = (
            tk.x_up[i] @ a_parent
            + tk.s[i] @ a[joint.v]
            + bias_acceleration(joint, q[joint.q], vj)
            + cross_motion(vi, v_joint)
        )
        vs.append(vi)
        acc.append(ai)
    return vs, acc


def _frame_pose(tk: TreeKinematics, frame: NumericFrame) -> tuple[Array, Array]:
    r0, p0 = tk.pose(frame.body)
    return r0 @ frame.rotation, r0 @ frame.translation + p0


def forward_kinematics(
    model: Model, q, params: Mapping[str, float] | None = None
) -> dict[str, Array]:
    """4x4 world transform of every body (the root included) and every frame."""
    nm = prepare(model, params)
    q = tree_configuration(nm, q)
    tk = tree_kinematics(nm, q)
    out = {nm.root: np.eye(4)}
    for i, name in enumerate(nm.body_names):
        out[name] = homogeneous(tk.rotation[i], tk.position[i])
    for name, frame in nm.frames.items():
        out[name] = homogeneous(*_frame_pose(tk, frame))
    return out


def _check_reference(reference: str) -> None:
    if reference not in REFERENCES:
        raise ValueError(f"reference must be one of {', '.join(REFERENCES)}; got {reference!r}")


def _ancestors(nm: NumericModel, body: int) -> list[int]:
    chain = []
    while body >= 0:
        chain.append(body)
        body = nm.parents[body]
    return chain


def frame_jacobian(
    model: Model,
    q,
    name: str,
    reference: str = "local_world_aligned",
    params: Mapping[str, float] | None = None,
) -> Array:
    """6 x nv Jacobian, rows [angular; linear], of body or frame ``name``.

    Column block j of the ``"world"`` Jacobian is ``0_X_j S_j`` for each ancestor j of the
    frame's body (Featherstone 2008, eq. 4.40 with world coordinates); ``"local_world_aligned"``
    shifts the reference point to the frame origin p (linear rows ``v - p × ω``) and
    ``"local"`` rotates that into frame axes.
    """
    _check_reference(reference)
    nm = prepare(model, params)
    q = tree_configuration(nm, q)
    frame = nm.locate(name)
    tk = tree_kinematics(nm, q)
    jac = np.zeros((6, nm.nv))
    for j in _ancestors(nm, frame.body):
        x0j = pose_to_inverse_motion_transform(tk.rotation[j], tk.position[j])
        jac[:, nm.joints[j].v] = x0j @ tk.s[j]
    if reference == "world":
        return model_columns(nm, jac)
    rf, pf = _frame_pose(tk, frame)
    jac[3:] -= skew(pf) @ jac[:3]
    if reference == "local":
        jac[:3] = rf.T @ jac[:3]
        jac[3:] = rf.T @ jac[3:]
    return model_columns(nm, jac)


def frame_jacobian_dot_v(
    model: Model,
    q,
    v,
    name: str,
    reference: str = "local_world_aligned",
    params: Mapping[str, float] | None = None,
) -> Array:
    """Classical acceleration ``[ω̇; p̈]`` of body or frame ``name`` at zero joint
    acceleration, i.e. ``J̇(q, v) v`` for the ``"local_world_aligned"`` Jacobian.

    The body's spatial acceleration ``a`` and velocity ``v`` come from the forward pass with
    q̈ = 0 and no gravity (Featherstone 2008, Table 5.1); the classical acceleration of the
    frame origin is ``a_lin + ω × v_lin`` (Featherstone 2008, eq. 2.47). ``reference``
    picks the axes: world axes (``"local_world_aligned"``) or frame axes (``"local"``; this
    is not d/dt of the local Jacobian times v, which would lack the ``ω × v`` term); with
    ``"world"`` the point is the body point passing through the world origin, in world axes.
    All three equal Pinocchio's ``getFrameClassicalAcceleration`` for the same reference.
    """
    _check_reference(reference)
    nm = prepare(model, params)
    q = tree_configuration(nm, q)
    v = tree_rates(nm, "v", v)
    frame = nm.locate(name)
    if frame.body < 0:
        return np.zeros(6)
    tk = tree_kinematics(nm, q)
    vs, acc = motion_pass(nm, tk, q, v, np.zeros(nm.nv), np.zeros(6))
    if reference == "world":
        x0b = pose_to_inverse_motion_transform(*tk.pose(frame.body))
        vel, a = x0b @ vs[frame.body], x0b @ acc[frame.body]
        return np.concatenate([a[:3], a[3:] + cross(vel[:3], vel[3:])])
    xfb = pose_to_motion_transform(frame.rotation, frame.translation)
    vel, a = xfb @ vs[frame.body], xfb @ acc[frame.body]
    out = np.concatenate([a[:3], a[3:] + cross(vel[:3], vel[3:])])
    if reference == "local_world_aligned":
        rf, _ = _frame_pose(tk, frame)
        out = np.concatenate([rf @ out[:3], rf @ out[3:]])
    return out


__all__ = [
    "REFERENCES",
    "TreeKinematics",
    "forward_kinematics",
    "frame_jacobian",
    "frame_jacobian_dot_v",
    "motion_pass",
    "tree_kinematics",
]
