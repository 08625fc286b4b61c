"""Cylindrical joint: q = (d, θ), a slide d along the unit axis a and a rotation θ about it,
S = [[0, a], [a, 0]] (Featherstone 2008, Table 4.1); partitioned: prismatic + revolute."""

from __future__ import annotations

from symgen.joints._natural import on_axis_equations, slide_entities
from symgen.joints.base import JointKind, Step, angular, linear, revolute_rotation
from symgen.model import JointType
from symgen.spatial import IDENTITY3, ZERO3, emit_vec, scale, vec3


class Cylindrical(JointKind):
    type = JointType.CYLINDRICAL
    partitionable = True
    natural_spatial = True

    def steps(self, b, k, joint, qj, partition):
        a = k.unit_vec(joint.axis)
        slide = vec3(emit_vec(b, scale(qj[0], a)))
        if partition:
            return [
                Step(IDENTITY3, slide, [linear(a)], [0]),
                Step(revolute_rotation(b, a, qj[1]), ZERO3, [angular(a)], [1]),
            ]
        rot = revolute_rotation(b, a, qj[1])
        return [Step(rot, slide, [linear(a), angular(a)], [0, 1])]

    def natural_entities(self, m, joint, info, point, axis, jrot):
        slide_entities(m, joint.name, info, point, axis)

    def natural_equations(self, m, name, info):
        on_axis_equations(m, name, info)


__all__ = ["Cylindrical"]
