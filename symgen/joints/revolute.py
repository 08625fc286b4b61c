"""Revolute and continuous joints: q = angle about the unit axis a, S = [a; 0]
(Featherstone 2008, Table 4.1). A continuous joint is a revolute joint without limits."""

from __future__ import annotations

from symgen.joints._natural import perpendiculars
from symgen.joints.base import JointKind, Step, angular, revolute_rotation
from symgen.model import JointType
from symgen.spatial import ZERO3


class Revolute(JointKind):
    type = JointType.REVOLUTE
    natural_planar = "revolute"
    natural_spatial = True
    natural_pin = "axis"

    def steps(self, b, k, joint, qj, partition):
        a = k.unit_vec(joint.axis)
        return [Step(revolute_rotation(b, a, qj[0]), ZERO3, [angular(a)], [0])]

    def natural_entities(self, m, joint, info, point, axis, jrot):
        """The joint point and the axis vector are shared (with the other revolute joints
        of the pin whose axes are parallel or antiparallel, ``axis_sign`` = ±1): no
        equation."""
        parent, child = info["parent"], info["child"]
        info["point"] = m.pin(joint.name, parent, child, point)
        info["axis"], info["axis_sign"] = m.pin_axis(joint.name, parent, child, axis)

    def natural_coordinate(self, m, info):
        """The angle about the shared axis between copies of a vector ⟂ to it fixed on each
        body: (s, c) = ((w_P × w_C)·a, w_P·w_C), negated when the joint's axis is −a."""
        w1, _ = perpendiculars(m.entities[info["axis"]].world)
        wp, wc = m.on_body(info["parent"], w1), m.on_body(info["child"], w1)
        axis = m.symbol_of[info["axis"]]
        return "angle", (wp.cross(wc).dot(axis), wp.dot(wc)), 0.0, info["axis_sign"]


class Continuous(Revolute):
    type = JointType.CONTINUOUS


__all__ = ["Continuous", "Revolute"]
