"""The structural checks of :meth:`~symgen.io.builder.ModelBuilder.build` (names,
references, the tree order, couplings, values at the parameters' defaults, the lumped bodies)
and the merging of fixed joints into their parents."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import sympy

from symgen.errors import ModelError, SourceRef
from symgen.io.builder_values import clip as _clip
from symgen.model.elements import (
    Body,
    Coupling,
    ForceElement,
    Frame,
    Joint,
    JointType,
    Limits,
    LockedJoint,
)
from symgen.model.force_elements import (
    attach_force_elements,
)
from symgen.model.lumping import lump
from symgen.model.model import Model
from symgen.model.reduction import armature_values, check_armature
from symgen.model.scalars import (
    Parameter,
    Scalar,
    Vec3,
    evaluate,
    is_symbolic,
    sqrt,
)
from symgen.model.transform import Transform, vec3
from symgen.model.validation import (
    check_model_bodies,
    check_values,
    joint_values,
    unit_vector,
)

#: Longest accepted name of a model, body, joint, frame or parameter (real files use < 100;
#: a name is repeated in every generated kernel's identifiers and comments).
MAX_NAME_LENGTH = 256


@dataclass
class RawJoint:
    """A joint as declared, before its type is parsed and its values checked."""

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


class BuilderChecks:
    """The checks of :meth:`ModelBuilder.build`, on the builder's declarations."""

    name: str
    root: str
    source: SourceRef | None
    _parameters: dict[str, Parameter]
    _parameter_sources: dict[str, SourceRef | None]
    _bodies: list[Body]
    _joints: list
    _loop_joints: list
    _frames: list[Frame]
    _couplings: list[Coupling]
    _forces: list[ForceElement]

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

    def _typed(self, raw: RawJoint, loop: bool) -> Joint:
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

    if not j.type.layout.uses_axis:
        return j
    axis2 = unit(j.axis2) if j.type is JointType.UNIVERSAL else j.axis2
    return replace(j, axis=unit(j.axis), axis2=axis2)


def _merge_fixed(
    b: BuilderChecks,
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
    hanging: dict[str, tuple[str, ...]] = {}  # link -> the moving joints hanging from it
    for j in tree:
        if j.type is not JointType.FIXED:
            hanging[j.parent] = (*hanging.get(j.parent, ()), j.name)
    for j in order:  # parents come before children, so owner[j.parent] is known
        host, to_host = owner[j.parent]
        if j.type is JointType.FIXED:
            pose = to_host.compose(j.placement)
            owner[j.child] = (host, pose)
            extra_frames.append(
                Frame(j.child, host, pose, bodies[j.child].source, link=True,
                      leaf=j.child not in carrying, parent=j.parent,
                      joints=hanging.get(j.child, ()))
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
        replace(f, body=owner[f.body][0], placement=owner[f.body][1].compose(f.placement),
                parent=f.body)
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
