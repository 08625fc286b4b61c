"""The spatial types over IR expressions: motion and force vectors, joint vectors and maps
(Featherstone 2008, §2.2-2.3), Plücker transforms X = [[E, 0], [−E r×, E]] (eq. 2.24) with
their transposes and inverses, rigid-body inertias (§2.13), symmetric 6x6 matrices
(articulated inertias, compliances) and the tuple forms of the spatial cross products (the
operators of the book: :mod:`symgen.spatial`)."""


from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, Self, TypeVar, overload

from symgen.ir.expr import ZERO, Expr, esum
from symgen.ir.program import ProgramBuilder
from symgen.spatial.vectors import (
    IDENTITY3,
    ZERO3,
    ZERO6,
    Mat,
    Mat3,
    Pending,
    Vec3,
    Vec6,
    add,
    cross,
    dot,
    emit_mat,
    emit_sym,
    emit_vec,
    mat3,
    mat_mul,
    mat_t_vec,
    mat_vec,
    motion_sym6_to_child,
    rotate_sym,
    scale,
    skew,
    sub,
    sym6_to_parent,
    transpose,
    vec3,
    vec6,
)


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


# ---------------------------------------------------------------------- tuple forms
def motion_cross(b: ProgramBuilder, v: Sequence[Expr], m: Sequence[Expr]) -> Vec6:
    """``v ×  m`` for motion vectors (Featherstone 2008, eq. 2.31), emitted."""
    return Motion(v).cross(Motion(m)).emit(b)._v


def force_cross(b: ProgramBuilder, v: Sequence[Expr], f: Sequence[Expr]) -> Vec6:
    """``v ×* f`` for a motion v and a force f (Featherstone 2008, eq. 2.32), emitted."""
    return Motion(v).cross_star(Force(f)).emit(b)._v


__all__ = ["ArticulatedInertia", "Compliance", "Force", "force_cross", "ForceMap", "Inertia",
           "InverseTransform", "JointMap", "JointVector", "Motion", "motion_cross", "Pose",
           "rigid_inertia", "RigidInertia", "Transform", "TransposedTransform"]
