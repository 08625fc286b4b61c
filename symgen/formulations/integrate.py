"""q ⊕ v·dt on each joint's manifold (docs/conventions.md, "Configuration integration"):
each joint type's own step (:meth:`symgen.joints.base.JointKind.integrate`): vector joints
add v·dt; a spherical joint right-multiplies its quaternion by exp(ω dt/2); a free joint
applies the SE(3) exponential of its body twist, (p, R) ← (p, R)·exp([ω; v] dt) (Murray, Li
& Sastry 1994, eq. 2.36). And its derivative at dt = 0, the configuration rate q̇(q, v) a
standard ODE solver advances q with (:meth:`symgen.joints.base.JointKind.rate`): v for
vector joints, ½ q ⊗ (ω, 0) for a quaternion (Solà 2017), R v for a free joint's position.
"""

from __future__ import annotations

from collections.abc import Sequence

from symgen.ir.expr import Expr
from symgen.ir.program import ProgramBuilder
from symgen.joints import JOINT_TYPES
from symgen.joints.exponential import SMALL_ANGLE_SQ
from symgen.model import Model


def integrate(
    b: ProgramBuilder, model: Model, q: Sequence[Expr], v: Sequence[Expr], dt: Expr
) -> list[Expr]:
    out = list(q)
    for joint in model.independent_joints:  # coupled joints follow their masters
        qs, vs = model.q_slices[joint.name], model.v_slices[joint.name]
        step = [b.emit(x * dt) for x in v[vs]]
        out[qs] = JOINT_TYPES[joint.type].integrate(b, list(q[qs]), step)
    return out


def configuration_rates(
    b: ProgramBuilder, model: Model, q: Sequence[Expr], v: Sequence[Expr]
) -> list[Expr]:
    """q̇ (nq) at (q, v): each joint type's rate; d/dt (q ⊕ v·t) at t = 0."""
    out = list(q)
    for joint in model.independent_joints:  # coupled joints follow their masters
        qs, vs = model.q_slices[joint.name], model.v_slices[joint.name]
        out[qs] = JOINT_TYPES[joint.type].rate(b, list(q[qs]), list(v[vs]))
    return out


__all__ = ["SMALL_ANGLE_SQ", "configuration_rates", "integrate"]
