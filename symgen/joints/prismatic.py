"""Prismatic joint: q = displacement along the unit axis a, S = [0; a]
(Featherstone 2008, Table 4.1)."""

from __future__ import annotations

from symgen.joints._natural import on_axis_equations, slide_entities
from symgen.joints.base import JointKind, Step, linear
from symgen.model import JointType
from symgen.spatial import IDENTITY3, emit_vec, scale, vec3


class Prismatic(JointKind):
    type = JointType.PRISMATIC
    natural_planar = "prismatic"
    natural_spatial = True

    def steps(self, b, k, joint, qj, partition):
        a = k.unit_vec(joint.axis)
        p = vec3(emit_vec(b, scale(qj[0], a)))
        return [Step(IDENTITY3, p, [linear(a)], [0])]

    def natural_entities(self, m, joint, info, point, axis, jrot):
        slide_entities(m, joint.name, info, point, axis)

    def natural_equations(self, m, name, info):
        """On the axis, plus w₁(parent)·w₂(child) = 0, which stops the rotation about it
        (García de Jalón & Bayo 1994, §2.2.3)."""
        on_axis_equations(m, name, info)
        w1, w2 = info["w"]
        lock = m.on_body(info["parent"], w1).dot(m.on_body(info["child"], w2))
        m.equation(lock, f"{name}: no rotation about the axis")

    def natural_coordinate(self, m, info):
        """The displacement (r_C − r_P)·u along the shared axis."""
        gap = m.symbol_of[info["pc"]] - m.symbol_of[info["pp"]]
        return "length", (gap.dot(m.symbol_of[info["axis"]]),)


__all__ = ["Prismatic"]
