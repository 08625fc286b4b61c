"""The validated, tree-ordered multibody model every later stage consumes."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import sympy

from symgen.errors import ModelError, SourceRef
from symgen.model.couplings import ResolvedCoupling, coupling_matrices, resolve_couplings
from symgen.model.elements import Body, Coupling, ForceElement, Frame, Joint, LockedJoint
from symgen.model.force_elements import check_force_signs
from symgen.model.reduction import check_armature
from symgen.model.scalars import (
    Parameter,
    Scalar,
    Vec3,
    evaluate,
    free_parameter_names,
    is_symbolic,
    parameter_symbol,
)
from symgen.model.source_data import FileCoordinates, Keyframe, Motor
from symgen.model.validation import check_model_bodies


@dataclass(frozen=True)
class Model:
    """A multibody model after validation and fixed-joint merging.

    ``bodies[i]`` is the moving body driven by ``joints[i]``; bodies are numbered base to tip
    (``parents[i] < i``, ``-1`` for the root). The root body (``root``) is fixed in the world
    and carries no dynamics. ``locks`` lists the joints of the description held fixed
    (reduced model); they are neither in ``joints`` nor in q and v. ``force_elements``: the
    springs, dampers and joint actuators (consumed by the natural-coordinate formulation;
    the tree kernels take joint torques as inputs instead). ``motors`` name the actuated
    joints; ``keyframes``, ``file_coordinates`` and ``notes`` (what the reader left out) are
    metadata of the file (:mod:`symgen.model.source_data`). Build one with
    :class:`symgen.ModelBuilder` or a reader (:func:`symgen.load`); do not construct it
    directly.
    """

    name: str
    root: str
    bodies: tuple[Body, ...]
    joints: tuple[Joint, ...]
    parents: tuple[int, ...]
    frames: tuple[Frame, ...] = ()
    loop_joints: tuple[Joint, ...] = ()
    couplings: tuple[Coupling, ...] = ()
    parameters: tuple[Parameter, ...] = ()
    gravity: Vec3 = (0.0, 0.0, -9.81)
    plane: str | None = None
    source: SourceRef | None = field(default=None, compare=False)
    locks: tuple[LockedJoint, ...] = ()
    force_elements: tuple[ForceElement, ...] = ()
    motors: tuple[Motor, ...] = ()
    keyframes: tuple[Keyframe, ...] = field(default=(), compare=False)
    file_coordinates: FileCoordinates | None = field(default=None, compare=False)
    notes: tuple[str, ...] = field(default=(), compare=False)

    # ----------------------------------------------------------------- dimensions
    @property
    def nq(self) -> int:
        """Length of the configuration vector q (the independent joints: a coupled joint
        has no coordinate of its own, :mod:`symgen.model.couplings`)."""
        return sum(j.nq for j in self.independent_joints)

    @property
    def nv(self) -> int:
        """Length of the velocity vector v (and of a, tau): the independent joints."""
        return sum(j.nv for j in self.independent_joints)

    @property
    def tree_nq(self) -> int:
        """Configuration coordinates of every tree joint, coupled ones included."""
        return sum(j.nq for j in self.joints)

    @property
    def tree_nv(self) -> int:
        """Velocity coordinates of every tree joint, coupled ones included."""
        return sum(j.nv for j in self.joints)

    @cached_property
    def coupled(self) -> dict[str, ResolvedCoupling]:
        """Each coupled joint's map onto its independent master (chains composed)."""
        return resolve_couplings(self.couplings)

    @cached_property
    def independent_joints(self) -> tuple[Joint, ...]:
        """The tree joints that own coordinates of q and v (all but the coupled ones)."""
        return tuple(j for j in self.joints if j.name not in self.coupled)

    @property
    def neutral_configuration(self) -> tuple[float, ...]:
        """q at the neutral configuration: zeros, and identity quaternions (0, 0, 0, 1)."""
        return tuple(x for j in self.independent_joints for x in j.type.layout.neutral)

    @property
    def armature(self) -> list[Scalar]:
        """Armature of every velocity coordinate (length nv, zeros where none). A coupled
        joint's armature J is reflected on its master's coordinate as ratio²·J (its rate is
        ratio·v[master])."""
        out = [x for j in self.independent_joints for x in j.armature_values]
        for c in self.coupled.values():
            joint = self.joints[self.joint_names.index(c.joint)]
            if joint.armature:
                i = self.v_slices[c.master].start
                out[i] = out[i] + c.ratio**2 * joint.armature_values[0]
        return out

    @property
    def has_armature(self) -> bool:
        return any(j.armature for j in self.joints)

    @property
    def locked_joint_names(self) -> list[str]:
        """Joints of the description held fixed in this (reduced) model."""
        return [lock.name for lock in self.locks]

    @property
    def nbodies(self) -> int:
        """Number of moving bodies (the root is not counted)."""
        return len(self.bodies)

    @property
    def joint_names(self) -> list[str]:
        """Movable tree joints in model order (coupled ones included; the coordinates of q
        and v are those of :attr:`independent_joints`, in this order)."""
        return [j.name for j in self.joints]

    @property
    def body_names(self) -> list[str]:
        return [b.name for b in self.bodies]

    @property
    def frame_names(self) -> list[str]:
        return [f.name for f in self.frames]

    @cached_property
    def q_slices(self) -> dict[str, slice]:
        """Slice of q belonging to each independent joint (coupled joints have none)."""
        return _slices(self.independent_joints, "nq")

    @cached_property
    def v_slices(self) -> dict[str, slice]:
        """Slice of v (and of a, tau) belonging to each independent joint."""
        return _slices(self.independent_joints, "nv")

    @cached_property
    def tree_q_slices(self) -> dict[str, slice]:
        """Slice of each tree joint in the tree configuration (every joint in model order,
        coupled ones included: ``q_tree = P q + q0``, :meth:`coupling_matrices`)."""
        return _slices(self.joints, "nq")

    @cached_property
    def tree_v_slices(self) -> dict[str, slice]:
        """Slice of each tree joint in the tree velocity ``v_tree = T v``."""
        return _slices(self.joints, "nv")

    def coupling_matrices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(P, q0, T): ``q_tree = P q + q0``, ``v_tree = T v`` (numeric models only; see
        :func:`symgen.model.couplings.coupling_matrices`)."""
        return coupling_matrices(self.joints, self.coupled, self.q_slices, self.v_slices)

    def without_couplings(self) -> Model:
        """A copy whose couplings are dropped: every tree joint has its own coordinates (as
        Pinocchio's ``mimic=False``). Joints locked through a coupling stay locked."""
        return dataclasses.replace(self, couplings=()) if self.couplings else self

    def children(self, i: int) -> list[int]:
        return [k for k, p in enumerate(self.parents) if p == i]

    def body_index(self, name: str) -> int:
        for i, b in enumerate(self.bodies):
            if b.name == name:
                return i
        if name == self.root:
            return -1
        raise KeyError(f"model {self.name!r} has no body {name!r}")

    def frame(self, name: str) -> Frame:
        for f in self.frames:
            if f.name == name:
                return f
        raise KeyError(f"model {self.name!r} has no frame {name!r}")

    # ----------------------------------------------------------------- parameters
    @property
    def parameter_names(self) -> list[str]:
        return [p.name for p in self.parameters]

    @property
    def is_numeric(self) -> bool:
        """True when no value depends on a runtime parameter."""
        return not self.parameters

    def parameter_values(self, overrides: Mapping[str, float] | None = None) -> dict[str, float]:
        """Defaults of every parameter, updated with ``overrides`` (unknown names rejected)."""
        values = {p.name: float(p.default) for p in self.parameters}
        for key, value in (overrides or {}).items():
            if key not in values:
                known = ", ".join(values) or "none"
                raise ModelError(f"unknown parameter {key!r} (model parameters: {known})")
            values[key] = float(value)
        return values

    def resolve(self, overrides: Mapping[str, float] | None = None) -> Model:
        """A numeric copy with every parameter replaced by its value (default or override)."""
        if not self.parameters and not overrides:
            return self
        values = self.parameter_values(overrides)
        key = tuple(sorted(values.items()))
        cached = self._resolved.get(key)
        if cached is None:
            resolved = _map_scalars(self, lambda x: evaluate(x, values))
            check_model_bodies(resolved.bodies, {})  # e.g. a negative payload mass
            for joint in resolved.joints:
                check_armature(joint, {})
            check_force_signs(resolved.force_elements, {})  # e.g. a negative stiffness
            cached = self._resolved[key] = dataclasses.replace(resolved, parameters=())
        return cached

    def keep_parameters(self, names: Sequence[str]) -> Model:
        """A copy in which only the parameters ``names`` stay runtime parameters; every other
        parameter is replaced by its default value (unknown names rejected)."""
        known = {p.name: p for p in self.parameters}
        unknown = [n for n in names if n not in known]
        if unknown:
            listed = ", ".join(known) or "none"
            raise ModelError(f"unknown parameter {unknown[0]!r} (model parameters: {listed})")
        baked = {
            parameter_symbol(p.name): p.default for p in self.parameters if p.name not in names
        }
        if not baked:
            return self

        def bake(x):
            if not is_symbolic(x):
                return x
            value = sympy.sympify(x.xreplace(baked))  # a bare "$name" becomes a float
            return float(value) if value.is_number else value

        kept = tuple(p for p in self.parameters if p.name in names)
        return dataclasses.replace(_map_scalars(self, bake), parameters=kept)

    @cached_property
    def _resolved(self) -> dict[tuple, Model]:
        """Numeric copies already made by :meth:`resolve`, by parameter values."""
        return {}

    def used_parameters(self) -> set[str]:
        """Names of parameters that some value of the model depends on."""
        found: set[str] = set()
        _map_scalars(self, lambda x: found.update(free_parameter_names(x)) or x)
        return found


def _slices(joints: tuple[Joint, ...], attr: str) -> dict[str, slice]:
    out, start = {}, 0
    for j in joints:
        n = getattr(j, attr)
        out[j.name] = slice(start, start + n)
        start += n
    return out


def _map_scalars(obj, fn):
    """Apply ``fn`` to every float / sympy value inside dataclasses and tuples."""
    if isinstance(obj, bool | int | str | SourceRef) or obj is None:
        return obj  # indices (parents), names, enums
    if isinstance(obj, float | sympy.Basic):
        return fn(obj if is_symbolic(obj) else float(obj))
    if isinstance(obj, tuple):
        return tuple(_map_scalars(x, fn) for x in obj)
    if isinstance(obj, Parameter):
        return obj
    if dataclasses.is_dataclass(obj):
        changes = {
            f.name: _map_scalars(getattr(obj, f.name), fn)
            for f in dataclasses.fields(obj)
            if f.name != "source"
        }
        return dataclasses.replace(obj, **changes)
    return obj
