"""The declaration every joint type fills in (:class:`JointKind`) and the symbolic helpers
its hinge-tree steps share.

A joint moves its child frame relative to its joint frame by ``(R_J(q), p_J(q))`` with
motion subspace ``S`` in child coordinates (``v_J = S v``) and bias ``c_J = S̊ v``
(Featherstone 2008, §4.4, eqs. 4.34-4.35 and Table 4.1). Partitioned, a multi-DOF joint
becomes a chain of 1-DOF sub-hinges (Jain, *Partitioning of recursive multibody dynamics*,
Lemma 2.1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol

from symgen.ir.expr import Expr, cos, sin
from symgen.ir.program import ProgramBuilder
from symgen.spatial import ONE, ZERO, Mat3, Vec3, Vec6, emit_mat, mat3, rotation_about, vec6

if TYPE_CHECKING:
    import numpy as np
    import sympy

    from symgen.model import Joint, JointType
    from symgen.model.joint_types import JointLayout
    from symgen.model.scalars import Scalar

BiasFn = Callable[[ProgramBuilder, Sequence[Expr]], Vec6]


class Constants(Protocol):
    """Model values as program expressions (:class:`symgen.formulations.tree.hinges.Constants`)."""

    def scalar(self, x: Scalar) -> Expr: ...

    def unit_vec(self, v: Sequence[Scalar]) -> Vec3: ...


@dataclass
class Step:
    """One hinge of a joint before placement: joint motion (R_J, p_J) in the previous
    frame, joint map columns S, DOF offsets within the joint, and the bias c_J(v)."""

    R: Mat3
    p: Vec3
    S: list[Vec6]
    offsets: list[int]
    bias: BiasFn | None = None


class NaturalModeller(Protocol):
    """What a joint type uses of the spatial natural-coordinate modeller
    (:class:`symgen.formulations.natural.spatial.SpatialModeller`)."""

    entities: list
    symbol_of: dict[int, sympy.Matrix]

    def shared(self, name: str, kind: str, parent: int, child: int, world) -> int: ...

    def pin(self, name: str, parent: int, child: int, world) -> int: ...

    def pin_axis(self, name: str, parent: int, child: int, axis) -> tuple[int, float]: ...

    def own(self, name: str, kind: str, body: int, world) -> int: ...

    def on_body(self, body: int, world_vector: np.ndarray) -> sympy.Matrix: ...

    def equation(self, expr: sympy.Expr, label: str) -> None: ...

    def body_rotation(self, body: int, q: np.ndarray) -> np.ndarray: ...


#: A 1-DOF joint coordinate of the natural modellers: ("angle", (s, c)) or ("length", (d,)),
#: optionally followed by the offset and the sign of :class:`~symgen.formulations.natural.
#: model.JointCoordinate`.
NaturalCoordinate = tuple[str, tuple]


class JointKind:
    """Everything symgen's symbolic side knows of one joint type (one subclass per type,
    registered in :data:`symgen.joints.JOINT_TYPES`).

    Data: its coordinate layout (``layout``: nq, nv, names, quaternion, ... declared with
    the model's :class:`~symgen.model.joint_types.JointType`), whether partitioning splits
    it (and whether its sub-hinge frames coincide, so that their Coriolis terms use the
    velocity the joint's parent carries in) and its natural-coordinate pairs.
    """

    type: ClassVar[JointType]
    partitionable: ClassVar[bool] = False
    coincident_subframes: ClassVar[bool] = False
    #: Planar natural coordinates (García de Jalón & Bayo 1994, §2.1.3): "revolute" — a
    #: shared point; "prismatic" — a point on each body and two equations; None: unsupported.
    natural_planar: ClassVar[str | None] = None
    #: Spatial natural coordinates (ibid., §2.2.3) model this type.
    natural_spatial: ClassVar[bool] = False
    #: Spatial pins (ibid., ch. 2: a point is shared by all the elements that meet at it):
    #: "point" — the joint point stays common to parent and child, so it is one basic point
    #: with every pin that touches one of its bodies there; "axis" — the axis line too
    #: (revolute); None — no pin.
    natural_pin: ClassVar[str | None] = None

    @property
    def layout(self) -> JointLayout:
        """The type's coordinates (:data:`symgen.model.joint_types.LAYOUTS`)."""
        return self.type.layout

    @property
    def nq(self) -> int:
        return self.type.layout.nq

    @property
    def nv(self) -> int:
        return self.type.layout.nv

    # ------------------------------------------------------------------ hinge tree
    def steps(
        self,
        b: ProgramBuilder,
        k: Constants,
        joint: Joint,
        qj: Sequence[Expr],
        partition: bool,
    ) -> list[Step]:
        """The joint's motion as one step, or as 1-DOF steps when ``partition``."""
        from symgen.errors import SymgenError

        raise SymgenError(f"joint {joint.name!r}: unsupported joint type {self.type.value!r}")

    # ------------------------------------------------------------------ integration
    def integrate(self, b: ProgramBuilder, qj: Sequence[Expr], step: Sequence[Expr]) -> list[Expr]:
        """q ⊕ v·dt for this joint given ``step`` = v·dt (vector joints: q + v·dt)."""
        return [b.emit(x + s) for x, s in zip(qj, step, strict=True)]

    # ------------------------------------------------------------------ configuration rates
    def rate(self, b: ProgramBuilder, qj: Sequence[Expr], vj: Sequence[Expr]) -> list[Expr]:
        """q̇ of this joint at (q, v), the right-hand side a standard ODE solver advances q
        with: v itself for a joint whose v is the rate of its coordinates (revolute,
        prismatic, helical, cylindrical, universal, planar: docs/conventions.md)."""
        return list(vj)

    # ------------------------------------------------------------------ natural coordinates
    def natural_entities(
        self, m: NaturalModeller, joint: Joint, info: dict, point, axis, jrot
    ) -> None:
        """Add the joint's points and unit vectors to ``m`` and record them in ``info``
        (``point``, ``axis``: the joint point and unit axis in world coordinates at
        assembly; ``jrot``: the joint frame's rotation)."""

    def natural_equations(self, m: NaturalModeller, name: str, info: dict) -> None:
        """The joint's constraint equations beyond the shared entities."""

    def natural_coordinate(self, m: NaturalModeller, info: dict) -> NaturalCoordinate | None:
        """The joint coordinate as a function of the natural coordinates (1-DOF joints)."""
        return None

    def natural_reader(self, m: NaturalModeller, info: dict) -> Callable | None:
        """A reader of the joint's relative motion where there is no scalar coordinate."""
        return None


def angular(a: Sequence[Expr]) -> Vec6:
    """``[a; 0]``: the column of S of a rotation about a (Featherstone 2008, Table 4.1)."""
    return (a[0], a[1], a[2], ZERO, ZERO, ZERO)


def linear(a: Sequence[Expr]) -> Vec6:
    """``[0; a]``: the column of S of a translation along a (Featherstone 2008, Table 4.1)."""
    return (ZERO, ZERO, ZERO, a[0], a[1], a[2])


def unit6(i: int) -> Vec6:
    """Column ``i`` of ``1₆``: S of a free joint (Featherstone 2008, Table 4.1)."""
    return vec6(ONE if k == i else ZERO for k in range(6))


def trig(b: ProgramBuilder, angle: Expr) -> tuple[Expr, Expr]:
    return b.emit(cos(angle)), b.emit(sin(angle))


def revolute_rotation(b: ProgramBuilder, axis: Vec3, angle: Expr) -> Mat3:
    """Rotation by ``angle`` about the unit ``axis`` (Rodrigues), emitted."""
    c, s = trig(b, angle)
    return mat3(emit_mat(b, rotation_about(axis, c, s)))


__all__ = [
    "BiasFn",
    "Constants",
    "JointKind",
    "NaturalCoordinate",
    "NaturalModeller",
    "Step",
    "angular",
    "linear",
    "revolute_rotation",
    "trig",
    "unit6",
]
