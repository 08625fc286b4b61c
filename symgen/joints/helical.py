"""Helical (screw) joint: q = angle about the unit axis a, translation h·q along it,
S = [a; h a] (Featherstone 2008, Table 4.1; h = pitch in metres per radian)."""

from __future__ import annotations

from symgen.joints.base import JointKind, Step, revolute_rotation
from symgen.model import JointType
from symgen.spatial import emit_vec, scale, vec3, vec6


class Helical(JointKind):
    type = JointType.HELICAL

    def steps(self, b, k, joint, qj, partition):
        a = k.unit_vec(joint.axis)
        pitch = k.scalar(joint.pitch)
        s_col = vec6(emit_vec(b, (*a, *scale(pitch, a))))  # [a; h a]
        p = vec3(emit_vec(b, scale(b.emit(pitch * qj[0]), a)))
        return [Step(revolute_rotation(b, a, qj[0]), p, [s_col], [0])]



__all__ = ["Helical"]
