"""Symbolic spatial algebra in local body frames, sparse-aware.

Spatial motion vectors are ``[ω; v]`` and forces ``[n; f]`` (docs/conventions.md;
Featherstone 2008, §2.2-2.3). The thin types :class:`Motion`, :class:`Force`,
:class:`Transform`, :class:`Inertia`, :class:`JointMap` (and :class:`ForceMap`,
:class:`ArticulatedInertia`, :class:`Compliance`, :class:`JointVector`) hold tuples of
:mod:`symgen.ir.expr` expressions and give them the operators of the book, so that a recursion
step reads ``V = (X @ V_parent + S @ qd).emit(b)``:

- ``+``, ``−`` and scalar ``*`` build expressions in place, as do ``S @ θ̇``, ``I @ V``,
  ``v.cross(m)`` (×) and ``v.cross_star(f)`` (×*);
- ``emit(b)`` assigns the entries to temporaries of a
  :class:`~symgen.ir.program.ProgramBuilder`, so that expressions stay small;
- a coordinate transform (``X @ m``, ``X.T @ f``, ``X.inv @ m``, ``X.T @ P @ X``,
  ``X @ Y @ X.T``) emits intermediate results, so it needs the builder: it returns a
  :class:`Pending` value, evaluated by its own ``emit(b)`` or by that of a sum it takes part
  in (operands left to right).

Exact zeros and ones fold as expressions are built, so that no multiplication by a
structural zero (a zero entry of a rotation, an axis, a motion subspace) is ever emitted.

A :class:`Transform` is the Plücker transform from a parent frame to a child frame,
``X = [[E, 0], [−E r×, E]]`` (Featherstone 2008, eq. 2.24), stored as the rotation ``E``
(child coordinates from parent coordinates) and the child origin ``r`` in parent
coordinates. In Jain's notation (Jain 2009, §2) ``X = φ*(℘(k), k)`` carries velocities
outward and ``Xᵀ = φ(℘(k), k)`` carries forces inward.

The free functions on tuples (``add``, ``cross``, ``emit_vec``, ``motion_cross``, ...) are
the same algebra for callers that hold plain tuples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, Self, TypeVar, overload

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


# ---------------------------------------------------------------------- spatial vectors
class _Vector:
    """Six expressions ``[angular; linear]``; a linear combination (``S @ θ``) also keeps
    its terms, so that ``a + S @ θ`` adds them to ``a`` one by one."""

    __slots__ = ("_v", "_terms")

    def __init__(self, entries: Iterable[Expr] = ZERO6) -> None:
        self._v: Vec6 = vec6(entries)
        self._terms: tuple[tuple[Expr, ...], ...] = ()

    @classmethod
    def combination(cls, terms: Iterable[Sequence[Expr]]) -> Self:
        """``Σ terms``, summed from zero in order."""
        kept = tuple(tuple(t) for t in terms)
        total: tuple[Expr, ...] = ZERO6
        for t in kept:
            total = add(total, t)
        out = cls(total)
        out._terms = kept
        return out

    @property
    def angular(self) -> Vec3:
        return (self._v[0], self._v[1], self._v[2])

    @property
    def linear(self) -> Vec3:
        return (self._v[3], self._v[4], self._v[5])

    def __iter__(self) -> Iterator[Expr]:
        return iter(self._v)

    def __len__(self) -> int:
        return 6

    def __getitem__(self, i: int) -> Expr:
        return self._v[i]

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self._v}"

    def __add__(self, other: Self) -> Self:
        if type(other) is not type(self):
            return NotImplemented
        if not other._terms:
            return type(self)(add(self._v, other._v))
        total: tuple[Expr, ...] = self._v
        for t in other._terms:
            total = add(total, t)
        return type(self)(total)

    def __sub__(self, other: Self) -> Self:
        if type(other) is not type(self):
            return NotImplemented
        return type(self)(sub(self._v, other._v))

    def __neg__(self) -> Self:
        return type(self)(-x for x in self._v)

    def __mul__(self, s: Expr) -> Self:
        return type(self)(x * s for x in self._v)

    def __rmul__(self, s: float) -> Self:
        """``s * v`` for a Python number s (an :class:`Expr` on the left does not defer to
        this: write ``v * s``)."""
        return type(self)(s * x for x in self._v)

    def emit(self, b: ProgramBuilder) -> Self:
        """The entries assigned to program temporaries."""
        return type(self)(emit_vec(b, self._v))


class Motion(_Vector):
    """A spatial motion vector ``[ω; v]`` (Featherstone 2008, §2.2): velocity,
    acceleration, a column of a joint map."""

    __slots__ = ()

    def cross(self, m: Motion) -> Motion:
        """``self × m`` (Featherstone 2008, eq. 2.31)."""
        w, u = self.angular, self.linear
        return Motion(cross(w, m.angular) + add(cross(w, m.linear), cross(u, m.angular)))

    def cross_star(self, f: Force) -> Force:
        """``self ×* f`` (Featherstone 2008, eq. 2.32)."""
        w, u = self.angular, self.linear
        return Force(add(cross(w, f.angular), cross(u, f.linear)) + cross(w, f.linear))

    def dot(self, f: Force) -> Expr:
        """``mᵀ f``, the power of ``f`` on ``m`` (Featherstone 2008, §2.6)."""
        return dot(self._v, f._v)


class Force(_Vector):
    """A spatial force ``[n; f]`` (Featherstone 2008, §2.3): moment and force."""

    __slots__ = ()

    def dot(self, m: Motion) -> Expr:
        """``fᵀ m``."""
        return dot(self._v, m._v)


class JointVector:
    """Joint-space quantities of one hinge: rates θ̇, θ̈, generalized forces T, ε, ν."""

    __slots__ = ("_v",)

    def __init__(self, entries: Iterable[Expr]) -> None:
        self._v = tuple(entries)

    def __iter__(self) -> Iterator[Expr]:
        return iter(self._v)

    def __len__(self) -> int:
        return len(self._v)

    def __getitem__(self, i: int) -> Expr:
        return self._v[i]

    def __add__(self, other: Sequence[Expr]) -> JointVector:
        return JointVector(add(self._v, other))

    def __sub__(self, other: Sequence[Expr]) -> JointVector:
        return JointVector(sub(self._v, other))

    def __rsub__(self, other: Sequence[Expr]) -> JointVector:
        return JointVector(sub(other, self._v))

    def emit(self, b: ProgramBuilder) -> JointVector:
        return JointVector(emit_vec(b, self._v))


V = TypeVar("V", Motion, Force)


class _Map(Generic[V]):
    """Columns of spatial vectors: ``A @ θ`` their combination, ``A.T @ x`` the
    projections."""

    __slots__ = ("columns",)
    column_type: type[V]

    def __init__(self, columns: Iterable[Sequence[Expr]]) -> None:
        kind = self.column_type
        self.columns: tuple[V, ...] = tuple(
            c if isinstance(c, kind) else kind(c) for c in columns
        )

    def __iter__(self) -> Iterator[V]:
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)

    def __getitem__(self, i: int) -> V:
        return self.columns[i]

    def __matmul__(self, rates: Sequence[Expr]) -> V:
        """``Σ_c A_c θ_c``."""
        terms = [scale(r, c._v) for c, r in zip(self.columns, rates, strict=True)]
        return self.column_type.combination(terms)

    @property
    def T(self) -> _Transposed:
        return _Transposed(self.columns)


class _Transposed:
    """``Aᵀ`` of a :class:`JointMap` or :class:`ForceMap`."""

    __slots__ = ("columns",)

    def __init__(self, columns: Sequence[Motion] | Sequence[Force]) -> None:
        self.columns = columns

    def __matmul__(self, x: _Vector) -> JointVector:
        """``Aᵀ x``: one dot product per column."""
        return JointVector(dot(c._v, x._v) for c in self.columns)


class JointMap(_Map[Motion]):
    """A hinge's joint map ``S = H*(k)`` (Jain 2009, §2; Featherstone 2008, §3.5): its
    motion subspace as columns, ``S @ θ̇`` the joint velocity and ``S.T @ f`` the
    generalized force of f."""

    __slots__ = ()
    column_type = Motion


class ForceMap(_Map[Force]):
    """Columns of forces, as ``U = P S`` and the gain ``G = U D⁻¹`` of the
    articulated-body recursion (Jain 2009, eq. 9): ``G @ ε`` their combination and
    ``G @ U.T`` the 6×6 ``G Uᵀ``."""

    __slots__ = ()
    column_type = Force

    @overload
    def __matmul__(self, x: _Transposed) -> ArticulatedInertia: ...

    @overload
    def __matmul__(self, x: Sequence[Expr]) -> Force: ...

    def __matmul__(self, x: _Transposed | Sequence[Expr]) -> ArticulatedInertia | Force:
        if isinstance(x, _Transposed):
            return self.outer(x.columns)
        return super().__matmul__(x)

    def outer(self, other: Sequence[_Vector]) -> ArticulatedInertia:
        """``Σ_c A_c B_cᵀ``."""
        pairs = list(zip(self.columns, other, strict=True))
        return ArticulatedInertia(
            tuple(
                tuple(esum([a[i] * o[j] for a, o in pairs]) for j in range(6))
                for i in range(6)
            )
        )


# ---------------------------------------------------------------------- coordinate transforms
@dataclass(frozen=True)
class Transform:
    """Plücker transform parent → child (Featherstone 2008, eq. 2.24): rotation ``E``
    (child from parent coordinates) and child origin ``r`` in parent coordinates.

    ``X @ m`` carries a motion to the child (Jain's φ*(℘(k), k)), ``X.T @ f`` a force to
    the parent (φ(℘(k), k)), ``X.inv @ m`` a motion to the parent; ``X.T @ P @ X`` and
    ``X @ Y @ X.T`` are the congruences of inertias and compliances."""

    E: Mat3
    r: Vec3

    @overload
    def __matmul__(self, x: Motion) -> Pending[Motion]: ...

    @overload
    def __matmul__(self, x: Compliance) -> _Congruence: ...

    def __matmul__(self, x: Motion | Compliance) -> Pending[Motion] | _Congruence:
        if isinstance(x, Compliance):
            return _Congruence(self, x)
        return Pending(lambda b: self._motion(b, x))

    @property
    def T(self) -> TransposedTransform:
        return TransposedTransform(self)

    @property
    def inv(self) -> InverseTransform:
        return InverseTransform(self)

    # the products, each emitting its intermediate results and its value
    def _motion(self, b: ProgramBuilder, m: Motion) -> Motion:
        """``X m = [E ω; E (v − r × ω)]``."""
        w = m.angular
        lin = emit_vec(b, sub(m.linear, cross(self.r, w)))
        return Motion(emit_vec(b, mat_vec(self.E, w) + mat_vec(self.E, lin)))

    def _motion_to_parent(self, b: ProgramBuilder, m: Motion) -> Motion:
        """``X⁻¹ m = [Eᵀω; Eᵀv + r × Eᵀω]``."""
        w = emit_vec(b, mat_t_vec(self.E, m.angular))
        lin = emit_vec(b, mat_t_vec(self.E, m.linear))
        return Motion(emit_vec(b, w + add(lin, cross(self.r, w))))

    def _force_to_parent(self, b: ProgramBuilder, f: Force) -> Force:
        """``Xᵀ f = [Eᵀn + r × Eᵀf; Eᵀf]``."""
        n = emit_vec(b, mat_t_vec(self.E, f.angular))
        lin = emit_vec(b, mat_t_vec(self.E, f.linear))
        return Force(emit_vec(b, add(n, cross(self.r, lin)) + lin))

    # tuple forms
    def motion(self, b: ProgramBuilder, m: Sequence[Expr]) -> Vec6:
        """``X m``: a motion vector from parent to child coordinates."""
        return self._motion(b, Motion(m))._v

    def motion_to_parent(self, b: ProgramBuilder, m: Sequence[Expr]) -> Vec6:
        """``X⁻¹ m``: a motion vector from child to parent coordinates."""
        return self._motion_to_parent(b, Motion(m))._v

    def force_to_parent(self, b: ProgramBuilder, f: Sequence[Expr]) -> Vec6:
        """``Xᵀ f``: a force from child to parent coordinates (Jain's φ(℘(k), k) f)."""
        return self._force_to_parent(b, Force(f))._v


@dataclass(frozen=True)
class Pose:
    """Pose of a frame in a reference frame: rotation ``R`` (reference coordinates from
    frame coordinates) and origin ``p`` (Featherstone 2008, §2.8). ``A * B`` composes
    (B given in A), ``Pose.of(X)`` is the pose of a transform's child frame in its parent
    and ``pose.transform()`` the Plücker transform reference → frame."""

    R: Mat3 = IDENTITY3
    p: Vec3 = ZERO3

    @staticmethod
    def of(x: Transform) -> Pose:
        return Pose(mat3(transpose(x.E)), x.r)

    def __mul__(self, other: Pose) -> Pose:
        """``(R₁, p₁)(R₂, p₂) = (R₁R₂, R₁p₂ + p₁)``."""
        return Pose(mat3(mat_mul(self.R, other.R)), vec3(add(mat_vec(self.R, other.p), self.p)))

    def emit(self, b: ProgramBuilder) -> Pose:
        return Pose(mat3(emit_mat(b, self.R)), vec3(emit_vec(b, self.p)))

    def transform(self) -> Transform:
        return Transform(mat3(transpose(self.R)), self.p)

    def rows(self) -> list[Expr]:
        """``[R | p]`` row-major (the top 3 rows of the homogeneous transform)."""
        return [x for i in range(3) for x in (*self.R[i], self.p[i])]


@dataclass(frozen=True)
class TransposedTransform:
    """``Xᵀ``: forces child → parent; ``X.T @ P @ X`` moves an inertia to the parent."""

    X: Transform

    @overload
    def __matmul__(self, x: Force) -> Pending[Force]: ...

    @overload
    def __matmul__(self, x: Inertia | ArticulatedInertia) -> _Congruence: ...

    def __matmul__(
        self, x: Force | Inertia | ArticulatedInertia
    ) -> Pending[Force] | _Congruence:
        if isinstance(x, Force):
            return Pending(lambda b: self.X._force_to_parent(b, x))
        return _Congruence(self.X, x)


@dataclass(frozen=True)
class InverseTransform:
    """``X⁻¹``: motions child → parent."""

    X: Transform

    def __matmul__(self, m: Motion) -> Pending[Motion]:
        return Pending(lambda b: self.X._motion_to_parent(b, m))


@dataclass(frozen=True)
class _Congruence:
    """Half of ``Xᵀ P X`` (``X.T @ P``) or of ``X Y Xᵀ`` (``X @ Y``)."""

    X: Transform
    inner: Inertia | ArticulatedInertia | Compliance

    @overload
    def __matmul__(self, right: Transform) -> Pending: ...

    @overload
    def __matmul__(self, right: TransposedTransform) -> Pending: ...

    def __matmul__(self, right: Transform | TransposedTransform) -> Pending:
        x, inner = self.X, self.inner
        outer = right.X if isinstance(right, TransposedTransform) else right
        if outer is not x and outer != x:
            raise TypeError("a congruence needs the same transform on both sides")
        if isinstance(inner, Compliance) and isinstance(right, TransposedTransform):
            return Pending(lambda b: inner._to_child(b, x))
        if isinstance(inner, Inertia | ArticulatedInertia) and isinstance(right, Transform):
            return Pending(lambda b: inner._to_parent(b, x))
        raise TypeError("a congruence needs the same transform on both sides: Xᵀ P X, X Y Xᵀ")


# ---------------------------------------------------------------------- rigid-body inertia
@dataclass(frozen=True)
class Inertia:
    """Spatial inertia of a rigid body about a frame origin (Featherstone 2008, eq. 2.63):
    mass ``m``, first moment ``h = m c`` and rotational inertia ``J`` about the origin,
    ``M = [[J, h×], [−h×, m 1]]`` (Jain 2009, §2: M(k) with 𝒥 = J and h = m p)."""

    m: Expr
    h: Vec3
    J: Mat3

    def __matmul__(self, v: Motion) -> Force:
        """``M v = [J ω + h × u; m u − h × ω]``."""
        w, u = v.angular, v.linear
        n = add(mat_vec(self.J, w), cross(self.h, u))
        f = sub(scale(self.m, u), cross(self.h, w))
        return Force(n + f)

    def __add__(self, other: Inertia) -> Inertia:
        if not isinstance(other, Inertia):
            return NotImplemented
        return Inertia(
            self.m + other.m,
            vec3(add(self.h, other.h)),
            mat3(add(r1, r2) for r1, r2 in zip(self.J, other.J, strict=True)),
        )

    def emit(self, b: ProgramBuilder) -> Inertia:
        return Inertia(b.emit(self.m), vec3(emit_vec(b, self.h)), mat3(emit_sym(b, self.J)))

    def _to_parent(self, b: ProgramBuilder, x: Transform) -> Inertia:
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
        inertia = mat3(emit_sym(b, [add(i1[i], shift[i]) for i in range(3)]))
        return Inertia(self.m, vec3(emit_vec(b, add(h1, mr))), inertia)

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

    # tuple forms
    def times(self, b: ProgramBuilder, v: Sequence[Expr]) -> Vec6:
        """``M v`` for a motion vector v, emitted."""
        return (self @ Motion(v)).emit(b)._v

    def add(self, b: ProgramBuilder, other: Inertia) -> Inertia:
        return (self + other).emit(b)

    def to_parent(self, b: ProgramBuilder, x: Transform) -> Inertia:
        return self._to_parent(b, x)


#: The former name of :class:`Inertia`.
RigidInertia = Inertia


def rigid_inertia(
    b: ProgramBuilder, mass: Expr, com: Sequence[Expr], inertia_com: Sequence[Sequence[Expr]]
) -> Inertia:
    """Inertia about the body origin from mass, centre of mass and inertia about the COM:
    ``I = I_c − m c×c×`` (Featherstone 2008, eq. 2.63)."""
    h = vec3(emit_vec(b, scale(mass, com)))
    cx = skew(com)
    hx = skew(h)
    about_origin = [
        [inertia_com[i][j] - esum([hx[i][k] * cx[k][j] for k in range(3)])
         for j in range(3)]
        for i in range(3)
    ]
    return Inertia(b.emit(mass), h, mat3(emit_sym(b, about_origin)))


# ---------------------------------------------------------------------- symmetric 6×6
class _Sym6:
    """A symmetric 6×6 operator (only the upper triangle is ever emitted)."""

    __slots__ = ("rows",)

    def __init__(self, rows: Sequence[Sequence[Expr]]) -> None:
        self.rows: Mat = tuple(tuple(r) for r in rows)

    @classmethod
    def zero(cls) -> Self:
        return cls(tuple((ZERO,) * 6 for _ in range(6)))

    def __add__(self, other: Self) -> Self:
        if type(other) is not type(self):
            return NotImplemented
        return type(self)([add(r1, r2) for r1, r2 in zip(self.rows, other.rows, strict=True)])

    def __sub__(self, other: Self) -> Self:
        if type(other) is not type(self):
            return NotImplemented
        return type(self)(
            [[x - y for x, y in zip(r1, r2, strict=True)]
             for r1, r2 in zip(self.rows, other.rows, strict=True)]
        )

    def emit(self, b: ProgramBuilder) -> Self:
        return type(self)(emit_sym(b, self.rows))


class ArticulatedInertia(_Sym6):
    """An articulated-body inertia P, motions → forces (Jain 2009, eq. 9;
    Featherstone 2008, §7.2)."""

    __slots__ = ()

    def __matmul__(self, m: Motion) -> Force:
        return Force(mat_vec(self.rows, m._v))

    def _to_parent(self, b: ProgramBuilder, x: Transform) -> ArticulatedInertia:
        return ArticulatedInertia(sym6_to_parent(b, x, self.rows))


class Compliance(_Sym6):
    """A symmetric compliance Υ, forces → motions (Jain, *Partitioning*, eq. 22)."""

    __slots__ = ()

    def __matmul__(self, f: Force) -> Motion:
        return Motion(mat_vec(self.rows, f._v))

    def _to_child(self, b: ProgramBuilder, x: Transform) -> Compliance:
        return Compliance(motion_sym6_to_child(b, x, self.rows))


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
    return block6(mat3(a_new), b_new, c1)


def motion_sym6_to_child(b: ProgramBuilder, x: Transform, y: Sequence[Sequence[Expr]]) -> Mat:
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


# ---------------------------------------------------------------------- tuple forms
def motion_cross(b: ProgramBuilder, v: Sequence[Expr], m: Sequence[Expr]) -> Vec6:
    """``v ×  m`` for motion vectors (Featherstone 2008, eq. 2.31), emitted."""
    return Motion(v).cross(Motion(m)).emit(b)._v


def force_cross(b: ProgramBuilder, v: Sequence[Expr], f: Sequence[Expr]) -> Vec6:
    """``v ×* f`` for a motion v and a force f (Featherstone 2008, eq. 2.32), emitted."""
    return Motion(v).cross_star(Force(f)).emit(b)._v


__all__ = [
    "IDENTITY3",
    "ONE",
    "ZERO",
    "ZERO3",
    "ZERO6",
    "ArticulatedInertia",
    "Compliance",
    "Force",
    "ForceMap",
    "Inertia",
    "InverseTransform",
    "JointMap",
    "JointVector",
    "Motion",
    "Pending",
    "Pose",
    "RigidInertia",
    "Transform",
    "TransposedTransform",
    "add",
    "block6",
    "cross",
    "dot",
    "emit_mat",
    "emit_sym",
    "emit_vec",
    "force_cross",
    "mat3",
    "mat_mul",
    "mat_t_vec",
    "mat_vec",
    "motion_cross",
    "motion_sym6_to_child",
    "number",
    "quaternion_rotation",
    "realize",
    "rigid_inertia",
    "rotate_gen",
    "rotate_sym",
    "rotation_about",
    "scale",
    "skew",
    "sub",
    "sym6_to_parent",
    "transpose",
    "vec3",
    "vec6",
]
