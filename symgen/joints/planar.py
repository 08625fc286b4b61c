"""Planar joint: q = (x, y, θ), a translation x e1 + y e2 in the plane of normal n and a
rotation θ about n (e1, e2: :func:`symgen.model.transform.planar_directions`). In child
coordinates S = [[0, 0, n], [Rᵀe1, Rᵀe2, 0]] and, with d/dt(Rᵀ) = −θ̇ n× Rᵀ,
c_J = [0; θ̇ (Rᵀ(ẋ e1 + ẏ e2)) × n] (Featherstone 2008, §4.4, eqs. 4.34-4.35);
partitioned: two prismatics and a revolute."""

from __future__ import annotations

from collections.abc import Sequence

from symgen.ir.expr import Expr
from symgen.ir.program import ProgramBuilder
from symgen.joints.base import JointKind, Step, angular, linear, revolute_rotation
from symgen.model import JointType
from symgen.model.transform import planar_directions
from symgen.spatial import IDENTITY3, ZERO3, Vec6, add, cross, emit_vec, mat_t_vec, scale, vec3


class Planar(JointKind):
    type = JointType.PLANAR
    partitionable = True
    natural_spatial = True

    def steps(self, b, k, joint, qj, partition):
        a = k.unit_vec(joint.axis)
        e1, e2 = planar_directions(joint.axis)
        e1, e2 = k.unit_vec(e1), k.unit_vec(e2)
        if partition:
            return [
                Step(IDENTITY3, vec3(emit_vec(b, scale(qj[0], e1))), [linear(e1)], [0]),
                Step(IDENTITY3, vec3(emit_vec(b, scale(qj[1], e2))), [linear(e2)], [1]),
                Step(revolute_rotation(b, a, qj[2]), ZERO3, [angular(a)], [2]),
            ]
        rot = revolute_rotation(b, a, qj[2])
        p = vec3(emit_vec(b, add(scale(qj[0], e1), scale(qj[1], e2))))
        d1, d2 = emit_vec(b, mat_t_vec(rot, e1)), emit_vec(b, mat_t_vec(rot, e2))

        def bias(bb: ProgramBuilder, vj: Sequence[Expr]) -> Vec6:
            lin = emit_vec(bb, add(scale(vj[0], d1), scale(vj[1], d2)))
            return linear(emit_vec(bb, scale(vj[2], cross(lin, a))))

        cols = [linear(d1), linear(d2), angular(a)]
        return [Step(rot, p, cols, [0, 1, 2], bias)]

    def natural_entities(self, m, joint, info, point, axis, jrot):
        """The normal is shared; each body carries its own point."""
        name, parent, child = joint.name, info["parent"], info["child"]
        info["normal"] = m.shared(f"{name}.normal", "u", parent, child, axis)
        info["pp"] = m.own(f"{name}/parent", "p", parent, point)
        info["pc"] = m.own(f"{name}/child", "p", child, point)

    def natural_equations(self, m, name, info):
        """The child's point stays in the plane: (r_C − r_P)·n = 0."""
        r = m.symbol_of
        gap = r[info["pc"]] - r[info["pp"]]
        m.equation(gap.dot(r[info["normal"]]), f"{name}: in the plane")


__all__ = ["Planar"]
