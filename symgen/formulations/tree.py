"""The symbolic hinge tree a spatial-operator kernel works on.

Each movable joint of the model becomes one *hinge* (Jain's joint k with map H(k) = Sᵀ), or,
when partitioned (Jain, *Partitioning of recursive multibody dynamics*, Lemma 2.1), a chain
of 1-DOF sub-hinges joined by mass-less bodies:

- universal → two revolutes, cylindrical → prismatic + revolute, planar → two prismatics +
  a revolute: real sub-bodies, each sub-hinge with a constant H (J-P L97-101);
- spherical and free → 3 and 6 sub-hinges whose frames coincide (φ(k', k) = I) and whose
  H are the unit columns of the joint's S. Their velocities are partial sums, so the
  Coriolis term of each sub-hinge is taken with the velocity the joint's parent body
  carries into the joint, ``𝔞(k') = (X V(℘)) × H*(k') β(k')``: the terms then add up to the
  joint's 𝔞 exactly, as Lemma 2.1 requires (𝔞̲(k) = 𝔞(k) + φ*(k', k) 𝔞(k')).

Hinge frames are body frames (or the sub-bodies' frames): H is constant or sparse there
(papers-digest §10.2). Every q-dependent quantity is emitted into the program being built.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import sympy

from ..expr import Expr, cos, from_sympy, sin
from ..model import JointType, Model, SymgenError
from ..model.scalars import parameter_symbol
from ..model.transform import planar_directions
from ..program import ProgramBuilder
from ..spatial import (
    IDENTITY3,
    ONE,
    ZERO,
    ZERO3,
    Mat3,
    RigidInertia,
    Transform,
    Vec3,
    Vec6,
    add,
    cross,
    emit_mat,
    emit_vec,
    mat_mul,
    mat_t_vec,
    mat_vec,
    number,
    quaternion_rotation,
    rigid_inertia,
    rotation_about,
    scale,
    transpose,
)

BiasFn = Callable[[ProgramBuilder, Sequence[Expr]], Vec6]

#: Joint types that partitioning splits into 1-DOF sub-hinges.
PARTITIONABLE = (
    JointType.UNIVERSAL,
    JointType.CYLINDRICAL,
    JointType.PLANAR,
    JointType.SPHERICAL,
    JointType.FREE,
)

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
    inertia: RigidInertia | None = None
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
class SymbolicTree:
    """Hinges base to tip (``parent < index``), the hinge carrying each model body, named
    frames, and gravity in root coordinates."""

    model: Model
    hinges: list[Hinge]
    body_hinge: list[int]
    frames: dict[str, FrameRef]
    gravity: Vec3
    nv: int

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

    def scalar(self, x: float | Expr) -> Expr:
        if isinstance(x, sympy.Basic) and not x.is_number:
            return self.b.emit(from_sympy(x, self.mapping))
        return number(float(x))

    def unit(self, x: float | Expr) -> Expr:
        """A dimensionless entry (rotation, axis): snapped to 0 or ±1 when within tolerance."""
        if isinstance(x, sympy.Basic) and not x.is_number:
            return self.scalar(x)
        f = float(x)
        for target in (0.0, 1.0, -1.0):
            if abs(f - target) <= self.snap:
                return number(target)
        return number(f)

    def vec(self, v: Sequence[float | Expr]) -> Vec3:
        return tuple(self.scalar(x) for x in v)  # type: ignore[return-value]

    def unit_vec(self, v: Sequence[float | Expr]) -> Vec3:
        return tuple(self.unit(x) for x in v)  # type: ignore[return-value]

    def rotation(self, m: Sequence[Sequence[float | Expr]]) -> Mat3:
        return tuple(self.unit_vec(row) for row in m)  # type: ignore[return-value]

    def matrix(self, m: Sequence[Sequence[float | Expr]]) -> Mat3:
        return tuple(self.vec(row) for row in m)  # type: ignore[return-value]


def angular(a: Sequence[Expr]) -> Vec6:
    return (a[0], a[1], a[2], ZERO, ZERO, ZERO)


def linear(a: Sequence[Expr]) -> Vec6:
    return (ZERO, ZERO, ZERO, a[0], a[1], a[2])


def unit6(i: int) -> Vec6:
    return tuple(ONE if k == i else ZERO for k in range(6))  # type: ignore[return-value]


@dataclass
class _Step:
    """One hinge of a joint before placement: joint motion (R_J, p_J) in the previous
    frame, joint map columns, DOF offsets within the joint, and the bias c_J(v)."""

    R: Mat3
    p: Vec3
    S: list[Vec6]
    offsets: list[int]
    bias: BiasFn | None = None


def _trig(b: ProgramBuilder, angle: Expr) -> tuple[Expr, Expr]:
    return b.emit(cos(angle)), b.emit(sin(angle))


def _revolute(b: ProgramBuilder, axis: Vec3, angle: Expr) -> Mat3:
    c, s = _trig(b, angle)
    return emit_mat(b, rotation_about(axis, c, s))  # type: ignore[return-value]


def _joint_steps(
    b: ProgramBuilder, k: Constants, joint, qj: Sequence[Expr], partition: bool
) -> list[_Step]:
    """The joint's motion as one step, or as 1-DOF steps when partitioned."""
    t = joint.type
    a = k.unit_vec(joint.axis)
    if t in (JointType.REVOLUTE, JointType.CONTINUOUS):
        return [_Step(_revolute(b, a, qj[0]), ZERO3, [angular(a)], [0])]
    if t is JointType.PRISMATIC:
        return [_Step(IDENTITY3, emit_vec(b, scale(qj[0], a)), [linear(a)], [0])]  # type: ignore
    if t is JointType.HELICAL:
        pitch = k.scalar(joint.pitch)
        s_col = emit_vec(b, angular(a)[:3] + scale(pitch, a))
        p = emit_vec(b, scale(b.emit(pitch * qj[0]), a))
        return [_Step(_revolute(b, a, qj[0]), p, [s_col], [0])]  # type: ignore[list-item]
    if t is JointType.CYLINDRICAL:
        slide = emit_vec(b, scale(qj[0], a))
        if partition:
            return [
                _Step(IDENTITY3, slide, [linear(a)], [0]),  # type: ignore[arg-type]
                _Step(_revolute(b, a, qj[1]), ZERO3, [angular(a)], [1]),
            ]
        return [_Step(_revolute(b, a, qj[1]), slide, [linear(a), angular(a)], [0, 1])]  # type: ignore
    if t is JointType.UNIVERSAL:
        a2 = k.unit_vec(joint.axis2)
        r1, r2 = _revolute(b, a, qj[0]), _revolute(b, a2, qj[1])
        if partition:
            return [
                _Step(r1, ZERO3, [angular(a)], [0]),
                _Step(r2, ZERO3, [angular(a2)], [1]),
            ]
        w1 = emit_vec(b, mat_t_vec(r2, a))  # R2ᵀ a1

        def universal_bias(bb: ProgramBuilder, vj: Sequence[Expr]) -> Vec6:
            # c_J = S̊ q̇ = [q̇1 q̇2 (R2ᵀ a1) × a2; 0]
            rate = bb.emit(vj[0] * vj[1])
            return angular(emit_vec(bb, scale(rate, cross(w1, a2))))

        rot = emit_mat(b, mat_mul(r1, r2))
        return [_Step(rot, ZERO3, [angular(w1), angular(a2)], [0, 1], universal_bias)]  # type: ignore
    if t is JointType.PLANAR:
        e1, e2 = planar_directions(joint.axis)
        e1, e2 = k.unit_vec(e1), k.unit_vec(e2)
        if partition:
            return [
                _Step(IDENTITY3, emit_vec(b, scale(qj[0], e1)), [linear(e1)], [0]),  # type: ignore
                _Step(IDENTITY3, emit_vec(b, scale(qj[1], e2)), [linear(e2)], [1]),  # type: ignore
                _Step(_revolute(b, a, qj[2]), ZERO3, [angular(a)], [2]),
            ]
        rot = _revolute(b, a, qj[2])
        p = emit_vec(b, add(scale(qj[0], e1), scale(qj[1], e2)))
        d1, d2 = emit_vec(b, mat_t_vec(rot, e1)), emit_vec(b, mat_t_vec(rot, e2))

        def planar_bias(bb: ProgramBuilder, vj: Sequence[Expr]) -> Vec6:
            # c_J = [0; θ̇ (Rᵀ(ẋ e1 + ẏ e2)) × n]
            lin = emit_vec(bb, add(scale(vj[0], d1), scale(vj[1], d2)))
            return linear(emit_vec(bb, scale(vj[2], cross(lin, a))))

        cols = [linear(d1), linear(d2), angular(a)]
        return [_Step(rot, p, cols, [0, 1, 2], planar_bias)]  # type: ignore[arg-type]
    if t is JointType.SPHERICAL:
        rot = emit_mat(b, quaternion_rotation(*qj))
        cols = [unit6(i) for i in range(3)]
        if partition:
            return [_Step(rot if i == 0 else IDENTITY3, ZERO3, [cols[i]], [i]) for i in range(3)]
        return [_Step(rot, ZERO3, cols, [0, 1, 2])]  # type: ignore[arg-type]
    if t is JointType.FREE:
        rot = emit_mat(b, quaternion_rotation(*qj[3:7]))
        p = tuple(qj[:3])
        cols = [unit6(i) for i in range(6)]
        if partition:
            return [
                _Step(rot if i == 0 else IDENTITY3, p if i == 0 else ZERO3, [cols[i]], [i])
                for i in range(6)
            ]
        return [_Step(rot, p, cols, list(range(6)))]  # type: ignore[arg-type]
    raise SymgenError(f"joint {joint.name!r}: unsupported joint type {t.value!r}")


def _placed(b: ProgramBuilder, r_t: Mat3, p_t: Vec3, step: _Step) -> Transform:
    """Transform parent → hinge frame for placement (R_T, p_T) then joint motion (R_J, p_J):
    the hinge frame's pose in the parent is (R_T R_J, R_T p_J + p_T), so E = (R_T R_J)ᵀ."""
    rot = emit_mat(b, mat_mul(r_t, step.R))
    origin = emit_vec(b, add(mat_vec(r_t, step.p), p_t))
    return Transform(transpose(rot), origin)  # type: ignore[arg-type]


def build_tree(
    model: Model,
    b: ProgramBuilder,
    q: Sequence[Expr],
    params: Sequence[Expr] = (),
    partition: bool = False,
    snap: float = SNAP_TOLERANCE,
) -> SymbolicTree:
    """The hinge tree of ``model`` at configuration ``q`` (symbols of the program ``b``)."""
    k = Constants(b, model, params, snap)
    hinges: list[Hinge] = []
    body_hinge: list[int] = []
    for j, joint in enumerate(model.joints):
        qs, vs = model.q_slices[joint.name], model.v_slices[joint.name]
        qj = list(q[qs])
        split = partition and joint.type in PARTITIONABLE
        steps = _joint_steps(b, k, joint, qj, split)
        parent = body_hinge[model.parents[j]] if model.parents[j] >= 0 else -1
        r_t = k.rotation(joint.placement.rotation)
        p_t = k.vec(joint.placement.translation)
        first = len(hinges)
        velocity_split = split and joint.type in (JointType.SPHERICAL, JointType.FREE)
        armature = [k.scalar(x) for x in joint.armature] if joint.armature else None
        for n, step in enumerate(steps):
            index = len(hinges)
            x = _placed(b, r_t, p_t, step) if n == 0 else _placed(b, IDENTITY3, ZERO3, step)
            hinge = Hinge(
                name=joint.name if len(steps) == 1 else f"{joint.name}#{n}",
                joint=j,
                parent=parent,
                X=x,
                S=step.S,
                dofs=[vs.start + o for o in step.offsets],
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
    return SymbolicTree(model, hinges, body_hinge, frames, k.vec(model.gravity), model.nv)


def has_partitionable(model: Model) -> bool:
    """True when partitioning would change the hinge tree of ``model``."""
    return any(j.type in PARTITIONABLE for j in model.joints)


__all__ = [
    "PARTITIONABLE",
    "SNAP_TOLERANCE",
    "FrameRef",
    "Hinge",
    "SymbolicTree",
    "build_tree",
    "has_partitionable",
    "planar_directions",
]

