"""Forward kinematics, frame Jacobians, J̇·v and energy on the hinge tree (Jain 2009, eq. 2:
V = φ*H*θ̇; the Jacobian column of hinge j is its H*(j) carried to the frame).

Conventions (docs/conventions.md): poses are world (root) poses of body and frame origins;
Jacobian rows are [angular; linear]; references "local_world_aligned" (world axes, velocity
of the frame origin), "local" (frame axes) and "world" (velocity of the body point at the
world origin); J̇·v is the classical acceleration at zero joint acceleration.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from symgen.formulations.recursions import acceleration_pass, accumulate, joint_map, motion_pass
from symgen.formulations.tree.hinges import FrameRef, SymbolicTree
from symgen.ir.expr import Expr, esum
from symgen.ir.program import ProgramBuilder
from symgen.spatial import (
    ZERO,
    ZERO3,
    Motion,
    Pose,
    Vec3,
    add,
    cross,
    dot,
    emit_vec,
    mat_t_vec,
    mat_vec,
    scale,
    sub,
    vec3,
)

REFERENCES = ("local_world_aligned", "local", "world")


def world_poses(b: ProgramBuilder, tree: SymbolicTree) -> list[Pose]:
    """World pose of every hinge frame, base to tip: ``⁰T(k) = ⁰T(℘(k)) · X(k)⁻¹``."""
    poses: list[Pose] = []
    for hinge in tree.hinges:
        parent = poses[hinge.parent] if hinge.parent >= 0 else Pose()
        poses.append((parent * Pose.of(hinge.X)).emit(b))
    return poses


def frame_pose(b: ProgramBuilder, poses: list[Pose], frame: FrameRef) -> Pose:
    """World pose of a frame fixed on a hinge (or on the root)."""
    carrier = poses[frame.hinge] if frame.hinge >= 0 else Pose()
    return (carrier * Pose(frame.R, frame.p)).emit(b)


def forward_kinematics(b: ProgramBuilder, tree: SymbolicTree, names: Sequence[str]) -> list:
    """``[R | p]`` rows of every named body or frame, concatenated."""
    poses = world_poses(b, tree)
    out: list[Expr] = []
    for name in names:
        out += frame_pose(b, poses, tree.locate(name)).rows()
    return out


def frame_jacobian(
    b: ProgramBuilder, tree: SymbolicTree, name: str, reference: str
) -> list[list[Expr]]:
    """6 × nv Jacobian of frame ``name``: for each ancestor hinge j and column s of H*(j),
    ``ω = R_j s_ω`` and the linear velocity ``R_j s_v + ω × (p − p_j)`` of the reference
    point p (the column carried to p by a rigid-body transform, Featherstone 2008, eq. 2.24)."""
    frame = tree.locate(name)
    poses = world_poses(b, tree)
    pf = frame_pose(b, poses, frame)
    J: list[list[Expr]] = [[ZERO] * tree.nv for _ in range(6)]
    if frame.hinge < 0:
        return J
    point = ZERO3 if reference == "world" else pf.p
    for d, w, lin in jacobian_columns(b, tree, poses, tree.ancestors(frame.hinge), point):
        if reference == "local":
            w, lin = emit_vec(b, mat_t_vec(pf.R, w)), emit_vec(b, mat_t_vec(pf.R, lin))
        for r in range(3):  # a coupled joint's column adds to its master's
            J[r][d] = accumulate(b, J[r][d], w[r])
            J[3 + r][d] = accumulate(b, J[3 + r][d], lin[r])
    return J


def jacobian_columns(b: ProgramBuilder, tree: SymbolicTree, poses: list[Pose],
                     hinges: Sequence[int], point: Sequence[Expr]
                     ) -> Iterator[tuple[int, Vec3, Vec3]]:
    """(DOF, ω, v) of every column s of H*(j) for the hinges j: ``ω = R_j s_ω`` and the
    velocity ``R_j s_v + ω × (p − p_j)`` of the point p (world coordinates; the column
    carried to p by a rigid-body transform, Featherstone 2008, eq. 2.24)."""
    for j in hinges:
        pj = poses[j]
        lever = emit_vec(b, sub(point, pj.p))
        for d, s in zip(tree.hinges[j].dofs, joint_map(tree.hinges[j]), strict=True):
            w = emit_vec(b, mat_vec(pj.R, s.angular))
            yield d, vec3(w), vec3(emit_vec(b, add(mat_vec(pj.R, s.linear), cross(w, lever))))


def classical_acceleration(V: Motion, alpha: Motion) -> Motion:
    """``[ω̇; p̈]`` from the spatial velocity and acceleration of a frame:
    ``p̈ = a_lin + ω × v_lin`` (Featherstone 2008, eq. 2.47)."""
    return Motion(alpha.angular + add(alpha.linear, cross(V.angular, V.linear)))


def frame_jacobian_dot_v(
    b: ProgramBuilder, tree: SymbolicTree, v: Sequence[Expr], name: str, reference: str
) -> list[Expr]:
    """Classical acceleration ``[ω̇; p̈]`` of the frame at zero joint acceleration and no
    gravity: spatial velocity and acceleration carried to the frame, then
    :func:`classical_acceleration`."""
    frame = tree.locate(name)
    if frame.hinge < 0:
        return [ZERO] * 6
    vel = motion_pass(b, tree, v)
    acc = acceleration_pass(b, tree, vel, None, Motion())
    V, alpha = vel.V[frame.hinge], acc[frame.hinge]
    if reference == "world":
        X = world_poses(b, tree)[frame.hinge].transform()  # world → hinge frame
        V = (X.inv @ V).emit(b)
        alpha = (X.inv @ alpha).emit(b)
        return list(classical_acceleration(V, alpha).emit(b))
    X = Pose(frame.R, frame.p).transform()  # hinge frame → frame
    V = (X @ V).emit(b)
    alpha = (X @ alpha).emit(b)
    out = classical_acceleration(V, alpha).emit(b)
    if reference == "local_world_aligned":
        R = frame_pose(b, world_poses(b, tree), frame).R
        out = Motion(mat_vec(R, out.angular) + mat_vec(R, out.linear)).emit(b)
    return list(out)


def energy(b: ProgramBuilder, tree: SymbolicTree, v: Sequence[Expr]) -> tuple[Expr, Expr]:
    """Kinetic energy ½ Σ Vᵀ M V + ½ Σ J_a θ̇² (bodies, then joint armature, as
    Pinocchio's computeKineticEnergy) and potential energy
    −Σ g·(R h + m p) (the world first moment of each body about the world origin)."""
    vel = motion_pass(b, tree, v)
    poses = world_poses(b, tree)
    kinetic: list[Expr] = []
    potential: list[Expr] = []
    for h, hinge in enumerate(tree.hinges):
        if hinge.armature is not None:
            for d, arm in zip(hinge.dofs, hinge.armature, strict=True):
                kinetic.append(b.emit(arm * v[d] * v[d]))
        M = hinge.inertia
        if M is None:
            continue
        V = vel.V[h]
        kinetic.append(b.emit(V.dot((M @ V).emit(b))))  # Vᵀ M V
        pose = poses[h]
        moment = vec3(emit_vec(b, add(mat_vec(pose.R, M.h), scale(M.m, pose.p))))
        potential.append(b.emit(dot(tree.gravity, moment)))
    return b.emit(esum(kinetic) / 2), b.emit(-esum(potential))


__all__ = [
    "REFERENCES",
    "classical_acceleration",
    "energy",
    "forward_kinematics",
    "frame_jacobian",
    "frame_jacobian_dot_v",
    "frame_pose",
    "jacobian_columns",
    "world_poses",
]
