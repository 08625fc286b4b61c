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

import math
import numbers
import reprlib
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import sympy

from symgen.errors import ModelError, SourceRef
from symgen.model.elements import (
    Body,
    Coupling,
    ForceElement,
    Frame,
    Joint,
    JointActuator,
    JointSpring,
    JointType,
    Limits,
    LockedJoint,
    PointSpring,
)
from symgen.model.force_elements import (
    attach_force_elements,
    check_force_elements,
    check_spring_points,
)
from symgen.model.lumping import lump
from symgen.model.model import Model
from symgen.model.reduction import LockRequest, apply_locks, armature_values, check_armature
from symgen.model.scalars import (
    Mat3,
    Parameter,
    Scalar,
    Vec3,
    evaluate,
    free_parameter_names,
    is_symbolic,
    parameter_symbol,
    sqrt,
)
from symgen.model.transform import Transform, vec3
from symgen.model.validation import (
    check_body,
    check_generatable,
    check_joint_axes,
    check_limits,
    check_model_bodies,
    check_model_scale,
    check_planar,
    check_values,
    joint_values,
    unit_vector,
)

ValueLike = float | int | str | sympy.Expr | Parameter
PLANES = ("xy",)
#: Longest accepted name of a model, body, joint, frame or parameter (real files use < 100;
#: a name is repeated in every generated kernel's identifiers and comments).
MAX_NAME_LENGTH = 256

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 60


def _clip(x: object) -> str:
    """``repr(x)`` shortened for a one-line message (deep or huge values stay short)."""
    return _REPR.repr(x)


@dataclass
class _RawJoint:
    name: str
    type: str
    parent: str
    child: str
    placement: Transform
    axis: Vec3
    axis2: Vec3
    pitch: Scalar
    limits: Limits | None
    child_placement: Transform
    source: SourceRef | None
    armature: tuple[Scalar, ...] | None = None
    cut: str = "declared"


#: The values of a loop joint's ``cut``: keep the declared cut, or let it move to the joint
#: of the loop with the fewest independent constraints.
CUT_CHOICES = ("declared", "minimal")


class ModelBuilder:
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
        self._joints: list[_RawJoint] = []
        self._loop_joints: list[_RawJoint] = []
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
    def _values(self, x: object, where: str, source: SourceRef | None) -> tuple[Scalar, ...]:
        """One value or a non-empty list (or array) of values."""
        if isinstance(x, str | sympy.Basic | Parameter) or not hasattr(x, "__iter__"):
            return (self._scalar(x, where, source),)
        items = list(x)  # type: ignore[call-overload]
        if not items:
            raise ModelError(f"{where}: expected a number or a list of numbers", source)
        return tuple(self._scalar(v, where, source) for v in items)

    def _scalar(self, x: object, where: str, source: SourceRef | None) -> Scalar:
        """A finite float, or a sympy expression of declared parameters (checked at their
        defaults by :meth:`build`)."""
        if isinstance(x, Parameter):
            x = x.symbol
        given = x
        if isinstance(x, str):
            ref = x.strip()
            sign = -1.0 if ref.startswith("-$") else 1.0
            ref = ref[1:] if sign < 0 else ref
            name = ref[1:] if ref.startswith("$") else None
            if name is None:
                try:
                    x = float(ref)
                except ValueError:
                    raise ModelError(
                        f"{where}: {_clip(x)} is neither a number nor a parameter reference "
                        f"($name)",
                        source,
                    ) from None
            elif name not in self._parameters:
                raise ModelError(f"{where}: unknown parameter {_clip(name)}", source)
            else:
                return sign * parameter_symbol(name)
        if isinstance(x, sympy.Basic):
            if not isinstance(x, sympy.Expr):
                raise ModelError(f"{where}: {_clip(x)} is not a number", source)
            unknown = sorted(free_parameter_names(x) - set(self._parameters))
            if unknown:
                raise ModelError(f"{where}: unknown parameter {unknown[0]!r}", source)
            if not x.is_number:
                # parameters as the symbols parameter_symbol(name); constants such as pi as
                # floats (the kernels see numbers and parameters only)
                subs = {s: parameter_symbol(s.name) for s in x.free_symbols}
                subs |= {c: sympy.Float(float(c)) for c in x.atoms(sympy.NumberSymbol)}
                return x.xreplace(subs)
            try:
                z = complex(x)
            except (TypeError, ValueError, OverflowError, ZeroDivisionError):
                z = complex(math.nan)
            if z.imag != 0.0 and abs(z.imag) > 1e-12 * abs(z):
                raise ModelError(f"{where}: {_clip(x)} is not a real number", source)
            x = z.real
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise ModelError(f"{where}: {_clip(x)} is not a number", source)
        try:
            value = float(x)
        except (OverflowError, ValueError, TypeError):
            value = math.nan if not isinstance(x, int) else (math.inf if x > 0 else -math.inf)
        if not math.isfinite(value):
            raise ModelError(f"{where}: {_clip(given)} is not a finite number", source)
        return value

    def _vec(self, v: Sequence, where: str, source: SourceRef | None, n: int = 3) -> Vec3:
        if isinstance(v, str) or not isinstance(v, Sequence) or len(v) != n:
            raise ModelError(f"{where}: expected a list of {n} numbers, got {_clip(v)}", source)
        return vec3([self._scalar(x, where, source) for x in v])

    def _inertia(self, inertia: Sequence, where: str, source: SourceRef | None) -> Mat3:
        if (
            isinstance(inertia, Sequence)
            and len(inertia) == 3
            and all(isinstance(r, Sequence) and not isinstance(r, str) for r in inertia)
        ):
            rows = [self._vec(r, where, source) for r in inertia]
            return (rows[0], rows[1], rows[2])
        if (
            isinstance(inertia, Sequence)
            and not isinstance(inertia, str)
            and len(inertia) in (3, 6)
        ):
            vals = [self._scalar(x, where, source) for x in inertia]
            ixx, iyy, izz = vals[:3]
            ixy, ixz, iyz = vals[3:] if len(vals) == 6 else (0.0, 0.0, 0.0)
            return ((ixx, ixy, ixz), (ixy, iyy, iyz), (ixz, iyz, izz))
        raise ModelError(
            f"{where}: inertia must be a 3x3 matrix, [ixx, iyy, izz] or "
            f"[ixx, iyy, izz, ixy, ixz, iyz], got {_clip(inertia)}",
            source,
        )

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
    ) -> _RawJoint:
        where = f"joint {name!r}"
        if placement is None:
            placement = Transform.from_xyz_rpy(
                self._vec(xyz, where, source), self._vec(rpy, where, source)
            )
        return _RawJoint(
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
            from symgen.loops.cuts import minimal_cuts  # numeric loop analysis: import on use

            model = minimal_cuts(model)
        return model

    def _check_values(
        self, tree: list[Joint], loops: list[Joint], gravity: Vec3, values: dict[str, float]
    ) -> None:
        """Every value of a joint, frame, coupling and the gravity is a finite real number at
        the parameters' defaults (bodies: :func:`check_body`)."""
        check_values([("gravity", x) for x in gravity], values, f"model {self.name!r}",
                     self.source)
        for kind, joints in (("joint", tree), ("loop joint", loops)):
            for j in joints:
                check_values(joint_values(j), values, f"{kind} {j.name!r}", j.source)
        for f in self._frames:
            items = [("origin", x) for row in f.placement.rotation for x in row]
            items += [("origin", x) for x in f.placement.translation]
            check_values(items, values, f"frame {f.name!r}", f.source)
        for c in self._couplings:
            check_values([("ratio", c.ratio), ("offset", c.offset)], values,
                         f"coupling of joint {c.joint!r}", c.source)

    def _check_defaults(self) -> None:
        """Every parameter default is finite (after the values using one are checked, which
        name the element)."""
        for p in self._parameters.values():
            if not math.isfinite(p.default):
                raise ModelError(
                    f"parameter {p.name!r}: default {p.default} is not a finite number",
                    self._parameter_sources.get(p.name),
                )

    def _check_lumped_bodies(
        self, model: Model, bodies: dict[str, Body], values: dict[str, float]
    ) -> None:
        """Inertia checks on the bodies that carry dynamics, after fixed-joint lumping (a
        placeholder inertia on a merged massless link is harmless); an error on a lumped body
        names the links merged into it."""
        for body in model.bodies:
            try:
                check_model_bodies([body], values)
            except ModelError as exc:
                merged = [f.name for f in model.frames if f.body == body.name and f.name in bodies]
                if not merged:
                    raise
                message = str(exc)
                if body.source is not None:
                    message = message.removeprefix(f"{body.source}: ")
                raise ModelError(
                    f"{message}, after merging the fixed links {', '.join(map(repr, merged))} "
                    f"into it",
                    body.source,
                ) from None

    def _check_names(self) -> None:
        """Names are strings of at most MAX_NAME_LENGTH characters; body and frame names are
        unique together, joint names among joints."""
        named = [("model", self.name, self.source), ("root body", self.root, self.source)]
        named += [("body", b.name, b.source) for b in self._bodies]
        named += [("frame", f.name, f.source) for f in self._frames]
        named += [("joint", j.name, j.source) for j in self._joints + self._loop_joints]
        named += [("parameter", p, self._parameter_sources.get(p)) for p in self._parameters]
        named += [("force element", e.name, e.source) for e in self._forces]
        for kind, name, source in named:
            if not isinstance(name, str):
                raise ModelError(f"{kind} name {_clip(name)} is not a string", source)
            if len(name) > MAX_NAME_LENGTH:
                raise ModelError(
                    f"{kind} name {_clip(name)} is too long ({len(name)} characters, at most "
                    f"{MAX_NAME_LENGTH})",
                    source,
                )
        seen: dict[str, str] = {self.root: "body"}
        for kind, items in (("body", self._bodies), ("frame", self._frames)):
            for item in items:
                if item.name in seen:
                    raise ModelError(
                        f"duplicate name {item.name!r}: {kind} has the same name as a "
                        f"{seen[item.name]}",
                        item.source,
                    )
                seen[item.name] = kind
        joint_names: set[str] = set()
        for j in self._joints + self._loop_joints:
            if j.name in joint_names:
                raise ModelError(f"duplicate joint name {j.name!r}", j.source)
            joint_names.add(j.name)

    def _typed(self, raw: _RawJoint, loop: bool) -> Joint:
        kind = "loop joint" if loop else "joint"
        jtype = JointType.parse(raw.type)
        if jtype is None:
            known = ", ".join(t.value for t in JointType)
            raise ModelError(
                f"{kind} {raw.name!r}: unknown joint type {raw.type!r} (known: {known})", raw.source
            )
        joint = Joint(
            raw.name,
            jtype,
            raw.parent,
            raw.child,
            raw.placement,
            raw.axis,
            raw.axis2,
            raw.pitch,
            raw.limits,
            raw.child_placement,
            raw.source,
            cut=raw.cut,
        )
        armature = armature_values(raw.armature, joint, raw.source, kind)
        if not armature:
            return joint
        joint = replace(joint, armature=armature)
        check_armature(joint, {p.name: p.default for p in self._parameters.values()})
        return joint

    def _check_references(self, joints: list[Joint], bodies: dict[str, Body]) -> None:
        known = set(bodies) | {self.root}
        for j in joints:
            for role, name in (("parent", j.parent), ("child", j.child)):
                if name not in known:
                    raise ModelError(
                        f"joint {j.name!r}: {role} body {name!r} does not exist", j.source
                    )
            if j.parent == j.child:
                raise ModelError(
                    f"joint {j.name!r}: connects body {j.parent!r} to itself", j.source
                )
        for f in self._frames:
            if f.body not in known:
                raise ModelError(f"frame {f.name!r}: body {f.body!r} does not exist", f.source)

    def _tree_order(self, tree: list[Joint], bodies: dict[str, Body]) -> list[Joint]:
        """Joints in depth-first order from the root; cycles and orphans are errors."""
        parent_joint: dict[str, Joint] = {}
        for j in tree:
            if j.child == self.root:
                raise ModelError(
                    f"joint {j.name!r}: makes the root {self.root!r} a child, closing a cycle "
                    f"(declare it as a loop joint)",
                    j.source,
                )
            if j.child in parent_joint:
                raise ModelError(
                    f"joint {j.name!r}: body {j.child!r} already has parent joint "
                    f"{parent_joint[j.child].name!r}; this closes a cycle that is not declared "
                    f"as a loop joint",
                    j.source,
                )
            parent_joint[j.child] = j
        children: dict[str, list[Joint]] = {}
        for j in tree:
            children.setdefault(j.parent, []).append(j)
        order: list[Joint] = []
        stack = list(reversed(children.get(self.root, [])))
        while stack:
            j = stack.pop()
            order.append(j)
            stack.extend(reversed(children.get(j.child, [])))
        reached = {self.root} | {j.child for j in order}
        for j in tree:
            if j.child not in reached:
                raise ModelError(
                    f"joint {j.name!r}: belongs to a cycle that is not declared as a loop joint "
                    f"(body {j.child!r} cannot be reached from the root {self.root!r})",
                    j.source,
                )
        for b in self._bodies:
            if b.name not in reached:
                raise ModelError(
                    f"body {b.name!r}: unreachable from the root {self.root!r} "
                    f"(no joint connects it to the tree)",
                    b.source,
                )
        return order

    def _check_couplings(self, tree: list[Joint], loops: list[Joint]) -> None:
        """Couplings join two distinct movable 1-DOF tree joints, each joint is driven by at
        most one coupling, and no chain of couplings loops back on itself."""
        by_name = {j.name: j for j in tree}
        loop_names = {j.name for j in loops}
        master_of: dict[str, str] = {}
        for c in self._couplings:
            where = f"coupling of joint {c.joint!r}"
            for role, name in (("joint", c.joint), ("master joint", c.master)):
                if name in loop_names:
                    raise ModelError(
                        f"{where}: {role} {name!r} is a loop joint (couplings join tree joints)",
                        c.source,
                    )
                if name not in by_name:
                    raise ModelError(f"{where}: {role} {name!r} does not exist", c.source)
                if by_name[name].nv != 1:
                    raise ModelError(f"{where}: {role} {name!r} is not a 1-DOF joint", c.source)
            if c.joint == c.master:
                raise ModelError(f"{where}: a joint cannot be coupled to itself", c.source)
            if c.joint in master_of:
                raise ModelError(
                    f"{where}: joint already coupled to {master_of[c.joint]!r}", c.source
                )
            master_of[c.joint] = c.master
        for c in self._couplings:
            seen, name = {c.joint}, c.master
            while name in master_of:
                if name in seen:
                    raise ModelError(
                        f"coupling of joint {c.joint!r}: couplings form a cycle through "
                        f"joint {name!r}",
                        c.source,
                    )
                seen.add(name)
                name = master_of[name]


def _normalized(j: Joint) -> Joint:
    """Axes scaled to unit length; a numeric axis is first divided by its largest entry, so
    that huge (1e200) or tiny entries neither overflow nor underflow. An axis the joint does
    not use is left as given."""

    def unit(a: Vec3) -> Vec3:
        if not any(is_symbolic(x) for x in a):
            u, _ = unit_vector(np.array([float(x) for x in a]))
            return a if u is None else vec3([float(x) for x in u])
        # expanded, so that sympy does not turn sqrt(e**2) into Abs(e) unless a is e times
        # a constant vector
        n = sqrt(sympy.expand(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]))
        return vec3([x / n for x in a])

    if not j.type.uses_axis:
        return j
    axis2 = unit(j.axis2) if j.type is JointType.UNIVERSAL else j.axis2
    return replace(j, axis=unit(j.axis), axis2=axis2)


def _merge_fixed(
    b: ModelBuilder,
    order: list[Joint],
    tree: list[Joint],
    loops: list[Joint],
    bodies: dict[str, Body],
    gravity: Vec3,
    couplings: list[Coupling],
    locks: tuple[LockedJoint, ...] = (),
) -> Model:
    """Merge every body attached by a fixed joint into its nearest moving ancestor (or the
    root), keeping it as a named frame; re-attach frames, joints and loop joints."""
    by_name = {j.name: j for j in tree}
    order = [by_name[j.name] for j in order]
    owner: dict[str, tuple[str, Transform]] = {b.root: (b.root, Transform())}
    moving: list[Joint] = []
    extra_frames: list[Frame] = []
    # links something hangs from (a joint, a loop joint or a frame): not ends of the tree
    carrying = {j.parent for j in tree} | {f.body for f in b._frames}
    carrying |= {j.parent for j in loops} | {j.child for j in loops}
    for j in order:  # parents come before children, so owner[j.parent] is known
        host, to_host = owner[j.parent]
        if j.type is JointType.FIXED:
            pose = to_host.compose(j.placement)
            owner[j.child] = (host, pose)
            extra_frames.append(
                Frame(j.child, host, pose, bodies[j.child].source, link=True,
                      leaf=j.child not in carrying)
            )
        else:
            owner[j.child] = (j.child, Transform())
            moving.append(replace(j, parent=host, placement=to_host.compose(j.placement)))
    merged_bodies = []
    for j in moving:
        parts = [
            (bodies[name], pose)
            for name, (host, pose) in owner.items()
            if host == j.child and name in bodies
        ]
        body = bodies[j.child]
        if len(parts) > 1:
            mass, com, inertia = lump(parts)
            body = Body(body.name, mass, com, inertia, body.source)
        merged_bodies.append(body)
    frames = extra_frames + [
        replace(f, body=owner[f.body][0], placement=owner[f.body][1].compose(f.placement))
        for f in b._frames
    ]
    new_loops = []
    for j in loops:
        ph, pp = owner[j.parent]
        ch, cp = owner[j.child]
        new_loops.append(
            replace(
                j,
                parent=ph,
                child=ch,
                placement=pp.compose(j.placement),
                child_placement=cp.compose(j.child_placement),
            )
        )
    index = {j.child: i for i, j in enumerate(moving)}
    parents = tuple(index.get(j.parent, -1) for j in moving)
    forces = attach_force_elements(b._forces, owner, [lock.name for lock in locks])
    return Model(
        name=b.name,
        root=b.root,
        bodies=tuple(merged_bodies),
        joints=tuple(moving),
        parents=parents,
        frames=tuple(frames),
        loop_joints=tuple(new_loops),
        couplings=tuple(couplings),
        locks=locks,
        force_elements=forces,
        parameters=tuple(b._parameters.values()),
        gravity=gravity,
        plane=b.plane,
        source=b.source,
    )


def _check_moving_leaves(model: Model, values: dict[str, float]) -> None:
    """A moving body with no children and no loop joint must have mass, else M is singular;
    so must any moving subtree unless its joint's armature fills the diagonal of M."""
    in_loops = {j.parent for j in model.loop_joints} | {j.child for j in model.loop_joints}

    def has_armature(i: int) -> bool:
        joint = model.joints[i]
        return bool(joint.armature) and all(evaluate(x, values) > 0 for x in joint.armature)

    hint = "lock the joint or give it an armature"
    subtree_mass = [evaluate(b.mass, values) for b in model.bodies]
    subtree_loops = [b.name in in_loops for b in model.bodies]  # a loop closes below
    for i in reversed(range(model.nbodies)):
        if model.parents[i] >= 0:
            subtree_mass[model.parents[i]] += subtree_mass[i]
            subtree_loops[model.parents[i]] |= subtree_loops[i]
    for i, body in enumerate(model.bodies):
        if model.children(i) or body.name in in_loops or has_armature(i):
            continue
        if evaluate(body.mass, values) == 0.0:
            raise ModelError(
                f"body {body.name!r}: zero mass on a leaf body moved by joint "
                f"{model.joints[i].name!r} (its mass matrix would be singular; {hint})",
                body.source,
            )
    for i, body in enumerate(model.bodies):
        if subtree_mass[i] == 0.0 and not subtree_loops[i] and not has_armature(i):
            raise ModelError(
                f"body {body.name!r}: joint {model.joints[i].name!r} moves only bodies without "
                f"mass (its mass matrix would be singular; {hint})",
                body.source,
            )
