"""Automatic natural-coordinate modelling of planar mechanisms (models with ``plane: xy``),
following the book's rules (García de Jalón & Bayo 1994, §2.1.3):

- one basic point per pin, **shared** by every body that meets there (ch. 2: a point is
  shared by all the elements that meet at it): revolute joints (tree or loop) that touch a
  common body (the ground counts) at one location are one pin (:mod:`.pins`, union-find,
  independent of the joint order); a revolute joint needs no equation. Pins that only
  coincide in the assembled drawing, sharing no body, stay two points;
- a prismatic joint gets a point on each body, coincident at assembly, and two equations:
  the child's point stays on the parent's sliding line (a cross product, bilinear) and the
  relative angle stays constant (the cross product of eq. 2.1 near 0°/180°, the dot
  product near ±90°: whichever is well conditioned at the assembled angle, §2.1.3,
  Figs. 2.13-2.14);
- every moving body gets at least two basic points (its centre of mass, or a point on its x
  axis, when its joints give fewer); the first two are its *base points* i, j: one
  constant-distance equation, and each further point k two linear equations
  r_k = r_i + c₁(r_j − r_i) + c₂ n(r_j − r_i), n the +90° rotation (the linear-combination
  condition of §2.1.3, Example 2.8, with n(r_j − r_i) as second vector);
- points on the ground are constants; the mass matrix of each body is the constant
  element matrix of its base points (eq. 4.48), rows of fixed points deleted; gravity
  is Q = m C_Gᵀ g (eq. 4.129-4.130).

Assembly poses come from the tree formulation's forward kinematics; ``coordinates_at`` and
``velocities_at`` convert a relative-coordinate state of the spanning tree with the same
programs (conversion helpers for users and tests).
The model's zero configuration must be assembled (loops closed), as symgen's planar
examples are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import sympy

from symgen.errors import SymgenError
from symgen.formulations.natural.model import (
    JointCoordinate,
    NaturalModel,
    assembly_poses,
    bar_mass_matrix,
    check_inertia,
    coordinate_reader,
    tree_jacobian,
    tree_poses,
)
from symgen.formulations.natural.pins import RELATIVE_TOLERANCE, model_size, pin_groups
from symgen.joints import joint_kind
from symgen.model import Model


@dataclass
class _Point:
    name: str
    body: int  # owning body used to place it (-1: ground)
    local: np.ndarray  # coordinates in that body's frame (x, y)
    world: np.ndarray  # at assembly
    members: list[int] = field(default_factory=list)  # bodies it belongs to (not ground)

    @property
    def fixed(self) -> bool:
        return self.body < 0


def _pose2(poses: dict, name: str) -> tuple[np.ndarray, np.ndarray]:
    t = poses[name]
    return t[:2, :2], t[:2, 3]


def _n(e: sympy.Matrix) -> sympy.Matrix:
    return sympy.Matrix([-e[1], e[0]])


def _cross(a, b):
    return a[0] * b[1] - a[1] * b[0]


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1]


class PlanarModeller:
    """Builds the :class:`NaturalModel` of a planar ``model`` (see the module docstring)."""

    def __init__(self, model: Model) -> None:
        if model.plane != "xy":
            raise SymgenError(f"model {model.name!r} is not planar (natural coordinates in the "
                              "plane need `plane: xy`)")
        self.model = model.resolve()
        self.poses = assembly_poses(self.model)
        self.points: list[_Point] = []
        self.body_points: dict[int, list[int]] = {i: [] for i in range(self.model.nbodies)}
        self.constraints: list[sympy.Expr] = []
        self.constraint_names: list[str] = []
        self.prismatic: list[tuple] = []
        self.revolute: list[tuple] = []
        self._x_axes: dict[int, tuple[sympy.Matrix, np.ndarray]] = {}

    # ------------------------------------------------------------------ points
    def _body_name(self, body: int) -> str:
        return self.model.root if body < 0 else self.model.body_names[body]

    def _add_point(self, name: str, body: int, world: np.ndarray) -> int:
        rot, origin = _pose2(self.poses, self._body_name(body))
        local = rot.T @ (world - origin)
        self.points.append(_Point(name, body, local, np.asarray(world, float)))
        return len(self.points) - 1

    def _attach(self, point: int, body: int) -> None:
        if body >= 0 and point not in self.body_points[body]:
            self.body_points[body].append(point)
            self.points[point].members.append(body)

    def _joint_world(self, joint, loop: bool) -> np.ndarray:
        parent = self.model.body_index(joint.parent)
        rot, origin = _pose2(self.poses, self._body_name(parent))
        return origin + rot @ np.asarray(joint.placement.translation[:2], float)

    def _check_type(self, joint) -> None:
        if joint_kind(joint.type).natural_planar is None:
            raise SymgenError(f"joint {joint.name!r}: type {joint.type.value!r} is not supported "
                              "by planar natural coordinates (revolute, continuous, prismatic)")

    def _pins(self, joints: list) -> tuple[dict[str, int], dict[int, int]]:
        """Pin group of every revolute joint (its first joint's index, :func:`.pins.
        pin_groups`, within 1e-9 of the model's size) and the owner of each group's point:
        the ground when a member is the ground (a constant), else the first joint's child."""
        m = self.model
        revolute = [j for j in joints if joint_kind(j.type).natural_planar == "revolute"]
        bodies = [(m.body_index(j.parent), m.body_index(j.child)) for j in revolute]
        where = [self._joint_world(j, False) for j in revolute]
        size = model_size([*where, *(_pose2(self.poses, b)[1] for b in m.body_names)])
        first = pin_groups(bodies, where, RELATIVE_TOLERANCE * size)
        owner = {g: bodies[g][1] for g in first}
        for pair, g in zip(bodies, first, strict=True):
            if -1 in pair:
                owner[g] = -1
        return {j.name: first[i] for i, j in enumerate(revolute)}, owner

    def collect(self) -> None:
        m = self.model
        joints = [(j, False) for j in m.joints] + [(j, True) for j in m.loop_joints]
        for joint, _loop in joints:
            self._check_type(joint)
        group, owner = self._pins([j for j, _ in joints])
        point_of: dict[int, int] = {}  # pin group -> its basic point
        for joint, loop in joints:
            parent, child = m.body_index(joint.parent), m.body_index(joint.child)
            world = self._joint_world(joint, loop)
            if joint_kind(joint.type).natural_planar == "revolute":
                pin = group[joint.name]
                if pin not in point_of:
                    point_of[pin] = self._add_point(joint.name, owner[pin], world)
                p = point_of[pin]
                self._attach(p, parent)
                self._attach(p, child)
                self.revolute.append((joint, parent, child))
            else:
                pp = self._add_point(f"{joint.name}/parent", parent, world)
                pc = self._add_point(f"{joint.name}/child", child, world)
                self._attach(pp, parent)
                self._attach(pc, child)
                self.prismatic.append((joint, parent, child, pp, pc))
        for b, body in enumerate(m.bodies):
            rot, origin = _pose2(self.poses, body.name)
            if self._base_pair(b) is not None:
                continue
            # too few distinct points: add the centre of mass, else a point on the x axis
            com = origin + rot @ np.asarray(body.com[:2], float)
            for candidate in (com, origin + rot @ np.array([0.1, 0.0]),
                              origin + rot @ np.array([0.0, 0.1])):
                existing = [self.points[i].world for i in self.body_points[b]]
                if all(np.linalg.norm(candidate - w) > 1e-6 for w in existing):
                    name = f"{body.name}/p{len(self.body_points[b])}"
                    self._attach(self._add_point(name, b, candidate), b)
                if self._base_pair(b) is not None:
                    break

    def _base_pair(self, body: int) -> tuple[int, int] | None:
        """The first point of the body and the first one at a distinct location."""
        pts = self.body_points[body]
        if not pts:
            return None
        first = self.points[pts[0]].world
        for k in pts[1:]:
            if np.linalg.norm(self.points[k].world - first) > 1e-6:
                return pts[0], k
        return None

    # ------------------------------------------------------------------ coordinates
    def coordinates(self) -> tuple[list[str], dict[int, sympy.Matrix]]:
        names, position = [], {}
        k = 0
        for index, point in enumerate(self.points):
            if point.fixed:
                position[index] = sympy.Matrix([float(point.world[0]), float(point.world[1])])
            else:
                names += [f"{point.name}.x", f"{point.name}.y"]
                position[index] = sympy.Matrix([sympy.Symbol(f"q{k}", real=True),
                                                sympy.Symbol(f"q{k + 1}", real=True)])
                k += 2
        self.index = {}
        k = 0
        for index, point in enumerate(self.points):
            if not point.fixed:
                self.index[index] = (k, k + 1)
                k += 2
        return names, position

    def _base(self, body: int) -> tuple[int, int]:
        pair = self._base_pair(body)
        assert pair is not None
        return pair

    def build(self) -> NaturalModel:
        self.collect()
        names, r = self.coordinates()
        n = len(names)
        M = np.zeros((n, n))
        Q = np.zeros(n)
        g = np.asarray(self.model.gravity[:2], float)
        self.base_vectors: dict[int, tuple[sympy.Matrix, float]] = {}
        for b, body in enumerate(self.model.bodies):
            i, j = self._base(b)
            pi, pj = self.points[i].world, self.points[j].world
            e0 = pj - pi
            length = float(np.linalg.norm(e0))
            e = r[j] - r[i]
            self.base_vectors[b] = (e, length)
            if not (self.points[i].fixed and self.points[j].fixed):
                self.constraints.append((_dot(e, e) - length**2) / 2)
                self.constraint_names.append(f"{body.name}: distance {self.points[i].name}-"
                                             f"{self.points[j].name}")
            n0 = np.array([-e0[1], e0[0]])
            for k in (k for k in self.body_points[b] if k not in (i, j)):
                d = self.points[k].world - pi
                c1, c2 = float(d @ e0) / length**2, float(d @ n0) / length**2
                expr = r[k] - r[i] - c1 * e - c2 * _n(e)
                for axis in range(2):
                    self.constraints.append(expr[axis])
                    self.constraint_names.append(f"{body.name}: point {self.points[k].name}")
            # mass matrix (eq. 4.48) and gravity (eq. 4.129) of the base points
            rot, origin = _pose2(self.poses, body.name)
            com = origin + rot @ np.asarray(body.com[:2], float)
            dg = com - pi
            xg, yg = float(dg @ e0) / length, float(dg @ n0) / length
            inertia_i = float(body.inertia[2][2]) + float(body.mass) * float(dg @ dg)
            element = bar_mass_matrix(float(body.mass), inertia_i, length, xg, yg)
            c1, c2 = xg / length, yg / length
            c_g = np.array([[1 - c1, c2, c1, -c2], [-c2, 1 - c1, c2, c1]])
            q_e = float(body.mass) * c_g.T @ g
            slots = [self.index.get(i, (None, None)), self.index.get(j, (None, None))]
            flat = [s for pair in slots for s in pair]
            for a, ga in enumerate(flat):
                if ga is None:
                    continue
                Q[ga] += q_e[a]
                for c, gc in enumerate(flat):
                    if gc is not None:
                        M[ga, gc] += element[a, c]
        for joint, parent, child, pp, pc in self.prismatic:
            self._prismatic(joint, parent, child, pp, pc, r)
        symbols = [sympy.Symbol(f"q{k}", real=True) for k in range(n)]
        nm = NaturalModel(self.model.name, names, self.constraints, self.constraint_names, M, Q)
        assert nm.symbols == symbols
        nm.q0 = np.array([self.points[p].world[a] for p in range(len(self.points))
                          if not self.points[p].fixed for a in range(2)])
        nm.dof = n - nm.rank(nm.q0)
        self.r = r
        nm.joint_coordinates = self._coordinates(r)
        nm.joint_values = {k: coordinate_reader(nm, jc) for k, jc in nm.joint_coordinates.items()}
        nm.modeller = self
        check_inertia(nm, self)
        return nm

    def _direction(self, body: int, world_dir: np.ndarray, r) -> sympy.Matrix:
        """A unit direction fixed on ``body`` as a linear function of its base points."""
        if body < 0:
            return sympy.Matrix([float(world_dir[0]), float(world_dir[1])])
        e, length = self.base_vectors[body]
        i, j = self._base(body)
        e0 = self.points[j].world - self.points[i].world
        n0 = np.array([-e0[1], e0[0]])
        a1, a2 = float(world_dir @ e0) / length**2, float(world_dir @ n0) / length**2
        return a1 * e + a2 * _n(e)

    def _frame_x(self, body: int, r) -> tuple[sympy.Matrix, np.ndarray]:
        """The body's x axis (built once per body: every joint of the body reads it)."""
        if body not in self._x_axes:
            rot, _ = _pose2(self.poses, self._body_name(body))
            self._x_axes[body] = (self._direction(body, rot[:, 0], r), rot[:, 0])
        return self._x_axes[body]

    def _prismatic(self, joint, parent, child, pp, pc, r) -> None:
        prot, _ = _pose2(self.poses, self._body_name(parent))
        jrot = np.asarray(joint.placement.rotation, float)[:2, :2]
        axis = prot @ jrot @ np.asarray(joint.axis[:2], float)
        axis = axis / np.linalg.norm(axis)
        d = self._direction(parent, axis, r)
        self.constraints.append(_cross(d, r[pc] - r[pp]))
        self.constraint_names.append(f"{joint.name}: on the sliding line")
        ep, ep0 = self._frame_x(parent, r)
        ec, ec0 = self._frame_x(child, r)
        sine, cosine = _cross(ep0, ec0), _dot(ep0, ec0)
        if abs(sine) <= abs(cosine):
            self.constraints.append(_cross(ep, ec) - sine)
        else:
            self.constraints.append(_dot(ep, ec) - cosine)
        self.constraint_names.append(f"{joint.name}: no relative rotation")
        self.prismatic_axes = getattr(self, "prismatic_axes", {})
        self.prismatic_axes[joint.name] = (d, pp, pc)

    def _coordinates(self, r) -> dict[str, JointCoordinate]:
        """Joint angles (relative rotation of the bodies' x axes) and displacements."""
        out = {}
        for joint, parent, child in self.revolute:
            ep, ep0 = self._frame_x(parent, r)
            ec, ec0 = self._frame_x(child, r)
            sign = 1.0 if float(np.asarray(joint.axis, float)[2]) >= 0 else -1.0
            offset = math.atan2(_cross(ep0, ec0), _dot(ep0, ec0))
            out[joint.name] = JointCoordinate("angle", (_cross(ep, ec), _dot(ep, ec)), offset,
                                              sign)
        for name, (d, pp, pc) in getattr(self, "prismatic_axes", {}).items():
            out[name] = JointCoordinate("length", (_dot(d, r[pc] - r[pp]),))
        return out

    def body_pose_expr(self, b: int) -> tuple[sympy.Matrix, sympy.Matrix]:
        """World rotation (3×3) and origin (3) of body ``b`` as expressions of q: the
        element's unit direction ê = (r_j − r_i)/L and n(ê) turned by the body's constant
        angle to them (A = X X̄⁻¹, eq. 4.113)."""
        i, j = self._base(b)
        e, length = self.base_vectors[b]
        e0 = (self.points[j].world - self.points[i].world) / length
        rot0, _ = _pose2(self.poses, self.model.body_names[b])
        # body axes in the element frame (ê, n(ê)) at assembly
        frame0 = np.column_stack([e0, [-e0[1], e0[0]]])
        rel = frame0.T @ rot0
        x = sympy.Matrix.hstack(e / length, _n(e) / length) * sympy.Matrix(rel.tolist())
        origin, _ = self.point_expr(self.model.body_names[b], (0.0, 0.0, 0.0))
        rot = sympy.Matrix([[x[0, 0], x[0, 1], 0], [x[1, 0], x[1, 1], 0], [0, 0, 1]])
        return rot, sympy.Matrix([origin[0], origin[1], 0])

    def point_expr(self, body: str, local) -> tuple[sympy.Matrix, np.ndarray]:
        """A point fixed on ``body`` (body-frame coordinates) as a linear expression of q,
        and its position at assembly."""
        index = self.model.body_index(body) if body != self.model.root else -1
        rot, origin = _pose2(self.poses, self._body_name(index))
        world = origin + rot @ np.asarray(local, float)[:2]
        if index < 0:
            return sympy.Matrix([float(world[0]), float(world[1])]), world
        i, _ = self._base(index)
        e, length = self.base_vectors[index]
        e0 = self.points[self._base(index)[1]].world - self.points[i].world
        n0 = np.array([-e0[1], e0[0]])
        d = world - self.points[i].world
        c1, c2 = float(d @ e0) / length**2, float(d @ n0) / length**2
        return self.r[i] + c1 * e + c2 * _n(e), world

    def coordinates_at(self, joint_q: np.ndarray) -> np.ndarray:
        """Natural coordinates for a configuration of the spanning tree (loops must close)."""
        poses = tree_poses(self.model, joint_q)
        out = []
        for point in self.points:
            if point.fixed:
                continue
            rot, origin = _pose2(poses, self._body_name(point.body))
            out.extend(origin + rot @ point.local)
        return np.array(out)

    def velocities_at(self, joint_q: np.ndarray, joint_v: np.ndarray) -> np.ndarray:
        """Natural velocities: ṙ = v_b + ω × (r − p_b) for each point's owning body."""
        poses = tree_poses(self.model, joint_q)
        twists: dict[str, np.ndarray] = {}
        out = []
        for point in self.points:
            if point.fixed:
                continue
            name = self._body_name(point.body)
            if name not in twists:  # origin, world axes
                twists[name] = tree_jacobian(self.model, joint_q, name) @ joint_v
            twist = twists[name]
            rot, _ = _pose2(poses, name)
            lever = rot @ point.local
            omega = twist[2]
            out.extend(twist[3:5] + omega * np.array([-lever[1], lever[0]]))
        return np.array(out)


def planar_model(model: Model) -> NaturalModel:
    """The natural-coordinate model of a planar ``model`` (module docstring)."""
    return PlanarModeller(model).build()


__all__ = ["PlanarModeller", "planar_model"]
