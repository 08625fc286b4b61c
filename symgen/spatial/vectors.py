"""3-vectors and 3x3 matrices over IR expressions (products, cross products, rotations,
emission into a program builder) and deferred products (:class:`Pending`), the ground of
the spatial types (:mod:`symgen.spatial`)."""


from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Generic, Protocol, Self, TypeVar

from symgen.ir.expr import ONE, ZERO, Expr, Num, esum
from symgen.ir.program import ProgramBuilder

Vec3 = tuple[Expr, Expr, Expr]
Vec6 = tuple[Expr, Expr, Expr, Expr, Expr, Expr]
Mat3 = tuple[Vec3, Vec3, Vec3]
Mat = tuple[tuple[Expr, ...], ...]

ZERO = ZERO
ONE = ONE
ZERO3: Vec3 = (ZERO, ZERO, ZERO)
ZERO6: Vec6 = (ZERO, ZERO, ZERO, ZERO, ZERO, ZERO)
IDENTITY3: Mat3 = ((ONE, ZERO, ZERO), (ZERO, ONE, ZERO), (ZERO, ZERO, ONE))


def number(x: float | int | Expr) -> Expr:
    """A model constant as an expression (expressions pass through)."""
    if isinstance(x, Expr):
        return x
    return Num(float(x))


def vec3(x: Iterable[Expr]) -> Vec3:
    """Three expressions as a :data:`Vec3` (checks the length)."""
    x0, x1, x2 = x
    return (x0, x1, x2)


def vec6(x: Iterable[Expr]) -> Vec6:
    """Six expressions as a :data:`Vec6` (checks the length)."""
    x0, x1, x2, x3, x4, x5 = x
    return (x0, x1, x2, x3, x4, x5)


def mat3(m: Iterable[Iterable[Expr]]) -> Mat3:
    """A 3×3 matrix as a :data:`Mat3` (checks the shape)."""
    r0, r1, r2 = m
    return (vec3(r0), vec3(r1), vec3(r2))


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


def skew(r: Sequence[Expr]) -> Mat3:
    x, y, z = r
    return ((ZERO, -z, y), (z, ZERO, -x), (-y, x, ZERO))


def rotate_sym(b: ProgramBuilder, E: Mat3, a: Sequence[Sequence[Expr]]) -> Mat3:
    """``Eᵀ A E`` for a symmetric 3×3 A (upper triangle evaluated)."""
    ae = emit_mat(b, mat_mul(a, E))
    et = transpose(E)
    return mat3(emit_sym(b, mat_mul(et, ae)))


def rotate_gen(b: ProgramBuilder, E: Mat3, a: Sequence[Sequence[Expr]]) -> Mat3:
    """``Eᵀ A E`` for a general 3×3 A."""
    ae = emit_mat(b, mat_mul(a, E))
    return mat3(emit_mat(b, mat_mul(transpose(E), ae)))


# ---------------------------------------------------------------------- deferred products
class _Value(Protocol):
    """What a :class:`Pending` product evaluates to: a value that adds and emits."""

    def __add__(self, other: Self, /) -> Self: ...

    def emit(self, b: ProgramBuilder) -> Self: ...


T = TypeVar("T", bound=_Value)


class Pending(Generic[T]):
    """A product whose evaluation assigns temporaries (a coordinate transform): evaluated
    by :meth:`emit`, or when a sum it takes part in is emitted, operands left to right."""

    __slots__ = ("_fn",)

    def __init__(self, fn: Callable[[ProgramBuilder], T]) -> None:
        self._fn = fn

    def realize(self, b: ProgramBuilder) -> T:
        """The value, its intermediate results emitted."""
        return self._fn(b)

    def emit(self, b: ProgramBuilder) -> T:
        return self._fn(b).emit(b)

    def __add__(self, other: T | Pending[T]) -> Pending[T]:
        return Pending(lambda b: self._fn(b) + realize(b, other))

    def __radd__(self, other: T) -> Pending[T]:
        return Pending(lambda b: other + self._fn(b))


def realize(b: ProgramBuilder, x: T | Pending[T]) -> T:
    """``x`` evaluated (a :class:`Pending` product) or as is."""
    return x.realize(b) if isinstance(x, Pending) else x


# ---------------------------------------------------------------------- symmetric 6×6
class Placement(Protocol):
    """A frame placement: rotation ``E`` (child from parent coordinates) and origin ``r`` in
    parent coordinates (:class:`symgen.spatial.types.Transform`)."""

    E: Mat3
    r: Vec3


def sym6_to_parent(b: ProgramBuilder, x: Placement, p: Sequence[Sequence[Expr]]) -> Mat:
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
    return block6(mat3(a_new), b_new, c1)


def motion_sym6_to_child(b: ProgramBuilder, x: Placement, y: Sequence[Sequence[Expr]]) -> Mat:
    """``X Y Xᵀ`` for a symmetric 6×6 Y mapping forces to motions (a compliance such as
    Jain's Υ, *Partitioning*, eq. 22): with T = [[1, 0], [−r×, 1]] and
    Y = [[A, B], [Bᵀ, C]], ``T Y Tᵀ = [[A, B'], [B'ᵀ, C']]`` with ``B' = B + A r×`` and
    ``C' = C − r×B' + Bᵀr×``, then rotated by diag(E, E)."""
    rx = skew(x.r)
    a = [row[:3] for row in y[:3]]
    bb = [row[3:] for row in y[:3]]
    c = [row[3:] for row in y[3:]]
    arx = mat_mul(a, rx)
    b2 = emit_mat(b, [add(bb[i], arx[i]) for i in range(3)])
    rxb2 = mat_mul(rx, b2)
    btrx = mat_mul(transpose(bb), rx)
    c2 = emit_sym(b, [[c[i][j] - rxb2[i][j] + btrx[i][j] for j in range(3)] for i in range(3)])
    et = mat3(transpose(x.E))  # E S Eᵀ = (Eᵀ)ᵀ S (Eᵀ)
    return block6(rotate_sym(b, et, a), rotate_gen(b, et, b2), rotate_sym(b, et, c2))


def block6(a: Mat3, bb: Sequence[Sequence[Expr]], c: Mat3) -> Mat:
    """``[[A, B], [Bᵀ, C]]`` as a 6×6 tuple."""
    rows = [tuple(a[i]) + tuple(bb[i]) for i in range(3)]
    rows += [tuple(bb[j][i] for j in range(3)) + tuple(c[i]) for i in range(3)]
    return tuple(rows)


__all__ = ["IDENTITY3", "ONE", "ZERO", "ZERO3", "ZERO6", "add", "block6", "cross", "dot",
           "emit_mat", "emit_sym", "emit_vec", "Mat", "Mat3", "mat3", "mat_mul", "mat_t_vec",
           "mat_vec", "motion_sym6_to_child", "number", "Pending", "Placement",
           "quaternion_rotation", "realize", "rotate_gen", "rotate_sym", "rotation_about",
           "scale", "skew", "sub", "sym6_to_parent", "transpose", "Vec3", "vec3", "Vec6", "vec6"]
