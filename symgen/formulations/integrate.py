"""q ⊕ v·dt on each joint's manifold (docs/conventions.md, "Configuration integration"):
vector joints add v·dt; a spherical joint right-multiplies its quaternion by exp(ω dt/2);
a free joint applies the SE(3) exponential of its body twist, (p, R) ← (p, R)·exp([ω; v] dt)
(Murray, Li & Sastry 1994, eq. 2.36). Near zero rotation the sinc-type coefficients switch to
their Taylor series (a branch-free selection in the generated code).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..expr import ZERO, Expr, cos, select, sin, sqrt
from ..model import JointType, Model
from ..program import ProgramBuilder
from ..spatial import add, cross, emit_mat, emit_vec, mat_vec, quaternion_rotation, scale

#: Below this squared rotation angle (rad²) the Taylor series replace the closed forms; the
#: first omitted term is then below 1e-20.
SMALL_ANGLE_SQ = 1e-8


def _select(b: ProgramBuilder, theta_sq: Expr, exact: Expr, series: Expr) -> Expr:
    return b.emit(select(theta_sq < SMALL_ANGLE_SQ, series, exact))


def _rotation_step(b: ProgramBuilder, w: Sequence[Expr]) -> tuple[list[Expr], Expr, Expr]:
    """Unit quaternion exp(w/2) = (w·sin(θ/2)/θ, cos(θ/2)), θ = |w|; also θ², θ."""
    theta_sq = b.emit(sum((x * x for x in w), ZERO))
    theta = b.emit(sqrt(theta_sq))
    half = b.emit(theta / 2)
    sinc = _select(b, theta_sq, sin(half) / theta, 0.5 - theta_sq / 48)
    cosine = _select(b, theta_sq, cos(half), 1 - theta_sq / 8)
    return [b.emit(x * sinc) for x in w] + [cosine], theta_sq, theta


def _quaternion_product(b: ProgramBuilder, p: Sequence[Expr], q: Sequence[Expr]) -> list[Expr]:
    """Hamilton product of scalar-last quaternions."""
    pv, pw, qv, qw = p[:3], p[3], q[:3], q[3]
    vec = add(add(scale(pw, qv), scale(qw, pv)), cross(pv, qv))
    scalar = pw * qw - sum(x * y for x, y in zip(pv, qv, strict=True))
    return list(emit_vec(b, vec)) + [b.emit(scalar)]


def integrate(
    b: ProgramBuilder, model: Model, q: Sequence[Expr], v: Sequence[Expr], dt: Expr
) -> list[Expr]:
    out = list(q)
    for joint in model.joints:
        qs, vs = model.q_slices[joint.name], model.v_slices[joint.name]
        qj = list(q[qs])
        step = [b.emit(x * dt) for x in v[vs]]
        if joint.type is JointType.SPHERICAL:
            dq, _, _ = _rotation_step(b, step)
            out[qs] = _quaternion_product(b, qj, dq)
        elif joint.type is JointType.FREE:
            w, lin = step[:3], step[3:]
            dq, theta_sq, theta = _rotation_step(b, w)
            # V(w) lin = lin + c1 w × lin + c2 w × (w × lin)
            c1 = _select(
                b, theta_sq, (1 - cos(theta)) / theta_sq,
                0.5 - theta_sq / 24,
            )
            c2 = _select(
                b, theta_sq, (theta - sin(theta)) / (theta_sq * theta),
                (1.0 / 6.0) - theta_sq / 120,
            )
            wl = emit_vec(b, cross(w, lin))
            wwl = emit_vec(b, cross(w, wl))
            trans = emit_vec(b, add(lin, add(scale(c1, wl), scale(c2, wwl))))
            rot = emit_mat(b, quaternion_rotation(*qj[3:]))
            position = emit_vec(b, add(qj[:3], mat_vec(rot, trans)))
            out[qs] = list(position) + _quaternion_product(b, qj[3:], dq)
        else:
            out[qs] = [b.emit(x + s) for x, s in zip(qj, step, strict=True)]
    return out


__all__ = ["SMALL_ANGLE_SQ", "integrate"]
