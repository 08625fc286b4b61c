"""The symbolic hinge tree a spatial-operator kernel works on.

Each movable joint of the model becomes one *hinge* (Jain's joint k with map H(k) = Sᵀ), or,
when partitioned (Jain, *Partitioning of recursive multibody dynamics*, Lemma 2.1), a chain
of 1-DOF sub-hinges joined by mass-less bodies:

- universal → two revolutes, cylindrical → prismatic + revolute, planar → two prismatics +
  a revolute: real sub-bodies, each sub-hinge with a constant H (Jain, *Partitioning*, §2);
- spherical and free → 3 and 6 sub-hinges whose frames coincide (φ(k', k) = I) and whose
  H are the unit columns of the joint's S. Their velocities are partial sums, so the
  Coriolis term of each sub-hinge is taken with the velocity the joint's parent body
  carries into the joint, ``𝔞(k') = (X V(℘)) × H*(k') β(k')``: the terms then add up to the
  joint's 𝔞 exactly, as Lemma 2.1 requires (𝔞̲(k) = 𝔞(k) + φ*(k', k) 𝔞(k')).

Hinge frames are body frames (or the sub-bodies' frames): H is constant or sparse there
(Featherstone 2008, Table 4.1). Every q-dependent quantity is emitted into the program being built.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import numpy as np
import sympy

from symgen.errors import SymgenError
from symgen.ir.expr import Expr, Num, from_sympy
from symgen.ir.program import ProgramBuilder
from symgen.joints import JOINT_TYPES
from symgen.joints.base import BiasFn, Step
from symgen.model import JointType, Model
from symgen.model.joint_motion import rotation_about
from symgen.model.scalars import Scalar, parameter_symbol
from symgen.model.transform import planar_directions
from symgen.spatial import (
    IDENTITY3,
    ZERO3,
    Inertia,
    Mat3,
    Transform,
    Vec3,
    Vec6,
    add,
    emit_mat,
    emit_vec,
    mat3,
    mat_mul,
    mat_vec,
    number,
    rigid_inertia,
    transpose,
    vec3,
)

#: Joint types that partitioning splits into 1-DOF sub-hinges.
PARTITIONABLE = tuple(t for t, kind in JOINT_TYPES.items() if kind.partitionable)

#: Rotation and axis entries closer than this to 0 or ±1 are taken as exactly 0 or ±1: the
#: rounding noise of rotations built from exact angles (cos(π/2) = 6.1e-17 in double). A file
#: that writes π/2 as 1.57079632679 (cosine 4.9e-12) keeps its value unless the user raises
#: ``Options.snap``: generated kernels stay faithful to the model to ~1e-15.
SNAP_TOLERANCE = 1e-14


@dataclass
class Hinge:
    """One recursion step: the frame it moves, its joint map and the body it carries.
    ``armature`` (None: none) holds the armature of each of its DOFs, the diagonal term the
    joint adds to M (Pinocchio's ``model.armature``)."""

    name: str
    joint: int
    parent: int
    X: Transform
    S: list[Vec6]
    dofs: list[int]
    inertia: Inertia | None = None
    body: int | None = None
    coriolis_from: int = -1
    bias: BiasFn | None = None
    children: list[int] = field(default_factory=list)
    armature: list[Expr] | None = None

    @property
    def ndof(self) -> int:
        return len(self.dofs)


@dataclass
class FrameRef:
    """A named frame fixed on hinge ``hinge`` (-1: the root) at (R, p)."""

    name: str
    hinge: int
    R: Mat3
    p: Vec3


@dataclass
class CutFrames:
    """A loop joint: its frames F_P on the parent body and F_C on the child body, and its
    axis (unit, as the model normalised it, in F_P; the normal of a planar joint) and second
    axis (a universal joint's, in F_C)."""

    name: str
    type: JointType
    parent: FrameRef
    child: FrameRef
    axis: Vec3
    axis2: Vec3


@dataclass
class SymbolicTree:
    """Hinges base to tip (``parent < index``), the hinge carrying each model body, named
    frames, gravity in root coordinates and the loop joints' frames (in model order)."""

    model: Model
    hinges: list[Hinge]
    body_hinge: list[int]
    frames: dict[str, FrameRef]
    gravity: Vec3
    nv: int
    cuts: list[CutFrames] = field(default_factory=list)

    @property
    def coupled(self) -> bool:
        """True when coupled joints share their masters' DOFs (several hinges per DOF)."""
        return bool(self.model.coupled)

    def ancestors(self, h: int) -> list[int]:
        """``h`` and its ancestors, tip to base."""
        out = []
        while h >= 0:
            out.append(h)
            h = self.hinges[h].parent
        return out

    def locate(self, name: str) -> FrameRef:
        """Body or named frame ``name`` as a frame fixed on a hinge."""
        if name in self.frames:
            return self.frames[name]
        if name == self.model.root:
            return FrameRef(name, -1, IDENTITY3, ZERO3)
        if name in self.model.body_names:
            h = self.body_hinge[self.model.body_index(name)]
            return FrameRef(name, h, IDENTITY3, ZERO3)
        raise SymgenError(f"model {self.model.name!r} has no body or frame named {name!r}")


class Constants:
    """Model values as program expressions: numbers (rotation and axis
    entries snapped to 0/±1 within ``snap``), parameters as elements of ``params``."""

    def __init__(self, b: ProgramBuilder, model: Model, params: Sequence[Expr], snap: float):
        self.b = b
        self.snap = snap
        self.mapping = {
            parameter_symbol(p.name): sym for p, sym in zip(model.parameters, params, strict=True)
        }

    def scalar(self, x: Scalar) -> Expr:
        if isinstance(x, sympy.Basic) and not x.is_number:
            return self.b.emit(from_sympy(x, self.mapping))
        return number(float(x))

    def unit(self, x: Scalar) -> Expr:
        """A dimensionless entry (rotation, axis): snapped to 0 or ±1 when within tolerance."""
        if isinstance(x, sympy.Basic) and not x.is_number:
            return self.scalar(x)
        f = float(x)
        for target in (0.0, 1.0, -1.0):
            if abs(f - target) <= self.snap:
                return number(target)
        return number(f)

    def vec(self, v: Sequence[Scalar]) -> Vec3:
        return vec3(self.scalar(x) for x in v)

    def unit_vec(self, v: Sequence[Scalar]) -> Vec3:
        return vec3(self.unit(x) for x in v)

    def rotation(self, m: Sequence[Sequence[Scalar]]) -> Mat3:
        return mat3(self.unit_vec(row) for row in m)

    def matrix(self, m: Sequence[Sequence[Scalar]]) -> Mat3:
        return mat3(self.vec(row) for row in m)


def _joint_coordinates(
    b: ProgramBuilder, k: Constants, model: Model, joint, q: Sequence[Expr]
) -> tuple[list[Expr], range, Expr | None]:
    """(the joint's coordinates, its DOFs in v, its ratio): its own slices of q and v, or,
    for a coupled joint (no coordinate of its own, :mod:`symgen.model.couplings`),
    ``ratio·q[master] + offset`` and its master's DOF with the ratio."""
    c = model.coupled.get(joint.name)
    if c is None:
        vs = model.v_slices[joint.name]
        return list(q[model.q_slices[joint.name]]), range(vs.start, vs.stop), None
    ratio = k.scalar(c.ratio)
    master = q[model.q_slices[c.master].start]
    value = b.emit(ratio * master + k.scalar(c.offset))
    dof = model.v_slices[c.master].start
    return [value], range(dof, dof + 1), ratio


def _geared(b: ProgramBuilder, step: Step, ratio: Expr, name: str) -> Step:
    """A coupled joint's step driven by its master's rate: θ̇ = ratio·v[master], so
    S θ̇ = (ratio·S) v[master]."""
    if step.bias is not None:
        raise SymgenError(f"joint {name!r}: a coupled joint must have a constant motion "
                          "subspace (revolute, prismatic or helical)")
    return dataclasses.replace(step, S=[tuple(b.emit(ratio * x) for x in s) for s in step.S])


#: Joints whose placement's turn about their own axis joins their angle (:func:`twist_angle`).
TWISTING = (JointType.REVOLUTE, JointType.CONTINUOUS)
#: How far (largest entry) a placement rotation may be from a turn about the joint's axis
#: and still count as one (the rounding of rotation matrices written with 16 digits).
TWIST_TOLERANCE = 1e-12


def twist_angle(r_t: Mat3, axis: Vec3) -> float | None:
    """φ where the placement rotation R_T (numbers) turns about the joint's unit axis a
    only, R_T = R_a(φ), and is not a signed permutation (which costs no operation); else
    None. Then R_T R_a(θ) = R_a(θ + φ): the joint's rotation is that of the angle θ + φ,
    one addition instead of the product with R_T (planar mechanisms, and joints placed by
    an angle about their axis, e.g. Denavit-Hartenberg's θ offsets)."""
    values = [x.value if isinstance(x, Num) else None for row in r_t for x in row]
    a_values = [x.value if isinstance(x, Num) else None for x in axis]
    if None in values or None in a_values:
        return None
    r, a = np.array(values).reshape(3, 3), np.array(a_values)
    if np.all(np.isin(np.abs(r), (0.0, 1.0))) or np.max(np.abs(r @ a - a)) > TWIST_TOLERANCE:
        return None
    u = np.cross(a, np.eye(3)[int(np.argmin(np.abs(a)))])
    u /= np.linalg.norm(u)
    ru = r @ u
    phi = math.atan2(float(a @ np.cross(u, ru)), float(u @ ru))
    turn = np.array(rotation_about(tuple(float(x) for x in a), phi), dtype=float)
    return phi if np.max(np.abs(turn - r)) <= TWIST_TOLERANCE else None


def _placed(b: ProgramBuilder, r_t: Mat3, p_t: Vec3, step: Step) -> Transform:
    """Transform parent → hinge frame for placement (R_T, p_T) then joint motion (R_J, p_J):
    the hinge frame's pose in the parent is (R_T R_J, R_T p_J + p_T), so E = (R_T R_J)ᵀ."""
    rot = emit_mat(b, mat_mul(r_t, step.R))
    origin = emit_vec(b, add(mat_vec(r_t, step.p), p_t))
    return Transform(mat3(transpose(rot)), vec3(origin))


def build_tree(
    model: Model,
    b: ProgramBuilder,
    q: Sequence[Expr],
    params: Sequence[Expr] = (),
    partition: bool | Collection[JointType] = False,
    snap: float = SNAP_TOLERANCE,
) -> SymbolicTree:
    """The hinge tree of ``model`` at configuration ``q`` (symbols of the program ``b``);
    ``partition``: split every partitionable joint, or those of the given types."""
    k = Constants(b, model, params, snap)
    hinges: list[Hinge] = []
    body_hinge: list[int] = []
    for j, joint in enumerate(model.joints):
        qj, vs, ratio = _joint_coordinates(b, k, model, joint, q)
        kind = JOINT_TYPES[joint.type]
        split = kind.partitionable and (partition if isinstance(partition, bool)
                                        else joint.type in partition)
        r_t = k.rotation(joint.placement.rotation)
        p_t = k.vec(joint.placement.translation)
        phi = twist_angle(r_t, k.unit_vec(joint.axis)) if joint.type in TWISTING else None
        if phi is not None:  # R_T R_a(θ) = R_a(θ + φ)
            qj, r_t = [b.emit(qj[0] + phi)], IDENTITY3
        steps = kind.steps(b, k, joint, qj, split)
        if ratio is not None:
            steps = [_geared(b, step, ratio, joint.name) for step in steps]
        parent = body_hinge[model.parents[j]] if model.parents[j] >= 0 else -1
        first = len(hinges)
        velocity_split = split and kind.coincident_subframes
        armature = [k.scalar(x) for x in joint.armature] if joint.armature else None
        if armature is not None and ratio is not None:  # reflected: τ_m += ratio² J q̈_m
            armature = [b.emit(ratio * ratio * x) for x in armature]
        for n, step in enumerate(steps):
            index = len(hinges)
            x = _placed(b, r_t, p_t, step) if n == 0 else _placed(b, IDENTITY3, ZERO3, step)
            hinge = Hinge(
                name=joint.name if len(steps) == 1 else f"{joint.name}#{n}",
                joint=j,
                parent=parent,
                X=x,
                S=step.S,
                dofs=[vs[o] for o in step.offsets],
                coriolis_from=first if velocity_split else index,
                bias=step.bias,
                armature=None if armature is None else [armature[o] for o in step.offsets],
            )
            hinges.append(hinge)
            if parent >= 0:
                hinges[parent].children.append(index)
            parent = index
        body = model.bodies[j]
        hinges[-1].body = j
        hinges[-1].inertia = rigid_inertia(
            b, k.scalar(body.mass), k.vec(body.com), k.matrix(body.inertia)
        )
        body_hinge.append(len(hinges) - 1)
    frames = {}
    for f in model.frames:
        h = body_hinge[model.body_index(f.body)] if f.body != model.root else -1
        frames[f.name] = FrameRef(
            f.name, h, k.rotation(f.placement.rotation), k.vec(f.placement.translation)
        )
    def body_frame(name: str, r: Mat3, p: Vec3, label: str) -> FrameRef:
        h = body_hinge[model.body_index(name)] if name != model.root else -1
        return FrameRef(label, h, r, p)

    cuts = [CutFrames(
        j.name, j.type,
        body_frame(j.parent, k.rotation(j.placement.rotation), k.vec(j.placement.translation),
                   j.name),
        body_frame(j.child, k.rotation(j.child_placement.rotation),
                   k.vec(j.child_placement.translation), j.name),
        k.unit_vec(j.axis), k.unit_vec(j.axis2)) for j in model.loop_joints]
    return SymbolicTree(model, hinges, body_hinge, frames, k.vec(model.gravity), model.nv, cuts)



def has_partitionable(model: Model) -> bool:
    """True when partitioning would change the hinge tree of ``model``."""
    return any(JOINT_TYPES[j.type].partitionable for j in model.joints)


__all__ = [
    "CutFrames",
    "PARTITIONABLE",
    "SNAP_TOLERANCE",
    "FrameRef",
    "Hinge",
    "SymbolicTree",
    "build_tree",
    "has_partitionable",
    "planar_directions",
]

