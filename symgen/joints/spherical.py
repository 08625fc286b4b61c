"""Spherical joint: q = unit quaternion (qx, qy, qz, qw), v = ω in child coordinates,
S = [I; 0] (Featherstone 2008, Table 4.1); q ⊕ ω dt = q ⊗ exp(ω dt/2), and its rate
q̇ = ½ q ⊗ (ω, 0) (Solà 2017). Partitioned: three 1-DOF sub-hinges whose frames
coincide."""

from __future__ import annotations

from symgen.joints.base import JointKind, Step, unit6
from symgen.joints.exponential import quaternion_product, quaternion_rate, rotation_step
from symgen.model import JointType
from symgen.spatial import IDENTITY3, ZERO3, emit_mat, mat3, quaternion_rotation


class Spherical(JointKind):
    type = JointType.SPHERICAL
    partitionable = True
    coincident_subframes = True
    natural_spatial = True
    natural_pin = "point"

    def steps(self, b, k, joint, qj, partition):
        rot = mat3(emit_mat(b, quaternion_rotation(*qj)))
        cols = [unit6(i) for i in range(3)]
        if partition:
            return [Step(rot if i == 0 else IDENTITY3, ZERO3, [cols[i]], [i]) for i in range(3)]
        return [Step(rot, ZERO3, cols, [0, 1, 2])]

    def integrate(self, b, qj, step):
        dq, _, _ = rotation_step(b, step)
        return quaternion_product(b, qj, dq)

    def rate(self, b, qj, vj):
        """q̇ = ½ q ⊗ (ω, 0), ω = v in the child frame."""
        return quaternion_rate(b, qj, vj)

    def natural_entities(self, m, joint, info, point, axis, jrot):
        """The point is shared (by every body of the pin): no equation."""
        info["point"] = m.pin(joint.name, info["parent"], info["child"], point)

    def natural_reader(self, m, info):
        """The relative rotation R_Pᵀ R_C of the two bodies."""
        parent, child = info["parent"], info["child"]
        return lambda qv: m.body_rotation(parent, qv).T @ m.body_rotation(child, qv)


__all__ = ["Spherical"]
