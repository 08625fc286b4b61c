"""Symbolic exponential maps for q ⊕ v·dt on SO(3) and SE(3) (docs/conventions.md,
"Configuration integration"; Murray, Li & Sastry 1994, eq. 2.36), and their derivative at
dt = 0, the quaternion rate ½ q ⊗ (ω, 0). Near zero rotation the sinc-type coefficients
switch to their Taylor series (a branch-free selection in the generated code)."""

from __future__ import annotations

from collections.abc import Sequence

from symgen.ir.expr import ZERO, Expr, cos, select, sin, sqrt
from symgen.ir.program import ProgramBuilder
from symgen.spatial import add, cross, emit_vec, scale

#: Below this squared rotation angle (rad²) the Taylor series replace the closed forms; the
#: first omitted term is then below 1e-20.
SMALL_ANGLE_SQ = 1e-8


def select_small(b: ProgramBuilder, theta_sq: Expr, exact: Expr, series: Expr) -> Expr:
    """``series`` when θ² < SMALL_ANGLE_SQ, else ``exact``, emitted."""
    return b.emit(select(theta_sq < SMALL_ANGLE_SQ, series, exact))


def rotation_step(b: ProgramBuilder, w: Sequence[Expr]) -> tuple[list[Expr], Expr, Expr]:
    """Unit quaternion exp(w/2) = (w·sin(θ/2)/θ, cos(θ/2)), θ = |w|; also θ², θ."""
    theta_sq = b.emit(sum((x * x for x in w), ZERO))
    theta = b.emit(sqrt(theta_sq))
    half = b.emit(theta / 2)
    sinc = select_small(b, theta_sq, sin(half) / theta, 0.5 - theta_sq / 48)
    cosine = select_small(b, theta_sq, cos(half), 1 - theta_sq / 8)
    return [b.emit(x * sinc) for x in w] + [cosine], theta_sq, theta


def quaternion_product(b: ProgramBuilder, p: Sequence[Expr], q: Sequence[Expr]) -> list[Expr]:
    """Hamilton product of scalar-last quaternions."""
    pv, pw, qv, qw = p[:3], p[3], q[:3], q[3]
    vec = add(add(scale(pw, qv), scale(qw, pv)), cross(pv, qv))
    scalar = pw * qw - sum(x * y for x, y in zip(pv, qv, strict=True))
    return list(emit_vec(b, vec)) + [b.emit(scalar)]


def quaternion_rate(b: ProgramBuilder, quat: Sequence[Expr], omega: Sequence[Expr]) -> list[Expr]:
    """q̇ = ½ q ⊗ (ω, 0) of the unit quaternion q (scalar last) of a frame turning with
    angular velocity ω expressed in that (body) frame: Solà, "Quaternion kinematics for the
    error-state Kalman filter", 2017 (arXiv:1711.02508), "Time derivatives", q̇ = ½ q ⊗ ω_L
    with ω_L the local rate; the derivative of q ⊗ exp(ω t/2) at t = 0."""
    return quaternion_product(b, quat, [*(b.emit(0.5 * w) for w in omega), ZERO])


__all__ = ["SMALL_ANGLE_SQ", "quaternion_product", "quaternion_rate", "rotation_step",
           "select_small"]
