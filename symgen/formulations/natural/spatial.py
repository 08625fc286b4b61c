"""Automatic natural-coordinate modelling of spatial mechanisms (García de Jalón & Bayo
1994, §2.2.3): basic points and unit vectors, shared at joints where the joint allows.

- one basic point per pin, shared by every body that meets there (ch. 2): revolute,
  spherical and universal joints that touch a common body (the ground counts) at one
  location are one pin (:mod:`.pins`, union-find, independent of the joint order); pins
  that only coincide in the assembled drawing, sharing no body, stay apart. Revolute joints
  of one pin that share a body and have parallel or antiparallel axes also share one axis
  vector (the line is fixed on the common body; an antiparallel joint reads its angle with
  the opposite sign).
- revolute: the joint point and the axis vector are shared (no equation); spherical: the
  point is shared; universal: the point is shared, each body carries its own axis and
  a₁·a₂ keeps its assembled value (eq. 2.59); cylindrical: the axis vector is shared and
  the child's point stays on the axis, (r_C − r_P)·w₁ = (r_C − r_P)·w₂ = 0 with w₁, w₂ ⟂ u
  fixed on the parent; prismatic: as cylindrical plus w₁(parent)·w₂(child) = 0, which
  stops the rotation about the axis (a sine-like measure, well conditioned at the assembled
  angle); planar: the normal is shared and (r_C − r_P)·n = 0.
- every body is completed to a rigid element of two points i, j and two unit vectors u, v
  with (r_j − r_i, u, v) independent (adding its centre of mass, body-fixed points or its
  frame axes where its joints give too few), with the six equations (2.31)-(2.36); every
  other point or vector of the body is a constant linear combination of the base (3 linear
  equations each, eq. 2.47). A unit vector gets its norm equation once, and none when some
  body fixes it linearly; the mass matrix of each body is eq. 4.61 on its base; gravity
  Q = m C_Gᵀ g (eq. 4.129-4.130); entities on the ground are constants.

Assembly poses come from the tree formulation's forward kinematics; ``coordinates_at`` and
``velocities_at`` convert a relative-coordinate state of the spanning tree with the same
programs (conversion helpers for users and tests).
The model's zero configuration must be assembled (loops closed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy

from symgen.errors import SymgenError
from symgen.formulations.natural.model import (
    JointCoordinate,
    NaturalModel,
    assembly_poses,
    check_inertia,
    coordinate_reader,
    neutral_joint_configuration,
    tree_jacobian,
    tree_poses,
)
from symgen.formulations.natural.pins import RELATIVE_TOLERANCE, axis_groups, model_size, pin_groups
from symgen.joints import joint_kind
from symgen.model import Model


@dataclass
class _Entity:
    """A basic point (kind "p") or unit vector ("u") fixed on body ``owner`` (-1: ground)."""

    name: str
    kind: str
    owner: int
    local: np.ndarray
    world: np.ndarray
    members: list[int] = field(default_factory=list)

    @property
    def fixed(self) -> bool:
        return self.owner < 0


class SpatialModeller:
    """Builds the :class:`NaturalModel` of a spatial ``model`` (module docstring). Each joint
    type adds its own entities and equations (:class:`symgen.joints.base.JointKind`,
    ``natural_*``) through :meth:`shared`, :meth:`own`, :meth:`on_body` and :meth:`equation`."""

    def __init__(self, model: Model) -> None:
        self.model = model.resolve()
        self.poses = assembly_poses(self.model)
        self.entities: list[_Entity] = []
        self.body_entities: dict[int, list[int]] = {i: [] for i in range(self.model.nbodies)}
        self.constraints: list[sympy.Expr] = []
        self.constraint_names: list[str] = []
        self.joint_entities: dict[str, dict] = {}
        # pins: joint name -> group, group -> owner (-1: ground) and its entity once made
        self._pin_of: dict[str, int] = {}
        self._axis_of: dict[str, int] = {}
        self._group_owner: dict[tuple[str, int], int] = {}
        self._group_entity: dict[tuple[str, int], int] = {}

    # ------------------------------------------------------------------ entities
    def _frame(self, body: int) -> tuple[np.ndarray, np.ndarray]:
        t = self.poses[self.model.root if body < 0 else self.model.body_names[body]]
        return t[:3, :3], t[:3, 3]

    def _add(self, name: str, kind: str, owner: int, world: np.ndarray) -> int:
        rot, origin = self._frame(owner)
        local = rot.T @ (world - origin) if kind == "p" else rot.T @ world
        self.entities.append(_Entity(name, kind, owner, local, np.asarray(world, float)))
        return len(self.entities) - 1

    def _attach(self, entity: int, body: int) -> None:
        if body >= 0 and entity not in self.body_entities[body]:
            self.body_entities[body].append(entity)
            self.entities[entity].members.append(body)

    def shared(self, name: str, kind: str, parent: int, child: int, world) -> int:
        """An entity shared by the joint's two bodies."""
        e = self._add(name, kind, parent if parent < 0 else child, world)
        self._attach(e, parent)
        self._attach(e, child)
        return e

    def _grouped(self, key: tuple[str, int], name: str, kind: str, parent: int, child: int,
                 world) -> int:
        """The entity of pin group ``key``, made at the first joint of the group to ask."""
        if key not in self._group_entity:
            self._group_entity[key] = self._add(name, kind, self._group_owner[key], world)
        e = self._group_entity[key]
        self._attach(e, parent)
        self._attach(e, child)
        return e

    def pin(self, name: str, parent: int, child: int, world) -> int:
        """The basic point of joint ``name``'s pin, shared by every body that meets there."""
        return self._grouped(("p", self._pin_of[name]), name, "p", parent, child, world)

    def pin_axis(self, name: str, parent: int, child: int, axis) -> tuple[int, float]:
        """The axis vector of revolute joint ``name``, shared with the revolute joints of
        its pin along the same line, and the joint axis's sign relative to it."""
        e = self._grouped(("u", self._axis_of[name]), f"{name}.axis", "u", parent, child, axis)
        return e, 1.0 if float(self.entities[e].world @ axis) > 0.0 else -1.0

    def _group_pins(self, placed: list) -> None:
        """Pin groups (:func:`.pins.pin_groups`, within 1e-9 of the model's size) and axis
        groups of ``placed`` joints (joint, parent, child, point, axis); a group's entities
        belong to the ground when one of its joints does, else to its first joint's child."""
        pins = [x for x in placed if joint_kind(x[0].type).natural_pin]
        bodies = [(x[1], x[2]) for x in pins]
        where = [x[3] for x in pins]
        size = model_size([*where, *(self._frame(b)[1] for b in range(self.model.nbodies))])
        first = pin_groups(bodies, where, RELATIVE_TOLERANCE * size)
        lines = [i for i, x in enumerate(pins) if joint_kind(x[0].type).natural_pin == "axis"]
        line_first = axis_groups([bodies[i] for i in lines], [pins[i][4] for i in lines],
                                 [first[i] for i in lines])
        for tag, members, groups in (("p", range(len(pins)), first),
                                     ("u", lines, [lines[g] for g in line_first])):
            for i, g in zip(members, groups, strict=True):
                key = (tag, g)
                self._group_owner.setdefault(key, bodies[g][1])
                if -1 in bodies[i]:
                    self._group_owner[key] = -1
                (self._pin_of if tag == "p" else self._axis_of)[pins[i][0].name] = g

    def own(self, name: str, kind: str, body: int, world) -> int:
        """An entity fixed on ``body`` alone."""
        e = self._add(name, kind, body, world)
        self._attach(e, body)
        return e

    def collect(self) -> None:
        m = self.model
        placed = []
        for joint in [*m.joints, *m.loop_joints]:
            if not joint_kind(joint.type).natural_spatial:
                raise SymgenError(f"joint {joint.name!r}: type {joint.type.value!r} is not "
                                  "supported by natural coordinates")
            parent, child = m.body_index(joint.parent), m.body_index(joint.child)
            prot, porigin = self._frame(parent)
            jrot = prot @ np.asarray(joint.placement.rotation, float)
            point = porigin + prot @ np.asarray(joint.placement.translation, float)
            axis = jrot @ np.asarray(joint.axis, float)
            placed.append((joint, parent, child, point, axis / np.linalg.norm(axis), jrot))
        self._group_pins(placed)
        for joint, parent, child, point, axis, jrot in placed:
            info: dict = {"type": joint.type, "parent": parent, "child": child}
            joint_kind(joint.type).natural_entities(self, joint, info, point, axis, jrot)
            self.joint_entities[joint.name] = info
        for b in range(m.nbodies):
            self._complete(b)

    def _complete(self, b: int) -> None:
        """Add points / frame axes until the body has a well-conditioned base."""
        body = self.model.bodies[b]
        rot, origin = self._frame(b)
        com = origin + rot @ np.asarray(body.com, float)
        extra_points = [com, origin, origin + rot[:, 0] * 0.1, origin + rot[:, 1] * 0.1]
        extra_vectors = [rot[:, 0], rot[:, 1], rot[:, 2]]
        while self._base(b) is None:
            if not self._base_points(b):
                candidate = next(p for p in extra_points if all(
                    np.linalg.norm(p - self.entities[e].world) > 1e-6
                    for e in self.body_entities[b] if self.entities[e].kind == "p"))
                self.own(f"{body.name}/p{len(self.body_entities[b])}", "p", b, candidate)
                continue
            have = [self.entities[e].world for e in self.body_entities[b]
                    if self.entities[e].kind == "u"]
            fresh = [w for w in extra_vectors
                     if all(np.linalg.norm(np.cross(w, h)) > 1e-6 for h in have)]
            if not fresh:
                raise SymgenError(f"body {body.name!r}: no well-conditioned set of two points "
                                  "and two unit vectors for natural coordinates")
            best = max(fresh, key=lambda w: self._improvement(b, w))
            self.own(f"{body.name}/u{len(self.body_entities[b])}", "u", b, best)

    def _base_points(self, b: int) -> tuple[int, int] | None:
        pts = [e for e in self.body_entities[b] if self.entities[e].kind == "p"]
        for k in pts[1:]:
            if np.linalg.norm(self.entities[k].world - self.entities[pts[0]].world) > 1e-6:
                return pts[0], k
        return None

    def _base(self, b: int) -> tuple[int, int, int, int] | None:
        pair = self._base_points(b)
        if pair is None:
            return None
        i, j = pair
        rij = self.entities[j].world - self.entities[i].world
        rij = rij / np.linalg.norm(rij)
        vecs = [e for e in self.body_entities[b] if self.entities[e].kind == "u"]
        for a in range(len(vecs)):
            for c in range(a + 1, len(vecs)):
                u, v = self.entities[vecs[a]].world, self.entities[vecs[c]].world
                if abs(np.linalg.det(np.column_stack([rij, u, v]))) > 0.2:
                    return i, j, vecs[a], vecs[c]
        return None

    def _improvement(self, b: int, w: np.ndarray) -> float:
        pair = self._base_points(b)
        i, j = pair  # type: ignore[misc]
        rij = self.entities[j].world - self.entities[i].world
        rij = rij / np.linalg.norm(rij)
        vecs = [self.entities[e].world for e in self.body_entities[b]
                if self.entities[e].kind == "u"]
        if not vecs:
            return float(np.linalg.norm(np.cross(rij, w)))
        return max(abs(float(np.linalg.det(np.column_stack([rij, u, w])))) for u in vecs)

    # ------------------------------------------------------------------ equations
    def build(self) -> NaturalModel:
        self.collect()
        names: list[str] = []
        self.symbol_of: dict[int, sympy.Matrix] = {}
        self.slots: dict[int, list[int]] = {}
        k = 0
        for index, e in enumerate(self.entities):
            if e.fixed:
                self.symbol_of[index] = sympy.Matrix([float(x) for x in e.world])
                continue
            names += [f"{e.name}.{c}" for c in "xyz"]
            self.symbol_of[index] = sympy.Matrix(
                [sympy.Symbol(f"q{k + c}", real=True) for c in range(3)])
            self.slots[index] = [k, k + 1, k + 2]
            k += 3
        n = len(names)
        M, Q = np.zeros((n, n)), np.zeros(n)
        g = np.asarray(self.model.gravity, float)
        linear_vectors: set[int] = set()
        self.bases: dict[int, tuple[int, int, int, int]] = {}
        for b, body in enumerate(self.model.bodies):
            base = self._base(b)
            assert base is not None
            self.bases[b] = base
            i, j, u, v = base
            r = self.symbol_of
            rij = r[j] - r[i]
            w = [self.entities[x].world for x in base]
            x0 = np.column_stack([w[1] - w[0], w[2], w[3]])
            length = float(np.linalg.norm(w[1] - w[0]))
            eqs = [
                (rij.dot(rij) - length**2, "distance"),
                (rij.dot(r[u]) - float((w[1] - w[0]) @ w[2]), "angle r-u"),
                (rij.dot(r[v]) - float((w[1] - w[0]) @ w[3]), "angle r-v"),
                (r[u].dot(r[v]) - float(w[2] @ w[3]), "angle u-v"),
            ]
            for expr, label in eqs:
                if expr.free_symbols:
                    self.constraints.append(expr / 2 if label == "distance" else expr)
                    self.constraint_names.append(f"{body.name}: {label}")
            inverse = np.linalg.inv(x0)
            for e in self.body_entities[b]:
                if e in base:
                    continue
                ent = self.entities[e]
                if ent.kind == "p":
                    c = inverse @ (ent.world - w[0])
                    expr = r[e] - r[i] - c[0] * rij - c[1] * r[u] - c[2] * r[v]
                else:
                    c = inverse @ ent.world
                    expr = r[e] - c[0] * rij - c[1] * r[u] - c[2] * r[v]
                    linear_vectors.add(e)
                for axis in range(3):
                    if expr[axis].free_symbols:
                        self.constraints.append(expr[axis])
                        self.constraint_names.append(f"{body.name}: {ent.name} ({'xyz'[axis]})")
            self._inertia(b, base, x0, M, Q, g)
        for index, e in enumerate(self.entities):
            if e.kind == "u" and not e.fixed and index not in linear_vectors:
                self.constraints.append((self.symbol_of[index].dot(self.symbol_of[index]) - 1) / 2)
                self.constraint_names.append(f"{e.name}: unit length")
        for name, info in self.joint_entities.items():
            joint_kind(info["type"]).natural_equations(self, name, info)
        nm = NaturalModel(self.model.name, names, self.constraints, self.constraint_names, M, Q)
        nm.q0 = self.coordinates_at(neutral_joint_configuration(self.model))
        nm.dof = n - nm.rank(nm.q0)
        nm.joint_coordinates = self._coordinates()
        nm.joint_values = self._readers(nm)
        nm.modeller = self
        check_inertia(nm, self)
        return nm

    def _inertia(self, b: int, base, x0: np.ndarray, M, Q, g) -> None:
        """Eq. 4.61 on the base (r_i, r_j, u, v) and gravity Q = m C_Gᵀ g."""
        body = self.model.bodies[b]
        rot, origin = self._frame(b)
        m = float(body.mass)
        pi = self.entities[base[0]].world
        com = origin + rot @ np.asarray(body.com, float)
        inv = np.linalg.inv(x0)
        a = inv @ (com - pi)
        i_g = rot @ np.asarray(body.inertia, float) @ rot.T
        j_g = 0.5 * np.trace(i_g) * np.eye(3) - i_g
        d = com - pi
        j_i = j_g + m * np.outer(d, d)
        z = inv @ j_i @ inv.T
        blocks = np.zeros((4, 4))
        blocks[0, 0] = m - 2 * m * a[0] + z[0, 0]
        for c in range(3):
            blocks[0, c + 1] = blocks[c + 1, 0] = m * a[c] - z[0, c]
            for e in range(3):
                blocks[c + 1, e + 1] = z[c, e]
        c_g = np.array([1 - a[0], a[0], a[1], a[2]])
        for p, ep in enumerate(base):
            sp = self.slots.get(ep)
            if sp is None:
                continue
            Q[sp] += m * c_g[p] * g
            for s, es in enumerate(base):
                ss = self.slots.get(es)
                if ss is not None:
                    for axis in range(3):
                        M[sp[axis], ss[axis]] += blocks[p, s]

    def on_body(self, body: int, world_vector: np.ndarray) -> sympy.Matrix:
        """A body-fixed vector as a linear function of the body's base (constant on ground)."""
        if body < 0:
            return sympy.Matrix([float(x) for x in world_vector])
        i, j, u, v = self.bases[body]
        w = [self.entities[x].world for x in (i, j, u, v)]
        c = np.linalg.solve(np.column_stack([w[1] - w[0], w[2], w[3]]), world_vector)
        r = self.symbol_of
        return c[0] * (r[j] - r[i]) + c[1] * r[u] + c[2] * r[v]

    def equation(self, expr: sympy.Expr, label: str) -> None:
        """A constraint equation of the joint labelled ``label``."""
        self.constraints.append(sympy.expand(expr))
        self.constraint_names.append(label)

    # ------------------------------------------------------------------ states, readers
    def coordinates_at(self, joint_q: np.ndarray) -> np.ndarray:
        """Natural coordinates for a spanning-tree configuration (loops must close)."""
        poses = tree_poses(self.model, joint_q)
        out = []
        for e in self.entities:
            if e.fixed:
                continue
            t = poses[self.model.body_names[e.owner]]
            out.extend(t[:3, :3] @ e.local + (t[:3, 3] if e.kind == "p" else 0.0))
        return np.array(out)

    def velocities_at(self, joint_q: np.ndarray, joint_v: np.ndarray) -> np.ndarray:
        """Natural velocities: ṙ = v_b + ω × (r − p_b), u̇ = ω × u."""
        poses = tree_poses(self.model, joint_q)
        twists: dict[str, np.ndarray] = {}
        out = []
        for e in self.entities:
            if e.fixed:
                continue
            name = self.model.body_names[e.owner]
            if name not in twists:
                twists[name] = tree_jacobian(self.model, joint_q, name) @ joint_v
            twist = twists[name]
            lever = poses[name][:3, :3] @ e.local
            spin = np.cross(twist[:3], lever)
            out.extend(twist[3:] + spin if e.kind == "p" else spin)
        return np.array(out)

    def body_rotation(self, body: int, q: np.ndarray) -> np.ndarray:
        """Rotation of a body from its natural coordinates: A = X X̄⁻¹ (eq. 4.113-4.116),
        times the body frame's rotation at assembly."""
        if body < 0:
            return np.eye(3)
        i, j, u, v = self.bases[body]

        def block(e):
            s = self.slots.get(e)
            return np.asarray(q, float)[s] if s is not None else self.entities[e].world

        x = np.column_stack([block(j) - block(i), block(u), block(v)])
        w = [self.entities[k].world for k in (i, j, u, v)]
        x0 = np.column_stack([w[1] - w[0], w[2], w[3]])
        return x @ np.linalg.inv(x0) @ self._frame(body)[0]

    def _coordinates(self) -> dict[str, JointCoordinate]:
        """Revolute angles (about the shared axis, between copies of a vector ⟂ to it fixed
        on each body) and prismatic displacements, zero at assembly."""
        out: dict[str, JointCoordinate] = {}
        for name, info in self.joint_entities.items():
            coordinate = joint_kind(info["type"]).natural_coordinate(self, info)
            if coordinate is not None:
                out[name] = JointCoordinate(*coordinate)
        return out

    def _readers(self, nm: NaturalModel) -> dict:
        """Joint coordinates as numbers; spherical joints give the relative rotation."""
        out: dict = {k: coordinate_reader(nm, jc) for k, jc in nm.joint_coordinates.items()}
        for name, info in self.joint_entities.items():
            reader = joint_kind(info["type"]).natural_reader(self, info)
            if reader is not None:
                out[name] = reader
        return out

    def body_pose_expr(self, b: int) -> tuple[sympy.Matrix, sympy.Matrix]:
        """World rotation and origin of body ``b`` as expressions of q: A = X X̄⁻¹ R₀
        (eq. 4.113-4.116, linear in q) and the body origin as a point of the body."""
        i, j, u, v = self.bases[b]
        r = self.symbol_of
        x = sympy.Matrix.hstack(r[j] - r[i], r[u], r[v])
        w = [self.entities[k].world for k in (i, j, u, v)]
        x0 = np.column_stack([w[1] - w[0], w[2], w[3]])
        rel = np.linalg.inv(x0) @ self._frame(b)[0]
        origin, _ = self.point_expr(self.model.body_names[b], (0.0, 0.0, 0.0))
        return x * sympy.Matrix(rel.tolist()), origin

    def point_expr(self, body: str, local) -> tuple[sympy.Matrix, np.ndarray]:
        """A point fixed on ``body`` (body-frame coordinates) as a linear expression of q,
        and its position at assembly."""
        index = self.model.body_index(body) if body != self.model.root else -1
        rot, origin = self._frame(index)
        world = origin + rot @ np.asarray(local, float)
        if index < 0:
            return sympy.Matrix([float(x) for x in world]), world
        i = self.bases[index][0]
        offset = self.on_body(index, world - self.entities[i].world)
        return self.symbol_of[i] + offset, world


def spatial_model(model: Model) -> NaturalModel:
    """The natural-coordinate model of ``model`` (module docstring)."""
    return SpatialModeller(model).build()


__all__ = ["SpatialModeller", "spatial_model"]
