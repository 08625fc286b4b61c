"""Python builder API: declare bodies, joints, frames, parameters; ``build()`` validates.

Example::

    b = ModelBuilder("pendulum", root="world")
    m = b.parameter("m", 1.0)
    b.body("link", mass=m, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
    b.joint("hinge", "revolute", parent="world", child="link", axis=(0, 1, 0))
    model = b.build()

Values may be numbers, a parameter returned by :meth:`ModelBuilder.parameter`, a sympy
expression of such parameters, or the string ``"$name"`` (or ``"-$name"``) naming a declared
parameter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sympy

from symgen.errors import ModelError, SourceRef
from symgen.io.builder_checks import (
    BuilderChecks,
    RawJoint,
    _check_moving_leaves,
    _merge_fixed,
    _normalized,
)
from symgen.io.builder_values import ValueReader
from symgen.loops.cuts import minimal_cuts
from symgen.model.elements import (
    Body,
    Coupling,
    ForceElement,
    Frame,
    JointActuator,
    JointSpring,
    Limits,
    PointSpring,
)
from symgen.model.force_elements import (
    check_force_elements,
    check_spring_points,
)
from symgen.model.model import Model
from symgen.model.reduction import LockRequest, apply_locks
from symgen.model.scalars import (
    Parameter,
    parameter_symbol,
)
from symgen.model.transform import Transform
from symgen.model.validation import (
    check_body,
    check_generatable,
    check_joint_axes,
    check_limits,
    check_model_scale,
    check_planar,
)

#: Joints to lock: name -> value (a number, the joint's nq numbers, or None for neutral).
Locks = Mapping[str, float | str | Sequence[float | str] | None]

ValueLike = float | int | str | sympy.Expr | Parameter
PLANES = ("xy",)

#: The values of a loop joint's ``cut``: keep the declared cut, or let it move to the joint
#: of the loop with the fewest independent constraints.
CUT_CHOICES = ("declared", "minimal")


class ModelBuilder(BuilderChecks, ValueReader):
    """Collects a model description; :meth:`build` validates it and returns a :class:`Model`."""

    def __init__(
        self,
        name: str,
        root: str = "world",
        gravity: Sequence[ValueLike] = (0.0, 0.0, -9.81),
        plane: str | None = None,
        source: SourceRef | None = None,
    ) -> None:
        self.name = name
        self.root = root
        self.source = source
        self.plane = plane
        self._parameters: dict[str, Parameter] = {}
        self._parameter_sources: dict[str, SourceRef | None] = {}
        self._bodies: list[Body] = []
        self._joints: list[RawJoint] = []
        self._loop_joints: list[RawJoint] = []
        self._frames: list[Frame] = []
        self._couplings: list[Coupling] = []
        self._forces: list[ForceElement] = []
        self._locks: dict[str, LockRequest] = {}
        self._gravity_raw = gravity

    # ------------------------------------------------------------------ declarations
    def parameter(
        self, name: str, default: float, description: str = "", source: SourceRef | None = None
    ) -> sympy.Symbol:
        """Declare a runtime parameter; returns the symbol to use in values."""
        if not isinstance(name, str) or not name.isidentifier():
            raise ModelError(f"parameter name {name!r} is not a valid identifier", source)
        if name in self._parameters:
            raise ModelError(f"duplicate parameter name {name!r}", source)
        try:
            value = float(default)
        except (TypeError, ValueError):
            raise ModelError(
                f"parameter {name!r}: default {default!r} is not a number", source
            ) from None
        self._parameters[name] = Parameter(name, value, description)
        self._parameter_sources[name] = source
        return parameter_symbol(name)

    def body(
        self,
        name: str,
        mass: ValueLike = 0.0,
        com: Sequence[ValueLike] = (0.0, 0.0, 0.0),
        inertia: Sequence = (0.0, 0.0, 0.0),
        source: SourceRef | None = None,
    ) -> None:
        """Declare a body. ``inertia`` is about the centre of mass, in body axes: a 3x3 matrix,
        ``(ixx, iyy, izz)`` or ``(ixx, iyy, izz, ixy, ixz, iyz)``."""
        where = f"body {name!r}"
        self._bodies.append(
            Body(
                name,
                self._scalar(mass, where, source),
                self._vec(com, where, source),
                self._inertia(inertia, where, source),
                source,
            )
        )

    def joint(
        self,
        name: str,
        type: str,
        parent: str,
        child: str,
        xyz: Sequence[ValueLike] = (0.0, 0.0, 0.0),
        rpy: Sequence[ValueLike] = (0.0, 0.0, 0.0),
        axis: Sequence[ValueLike] = (0.0, 0.0, 1.0),
        axis2: Sequence[ValueLike] = (0.0, 1.0, 0.0),
        pitch: ValueLike = 0.0,
        limits: Limits | None = None,
        placement: Transform | None = None,
        armature: ValueLike | Sequence[ValueLike] | None = None,
        source: SourceRef | None = None,
    ) -> None:
        """Declare a tree joint. Its frame sits at ``xyz``/``rpy`` (URDF convention) in the
        parent body frame, or at ``placement``; the child's body frame is the joint frame.
        ``armature`` (default none) is the rotor inertia reflected on the joint, added to the
        diagonal of M: one non-negative value for every velocity coordinate, or a list of
        ``nv`` values (kg m² for rotations, kg for translations)."""
        raw = self._raw_joint(
            name,
            type,
            parent,
            child,
            xyz,
            rpy,
            axis,
            axis2,
            pitch,
            limits,
            placement,
            None,
            source,
        )
        if armature is not None:
            raw.armature = self._values(armature, f"joint {name!r}: armature", source)
        self._joints.append(raw)

    def lock(
        self,
        joint: str,
        value: ValueLike | Sequence[ValueLike] | None = None,
        source: SourceRef | None = None,
    ) -> None:
        """Hold tree joint ``joint`` at ``value`` (default: its neutral value, 0 or the
        identity quaternion; a multi-DOF joint takes its ``nq`` coordinates as a list). The
        built model treats it as fixed and lumps what it carries into the nearest moving
        ancestor, as Pinocchio's ``buildReducedModel``; joints coupled to it are locked at
        ``ratio * value + offset``. The value must lie within the joint's limits."""
        where = f"lock of joint {joint!r}"
        if not isinstance(joint, str) or not joint:
            raise ModelError(f"lock: {joint!r} is not a joint name", source)
        if joint in self._locks:
            raise ModelError(f"{where}: the joint is locked twice", source)
        values = None if value is None else self._values(value, where, source)
        self._locks[joint] = (values, source)

    def loop_joint(
        self,
        name: str,
        type: str,
        parent: str,
        child: str,
        xyz: Sequence[ValueLike] = (0.0, 0.0, 0.0),
        rpy: Sequence[ValueLike] = (0.0, 0.0, 0.0),
        child_xyz: Sequence[ValueLike] = (0.0, 0.0, 0.0),
        child_rpy: Sequence[ValueLike] = (0.0, 0.0, 0.0),
        axis: Sequence[ValueLike] = (0.0, 0.0, 1.0),
        axis2: Sequence[ValueLike] = (0.0, 1.0, 0.0),
        pitch: ValueLike = 0.0,
        cut: str = "declared",
        source: SourceRef | None = None,
    ) -> None:
        """Declare a joint that closes a kinematic loop. Its frame is at ``xyz``/``rpy`` in the
        parent body frame and at ``child_xyz``/``child_rpy`` in the child body frame.
        ``cut="minimal"`` lets :meth:`build` move the loop's cut to the joint of the loop
        with the fewest independent constraints (:func:`symgen.loops.minimal_cuts`)."""
        where = f"loop joint {name!r}"
        if cut not in CUT_CHOICES:
            raise ModelError(f"{where}: cut must be one of {', '.join(CUT_CHOICES)}; got "
                             f"{cut!r}", source)
        child_pose = Transform.from_xyz_rpy(
            self._vec(child_xyz, where, source), self._vec(child_rpy, where, source)
        )
        self._loop_joints.append(
            self._raw_joint(
                name,
                type,
                parent,
                child,
                xyz,
                rpy,
                axis,
                axis2,
                pitch,
                None,
                None,
                child_pose,
                source,
            )
        )
        self._loop_joints[-1].cut = cut

    def frame(
        self,
        name: str,
        body: str,
        xyz: Sequence[ValueLike] = (0.0, 0.0, 0.0),
        rpy: Sequence[ValueLike] = (0.0, 0.0, 0.0),
        source: SourceRef | None = None,
    ) -> None:
        """Declare a named frame fixed on ``body`` at ``xyz``/``rpy`` in the body frame."""
        where = f"frame {name!r}"
        pose = Transform.from_xyz_rpy(self._vec(xyz, where, source), self._vec(rpy, where, source))
        self._frames.append(Frame(name, body, pose, source))

    def coupling(
        self,
        joint: str,
        master: str,
        ratio: ValueLike = 1.0,
        offset: ValueLike = 0.0,
        source: SourceRef | None = None,
    ) -> None:
        """Declare a gear / mimic coupling ``q[joint] = ratio * q[master] + offset``."""
        where = f"coupling of joint {joint!r}"
        self._couplings.append(
            Coupling(
                joint,
                master,
                self._scalar(ratio, where, source),
                self._scalar(offset, where, source),
                source,
            )
        )

    def spring(
        self,
        name: str,
        body_a: str,
        point_a: Sequence[ValueLike],
        body_b: str,
        point_b: Sequence[ValueLike],
        stiffness: ValueLike,
        damping: ValueLike = 0.0,
        rest_length: ValueLike | None = None,
        source: SourceRef | None = None,
    ) -> None:
        """Declare a linear spring-damper between ``point_a`` fixed on ``body_a`` and
        ``point_b`` fixed on ``body_b`` (body-frame coordinates, m; a body or the root):
        tension k(L − L₀) + c L̇ along the line joining them (García de Jalón & Bayo 1994,
        eq. 4.102-4.107); ``stiffness`` k ≥ 0 in N/m, ``damping`` c ≥ 0 in N·s/m,
        ``rest_length`` L₀ ≥ 0 in m (None: the distance at the zero configuration)."""
        where = f"spring {name!r}"
        rest = None if rest_length is None else self._scalar(rest_length, where, source)
        self._forces.append(
            PointSpring(
                name,
                body_a,
                self._vec(point_a, where, source),
                body_b,
                self._vec(point_b, where, source),
                self._scalar(stiffness, where, source),
                self._scalar(damping, where, source),
                rest,
                source,
            )
        )

    def joint_spring(
        self,
        name: str,
        joint: str,
        stiffness: ValueLike,
        damping: ValueLike = 0.0,
        rest: ValueLike = 0.0,
        source: SourceRef | None = None,
    ) -> None:
        """Declare a linear spring-damper on the 1-DOF joint ``joint`` (tree or loop joint):
        generalized force −k(θ − rest) − c θ̇ on its coordinate θ; ``stiffness`` k ≥ 0
        (N·m/rad or N/m), ``damping`` c ≥ 0, ``rest`` in the joint's coordinate (rad or m)."""
        where = f"joint spring {name!r}"
        self._forces.append(
            JointSpring(
                name,
                joint,
                self._scalar(stiffness, where, source),
                self._scalar(damping, where, source),
                self._scalar(rest, where, source),
                source,
            )
        )

    def actuator(
        self, name: str, joint: str, force: ValueLike, source: SourceRef | None = None
    ) -> None:
        """Declare a constant force (N, prismatic) or torque (N·m, revolute, continuous) on
        the 1-DOF joint ``joint`` (tree or loop joint), along its coordinate."""
        where = f"actuator {name!r}"
        self._forces.append(JointActuator(name, joint, self._scalar(force, where, source), source))

    # ------------------------------------------------------------------ values
    def _raw_joint(
        self,
        name,
        type,
        parent,
        child,
        xyz,
        rpy,
        axis,
        axis2,
        pitch,
        limits,
        placement,
        child_placement,
        source,
    ) -> RawJoint:
        where = f"joint {name!r}"
        if placement is None:
            placement = Transform.from_xyz_rpy(
                self._vec(xyz, where, source), self._vec(rpy, where, source)
            )
        return RawJoint(
            name,
            str(type),
            parent,
            child,
            placement,
            self._vec(axis, where, source),
            self._vec(axis2, where, source),
            self._scalar(pitch, where, source),
            limits,
            child_placement or Transform(),
            source,
        )

    # ------------------------------------------------------------------ build
    def build(self) -> Model:
        """Validate the description, merge fixed joints and number bodies base to tip."""
        values = {p.name: p.default for p in self._parameters.values()}
        gravity = self._vec(self._gravity_raw, "gravity", self.source)
        if self.plane is not None and self.plane not in PLANES:
            raise ModelError(
                f"model {self.name!r}: unknown plane {self.plane!r} (use 'xy')", self.source
            )
        self._check_names()
        tree = [self._typed(j, loop=False) for j in self._joints]
        loops = [self._typed(j, loop=True) for j in self._loop_joints]
        bodies = {b.name: b for b in self._bodies}
        self._check_references(tree + loops, bodies)
        self._check_values(tree, loops, gravity, values)
        for body in self._bodies:
            check_body(body, values)
        self._check_defaults()
        for joint in tree + loops:
            check_joint_axes(joint, values)
            check_limits(joint, values)
            if self.plane is not None:
                check_planar(joint, values)
        order = self._tree_order(tree, bodies)
        tree = [_normalized(j) for j in tree]
        loops = [_normalized(j) for j in loops]
        self._check_couplings(tree, loops)
        check_force_elements(self._forces, set(bodies) | {self.root}, tree + loops, values)
        tree, couplings, locks = apply_locks(tree, loops, self._couplings, self._locks, values)
        model = _merge_fixed(self, order, tree, loops, bodies, gravity, couplings, locks)
        self._check_lumped_bodies(model, bodies, values)
        check_model_scale(model, values)
        check_generatable(model)
        check_spring_points(model, values)
        _check_moving_leaves(model, values)
        if any(j.cut == "minimal" for j in model.loop_joints):
            model = minimal_cuts(model)
        return model

