"""Symbolic spatial algebra in local body frames, sparse-aware (design.md §2).

Spatial motion vectors are ``[ω; v]`` and forces ``[n; f]`` (docs/conventions.md). Every
quantity is a tuple of :mod:`symgen.expr` expressions that are atoms of a
:class:`~symgen.program.ProgramBuilder` (numbers, inputs, temporaries): each function emits
its results, so that expressions stay small, and relies on the folding of exact zeros and
ones as expressions are built, so that no multiplication by a structural zero (a zero entry
of a rotation, an axis, a motion subspace) is ever emitted.

A :class:`Transform` is the Plücker transform from a parent frame to a child frame,
``X = [[E, 0], [−E r×, E]]`` (Featherstone 2008, eq. 2.24), stored as the rotation ``E``
(child coordinates from parent coordinates) and the child origin ``r`` in parent
coordinates. In Jain's notation (Jain 2009 §2) ``X = φ*(℘(k), k)`` carries velocities
outward and ``Xᵀ = φ(℘(k), k)`` carries forces inward.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .expr import ONE, ZERO, Expr, Num, esum
from .program import ProgramBuilder

Vec3 = tuple[Expr, Expr, Expr]
Vec6 = tuple[Expr, Expr, Expr, Expr, Expr, Expr]
Mat3 = tuple[Vec3, Vec3, Vec3]
Mat = tuple[tuple[Expr, ...], ...]

ZERO = ZERO
ONE = ONE
ZERO3: Vec3 = (ZERO, ZERO, ZERO)
ZERO6: Vec6 = (ZERO,) * 6  # type: ignore[assignment]
IDENTITY3: Mat3 = ((ONE, ZERO, ZERO), (ZERO, ONE, ZERO), (ZERO, ZERO, ONE))


def number(x: float | int | Expr) -> Expr:
    """A model constant as an expression (expressions pass through)."""
    if isinstance(x, Expr):
        return x
    return Num(float(x))


# ---------------------------------------------------------------------- 3-vectors
def cross(a: Sequence[Expr], b: Sequence[Expr]) -> Vec3:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def dot(a: Sequence[Expr], b: Sequence[Expr]) -> Expr:
    return esum([x * y for x, y in zip(a, b, strict=True)])


def add(a: Sequence[Expr], b: Sequence[Expr]) -> tuple[Expr, ...]:
    return tuple(x + y for x, y in zip(a, b, strict=True))


def sub(a: Sequence[Expr], b: Sequence[Expr]) -> tuple[Expr, ...]:
    return tuple(x - y for x, y in zip(a, b, strict=True))


def scale(s: Expr, a: Sequence[Expr]) -> tuple[Expr, ...]:
    return tuple(s * x for x in a)


def mat_vec(m: Sequence[Sequence[Expr]], x: Sequence[Expr]) -> tuple[Expr, ...]:
    return tuple(dot(row, x) for row in m)


def mat_t_vec(m: Sequence[Sequence[Expr]], x: Sequence[Expr]) -> tuple[Expr, ...]:
    cols = len(m[0])
    return tuple(esum([m[r][c] * x[r] for r in range(len(m))]) for c in range(cols))


def mat_mul(a: Sequence[Sequence[Expr]], b: Sequence[Sequence[Expr]]) -> Mat:
    inner, cols = len(b), len(b[0])
    return tuple(
        tuple(esum([row[k] * b[k][c] for k in range(inner)]) for c in range(cols))
        for row in a
    )


def transpose(m: Sequence[Sequence[Expr]]) -> Mat:
    return tuple(tuple(m[r][c] for r in range(len(m))) for c in range(len(m[0])))


def emit_vec(b: ProgramBuilder, x: Sequence[Expr]) -> tuple[Expr, ...]:
    return tuple(b.emit(e) for e in x)


def emit_mat(b: ProgramBuilder, m: Sequence[Sequence[Expr]]) -> Mat:
    return tuple(tuple(b.emit(e) for e in row) for row in m)


def emit_sym(b: ProgramBuilder, m: Sequence[Sequence[Expr]]) -> Mat:
    """Emit the upper triangle of a symmetric matrix and mirror it (the lower triangle of
    ``m`` is never evaluated)."""
    n = len(m)
    upper = {(i, j): b.emit(m[i][j]) for i in range(n) for j in range(i, n)}
    return tuple(tuple(upper[min(i, j), max(i, j)] for j in range(n)) for i in range(n))


def rotation_about(axis: Sequence[Expr], c: Expr, s: Expr) -> Mat3:
    """Rodrigues: rotation by the angle with cosine ``c`` and sine ``s`` about the unit
    ``axis`` (Featherstone 2008, eq. 2.26 transposed): ``c I + s a× + (1 − c) a aᵀ``."""
    x, y, z = axis
    k = 1 - c
    return (
        (c + k * x * x, k * x * y - s * z, k * x * z + s * y),
        (k * x * y + s * z, c + k * y * y, k * y * z - s * x),
        (k * x * z - s * y, k * y * z + s * x, c + k * z * z),
    )


def quaternion_rotation(qx: Expr, qy: Expr, qz: Expr, qw: Expr) -> Mat3:
    """Rotation matrix of the unit quaternion (x, y, z, w), scalar last."""
    xx, yy, zz = qx * qx, qy * qy, qz * qz
    xy, xz, yz = qx * qy, qx * qz, qy * qz
    wx, wy, wz = qw * qx, qw * qy, qw * qz
    return (
        (1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy)),
        (2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx)),
        (2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)),
    )


# ---------------------------------------------------------------------- spatial vectors
def motion_cross(b: ProgramBuilder, v: Sequence[Expr], m: Sequence[Expr]) -> Vec6:
    """``v ×  m`` for motion vectors (Featherstone 2008, eq. 2.31)."""
    w, u = v[:3], v[3:]
    return emit_vec(b, cross(w, m[:3]) + add(cross(w, m[3:]), cross(u, m[:3])))  # type: ignore


def force_cross(b: ProgramBuilder, v: Sequence[Expr], f: Sequence[Expr]) -> Vec6:
    """``v ×* f`` for a motion v and a force f (Featherstone 2008, eq. 2.32)."""
    w, u = v[:3], v[3:]
    return emit_vec(b, add(cross(w, f[:3]), cross(u, f[3:])) + cross(w, f[3:]))  # type: ignore


@dataclass(frozen=True)
class Transform:
    """Plücker transform parent → child: rotation ``E`` (child from parent coordinates) and
    child origin ``r`` in parent coordinates."""

    E: Mat3
    r: Vec3

    def motion(self, b: ProgramBuilder, m: Sequence[Expr]) -> Vec6:
        """``X m``: a motion vector from parent to child coordinates."""
        w = m[:3]
        lin = emit_vec(b, sub(m[3:], cross(self.r, w)))
        return emit_vec(b, mat_vec(self.E, w) + mat_vec(self.E, lin))  # type: ignore

    def motion_to_parent(self, b: ProgramBuilder, m: Sequence[Expr]) -> Vec6:
        """``X⁻¹ m``: a motion vector from child to parent coordinates."""
        w = emit_vec(b, mat_t_vec(self.E, m[:3]))
        lin = emit_vec(b, mat_t_vec(self.E, m[3:]))
        return emit_vec(b, w + add(lin, cross(self.r, w)))  # type: ignore

    def force_to_parent(self, b: ProgramBuilder, f: Sequence[Expr]) -> Vec6:
        """``Xᵀ f``: a force from child to parent coordinates (Jain's φ(℘(k), k) f)."""
        n = emit_vec(b, mat_t_vec(self.E, f[:3]))
        lin = emit_vec(b, mat_t_vec(self.E, f[3:]))
        return emit_vec(b, add(n, cross(self.r, lin)) + lin)  # type: ignore


def rotate_sym(b: ProgramBuilder, E: Mat3, a: Sequence[Sequence[Expr]]) -> Mat3:
    """``Eᵀ A E`` for a symmetric 3×3 A (upper triangle evaluated)."""
    ae = emit_mat(b, mat_mul(a, E))
    et = transpose(E)
    return emit_sym(b, mat_mul(et, ae))  # type: ignore[return-value]


def rotate_gen(b: ProgramBuilder, E: Mat3, a: Sequence[Sequence[Expr]]) -> Mat3:
    """``Eᵀ A E`` for a general 3×3 A."""
    ae = emit_mat(b, mat_mul(a, E))
    return emit_mat(b, mat_mul(transpose(E), ae))  # type: ignore[return-value]


def skew(r: Sequence[Expr]) -> Mat3:
    x, y, z = r
    return ((ZERO, -z, y), (z, ZERO, -x), (-y, x, ZERO))


# ---------------------------------------------------------------------- rigid-body inertia
@dataclass(frozen=True)
class RigidInertia:
    """Spatial inertia of a rigid body about a frame origin (Featherstone 2008, eq. 2.63):
    mass ``m``, first moment ``h = m c`` and rotational inertia ``J`` about the origin,
    ``M = [[J, h×], [−h×, m 1]]`` (Jain 2009's M(k) with 𝒥 = J and h = m p)."""

    m: Expr
    h: Vec3
    J: Mat3

    def times(self, b: ProgramBuilder, v: Sequence[Expr]) -> Vec6:
        """``M v`` for a motion vector v."""
        w, u = v[:3], v[3:]
        n = add(mat_vec(self.J, w), cross(self.h, u))
        f = sub(scale(self.m, u), cross(self.h, w))
        return emit_vec(b, n + f)  # type: ignore[return-value]

    def add(self, b: ProgramBuilder, other: RigidInertia) -> RigidInertia:
        return RigidInertia(
            b.emit(self.m + other.m),
            emit_vec(b, add(self.h, other.h)),  # type: ignore[arg-type]
            emit_sym(b, [add(r1, r2) for r1, r2 in zip(self.J, other.J, strict=True)]),
        )

    def to_parent(self, b: ProgramBuilder, x: Transform) -> RigidInertia:
        """``Xᵀ M X``: the same body's inertia about the parent origin in parent axes
        (Featherstone 2008, eq. 2.66): with h₁ = Eᵀh and I₁ = EᵀIE,
        ``h' = h₁ + m r`` and ``I' = I₁ − r×h₁× − h₁×r× − m r×r×``."""
        h1 = emit_vec(b, mat_t_vec(x.E, self.h))
        i1 = rotate_sym(b, x.E, self.J)
        r = x.r
        mr = emit_vec(b, scale(self.m, r))
        rx, hx, mrx = skew(r), skew(h1), skew(mr)
        shift = [
            [
                esum([-rx[i][k] * hx[k][j] - hx[i][k] * rx[k][j] - rx[i][k] * mrx[k][j]
                            for k in range(3)])
                for j in range(3)
            ]
            for i in range(3)
        ]
        inertia = emit_sym(b, [add(i1[i], shift[i]) for i in range(3)])
        return RigidInertia(self.m, emit_vec(b, add(h1, mr)), inertia)  # type: ignore

    def matrix(self) -> Mat:
        """The 6×6 matrix ``[[I, h×], [−h×, m 1]]``."""
        hx = skew(self.h)
        m = self.m
        rows = []
        for i in range(3):
            rows.append(tuple(self.J[i]) + tuple(hx[i]))
        for i in range(3):
            unit = tuple(m if i == j else ZERO for j in range(3))
            rows.append(tuple(-hx[i][j] for j in range(3)) + unit)
        return tuple(rows)


def rigid_inertia(
    b: ProgramBuilder, mass: Expr, com: Sequence[Expr], inertia_com: Sequence[Sequence[Expr]]
) -> RigidInertia:
    """Inertia about the body origin from mass, centre of mass and inertia about the COM:
    ``I = I_c − m c×c×`` (Featherstone 2008, eq. 2.63)."""
    h = emit_vec(b, scale(mass, com))
    cx = skew(com)
    hx = skew(h)
    about_origin = [
        [inertia_com[i][j] - esum([hx[i][k] * cx[k][j] for k in range(3)])
         for j in range(3)]
        for i in range(3)
    ]
    return RigidInertia(b.emit(mass), h, emit_sym(b, about_origin))  # type: ignore[arg-type]


# ---------------------------------------------------------------------- symmetric 6×6
def sym6_to_parent(b: ProgramBuilder, x: Transform, p: Sequence[Sequence[Expr]]) -> Mat:
    """``Xᵀ P X`` for a symmetric 6×6 P mapping motions to forces (an articulated inertia).

    With X = diag(E, E)·T, T = [[1, 0], [−r×, 1]], and P = [[A, B], [Bᵀ, C]] rotated to
    A₁ = EᵀAE, B₁ = EᵀBE, C₁ = EᵀCE, the shift gives ``B' = B₁ + r×C₁``,
    ``A' = A₁ − B₁r× + r×B'ᵀ`` and ``C' = C₁``."""
    E = x.E
    a1 = rotate_sym(b, E, [row[:3] for row in p[:3]])
    b1 = rotate_gen(b, E, [row[3:] for row in p[:3]])
    c1 = rotate_sym(b, E, [row[3:] for row in p[3:]])
    rx = skew(x.r)
    b_new = emit_mat(b, [add(b1[i], mat_t_vec(c1, rx[i])) for i in range(3)])
    b1rx = mat_mul(b1, rx)
    rxbt = mat_mul(rx, transpose(b_new))
    a_new = emit_sym(
        b, [[a1[i][j] - b1rx[i][j] + rxbt[i][j] for j in range(3)] for i in range(3)]
    )
    return block6(a_new, b_new, c1)


def motion_sym6_to_child(b: ProgramBuilder, x: Transform, y: Sequence[Sequence[Expr]]) -> Mat:
    """``X Y Xᵀ`` for a symmetric 6×6 Y mapping forces to motions (a compliance such as
    Jain's Υ, J-P eq. 22): with T = [[1, 0], [−r×, 1]] and Y = [[A, B], [Bᵀ, C]],
    ``T Y Tᵀ = [[A, B'], [B'ᵀ, C']]`` with ``B' = B + A r×`` and ``C' = C − r×B' + Bᵀr×``,
    then rotated by diag(E, E)."""
    rx = skew(x.r)
    a = [row[:3] for row in y[:3]]
    bb = [row[3:] for row in y[:3]]
    c = [row[3:] for row in y[3:]]
    arx = mat_mul(a, rx)
    b2 = emit_mat(b, [add(bb[i], arx[i]) for i in range(3)])
    rxb2 = mat_mul(rx, b2)
    btrx = mat_mul(transpose(bb), rx)
    c2 = emit_sym(b, [[c[i][j] - rxb2[i][j] + btrx[i][j] for j in range(3)] for i in range(3)])
    et = transpose(x.E)  # E S Eᵀ = (Eᵀ)ᵀ S (Eᵀ)
    return block6(rotate_sym(b, et, a), rotate_gen(b, et, b2), rotate_sym(b, et, c2))


def block6(a: Mat3, bb: Sequence[Sequence[Expr]], c: Mat3) -> Mat:
    """``[[A, B], [Bᵀ, C]]`` as a 6×6 tuple."""
    rows = [tuple(a[i]) + tuple(bb[i]) for i in range(3)]
    rows += [tuple(bb[j][i] for j in range(3)) + tuple(c[i]) for i in range(3)]
    return tuple(rows)


__all__ = [
    "IDENTITY3",
    "ONE",
    "RigidInertia",
    "Transform",
    "ZERO",
    "ZERO3",
    "ZERO6",
    "add",
    "block6",
    "cross",
    "dot",
    "emit_mat",
    "emit_sym",
    "emit_vec",
    "force_cross",
    "mat_mul",
    "mat_t_vec",
    "mat_vec",
    "motion_cross",
    "motion_sym6_to_child",
    "number",
    "quaternion_rotation",
    "rigid_inertia",
    "rotate_gen",
    "rotate_sym",
    "rotation_about",
    "scale",
    "skew",
    "sub",
    "sym6_to_parent",
    "transpose",
]
