"""Universal joint: q = (q1, q2), rotations about a1 then about a2 (a2 in the frame after
the first rotation), R = Rot(a1, q1) Rot(a2, q2). In child coordinates ω = R2ᵀa1 q̇1 + a2 q̇2,
so S = [[R2ᵀa1, a2]; 0] and, with d/dt(R2ᵀ) = −q̇2 a2× R2ᵀ, c_J = [q̇1 q̇2 (R2ᵀa1) × a2; 0]
(Featherstone 2008, §4.4, eqs. 4.34-4.35); partitioned: two revolutes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from symgen.ir.expr import Expr
from symgen.ir.program import ProgramBuilder
from symgen.joints.base import JointKind, Step, angular, revolute_rotation
from symgen.model import JointType
from symgen.spatial import ZERO3, Vec6, cross, emit_mat, emit_vec, mat3, mat_mul, mat_t_vec, scale


class Universal(JointKind):
    type = JointType.UNIVERSAL
    partitionable = True
    natural_spatial = True
    natural_pin = "point"

    def steps(self, b, k, joint, qj, partition):
        a = k.unit_vec(joint.axis)
        a2 = k.unit_vec(joint.axis2)
        r1, r2 = revolute_rotation(b, a, qj[0]), revolute_rotation(b, a2, qj[1])
        if partition:
            return [Step(r1, ZERO3, [angular(a)], [0]), Step(r2, ZERO3, [angular(a2)], [1])]
        w1 = emit_vec(b, mat_t_vec(r2, a))  # R2ᵀ a1

        def bias(bb: ProgramBuilder, vj: Sequence[Expr]) -> Vec6:
            rate = bb.emit(vj[0] * vj[1])
            return angular(emit_vec(bb, scale(rate, cross(w1, a2))))

        rot = mat3(emit_mat(b, mat_mul(r1, r2)))
        return [Step(rot, ZERO3, [angular(w1), angular(a2)], [0, 1], bias)]

    def natural_entities(self, m, joint, info, point, axis, jrot):
        """The point is shared (by every body of the pin); each body carries its own axis
        (eq. 2.59)."""
        name, parent, child = joint.name, info["parent"], info["child"]
        info["point"] = m.pin(name, parent, child, point)
        a2 = jrot @ np.asarray(joint.axis2, float)
        info["a1"] = m.own(f"{name}.axis1", "u", parent, axis)
        info["a2"] = m.own(f"{name}.axis2", "u", child, a2 / np.linalg.norm(a2))

    def natural_equations(self, m, name, info):
        """a₁·a₂ keeps its assembled value (García de Jalón & Bayo 1994, eq. 2.59)."""
        a1, a2, r = info["a1"], info["a2"], m.symbol_of
        value = float(m.entities[a1].world @ m.entities[a2].world)
        m.equation(r[a1].dot(r[a2]) - value, f"{name}: axes angle")


__all__ = ["Universal"]
