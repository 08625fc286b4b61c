"""Forward kinematics, frame Jacobians, J̇·v and energy on the hinge tree (Jain 2009 eq. 1-2:
V = φ*H*θ̇; the Jacobian column of hinge j is its H* carried to the frame).

Conventions (docs/conventions.md): poses are world (root) poses of body and frame origins;
Jacobian rows are [angular; linear]; references "local_world_aligned" (world axes, velocity
of the frame origin), "local" (frame axes) and "world" (velocity of the body point at the
world origin); J̇·v is the classical acceleration at zero joint acceleration.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..expr import Expr, esum
from ..program import ProgramBuilder
from ..spatial import (
    IDENTITY3,
    ZERO,
    ZERO3,
    ZERO6,
    Mat3,
    Transform,
    Vec3,
    add,
    cross,
    dot,
    emit_mat,
    emit_vec,
    mat_mul,
    mat_t_vec,
    mat_vec,
    scale,
    sub,
    transpose,
)
from .recursions import acceleration_pass, motion_pass
from .tree import FrameRef, SymbolicTree

REFERENCES = ("local_world_aligned", "local", "world")


def world_poses(b: ProgramBuilder, tree: SymbolicTree) -> list[tuple[Mat3, Vec3]]:
    """World rotation and origin of every hinge frame, base to tip."""
    poses: list[tuple[Mat3, Vec3]] = []
    for hinge in tree.hinges:
        r_parent, p_parent = poses[hinge.parent] if hinge.parent >= 0 else (IDENTITY3, ZERO3)
        local = transpose(hinge.X.E)
        rot = emit_mat(b, mat_mul(r_parent, local))
        origin = emit_vec(b, add(mat_vec(r_parent, hinge.X.r), p_parent))
        poses.append((rot, origin))  # type: ignore[arg-type]
    return poses


def frame_pose(
    b: ProgramBuilder, poses: list[tuple[Mat3, Vec3]], frame: FrameRef
) -> tuple[Mat3, Vec3]:
    r0, p0 = poses[frame.hinge] if frame.hinge >= 0 else (IDENTITY3, ZERO3)
    rot = emit_mat(b, mat_mul(r0, frame.R))
    origin = emit_vec(b, add(mat_vec(r0, frame.p), p0))
    return rot, origin  # type: ignore[return-value]


def pose_rows(rot: Mat3, origin: Vec3) -> list[Expr]:
    """``[R | p]`` row-major (the top 3 rows of the homogeneous transform)."""
    return [x for i in range(3) for x in (*rot[i], origin[i])]


def forward_kinematics(b: ProgramBuilder, tree: SymbolicTree, names: Sequence[str]) -> list:
    """``[R | p]`` rows of every named body or frame, concatenated."""
    poses = world_poses(b, tree)
    out: list[Expr] = []
    for name in names:
        out += pose_rows(*frame_pose(b, poses, tree.locate(name)))
    return out


def frame_jacobian(
    b: ProgramBuilder, tree: SymbolicTree, name: str, reference: str
) -> list[list[Expr]]:
    """6 × nv Jacobian of frame ``name``: for each ancestor hinge j, ``ω = R_j s_ω`` and the
    linear velocity ``R_j s_v + ω × (p − p_j)`` of the reference point p."""
    frame = tree.locate(name)
    poses = world_poses(b, tree)
    rf, pf = frame_pose(b, poses, frame)
    J: list[list[Expr]] = [[ZERO] * tree.nv for _ in range(6)]
    if frame.hinge < 0:
        return J
    point = ZERO3 if reference == "world" else pf
    for j in tree.ancestors(frame.hinge):
        rj, pj = poses[j]
        lever = emit_vec(b, sub(point, pj))
        for d, col in zip(tree.hinges[j].dofs, tree.hinges[j].S, strict=True):
            w = emit_vec(b, mat_vec(rj, col[:3]))
            lin = emit_vec(b, add(mat_vec(rj, col[3:]), cross(w, lever)))
            if reference == "local":
                w, lin = emit_vec(b, mat_t_vec(rf, w)), emit_vec(b, mat_t_vec(rf, lin))
            for r in range(3):
                J[r][d] = w[r]
                J[3 + r][d] = lin[r]
    return J


def frame_jacobian_dot_v(
    b: ProgramBuilder, tree: SymbolicTree, v: Sequence[Expr], name: str, reference: str
) -> list[Expr]:
    """Classical acceleration ``[ω̇; p̈]`` of the frame at zero joint acceleration and no
    gravity: spatial velocity and acceleration carried to the frame, then
    ``p̈ = a_lin + ω × v_lin`` (Featherstone 2008, eq. 2.47)."""
    frame = tree.locate(name)
    if frame.hinge < 0:
        return [ZERO] * 6
    motion = motion_pass(b, tree, v)
    acc = acceleration_pass(b, tree, motion, None, ZERO6)
    vel, a = motion.V[frame.hinge], acc[frame.hinge]
    if reference == "world":
        rot, origin = world_poses(b, tree)[frame.hinge]
        to_world = Transform(transpose(rot), origin)  # type: ignore[arg-type]
        vel, a = to_world.motion_to_parent(b, vel), to_world.motion_to_parent(b, a)
        return list(emit_vec(b, a[:3] + add(a[3:], cross(vel[:3], vel[3:]))))
    to_frame = Transform(transpose(frame.R), frame.p)  # type: ignore[arg-type]
    vel, a = to_frame.motion(b, vel), to_frame.motion(b, a)
    out = emit_vec(b, a[:3] + add(a[3:], cross(vel[:3], vel[3:])))
    if reference == "local_world_aligned":
        rf, _ = frame_pose(b, world_poses(b, tree), frame)
        out = emit_vec(b, mat_vec(rf, out[:3]) + mat_vec(rf, out[3:]))
    return list(out)


def energy(b: ProgramBuilder, tree: SymbolicTree, v: Sequence[Expr]) -> tuple[Expr, Expr]:
    """Kinetic energy ½ Σ Vᵀ M V + ½ Σ J_a θ̇² (bodies, then joint armature, as
    Pinocchio's computeKineticEnergy) and potential energy −Σ g·(R h + m p) (the world first
    moment of each body about the world origin)."""
    motion = motion_pass(b, tree, v)
    poses = world_poses(b, tree)
    kinetic: list[Expr] = []
    potential: list[Expr] = []
    for h, hinge in enumerate(tree.hinges):
        if hinge.armature is not None:
            for d, arm in zip(hinge.dofs, hinge.armature, strict=True):
                kinetic.append(b.emit(arm * v[d] * v[d]))
        if hinge.inertia is None:
            continue
        mv = hinge.inertia.times(b, motion.V[h])
        kinetic.append(b.emit(dot(motion.V[h], mv)))
        rot, origin = poses[h]
        moment = emit_vec(b, add(mat_vec(rot, hinge.inertia.h), scale(hinge.inertia.m, origin)))
        potential.append(b.emit(dot(tree.gravity, moment)))
    return b.emit(esum(kinetic) / 2), b.emit(-esum(potential))


__all__ = [
    "REFERENCES",
    "energy",
    "forward_kinematics",
    "frame_jacobian",
    "frame_jacobian_dot_v",
    "frame_pose",
    "world_poses",
]

