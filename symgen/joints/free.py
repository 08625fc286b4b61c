"""Free joint: q = (x, y, z, qx, qy, qz, qw), the child origin in the joint frame and the
unit quaternion of its rotation; v = [ω; v] the body twist in child coordinates, S = I₆
(Featherstone 2008, Table 4.1). q ⊕ v dt = (p, R)·exp([ω; v] dt) (Murray, Li & Sastry 1994,
eq. 2.36), and its rate: with the body twist ĝ⁻¹ġ = [ω; v] (ibid., §2.4), ṗ = R v and
q̇_quat = ½ q ⊗ (ω, 0) (Solà 2017). Partitioned: six 1-DOF sub-hinges whose frames
coincide."""

from __future__ import annotations

from symgen.ir.expr import cos, sin
from symgen.joints.base import JointKind, Step, unit6
from symgen.joints.exponential import (
    quaternion_product,
    quaternion_rate,
    rotation_step,
    select_small,
)
from symgen.model import JointType
from symgen.spatial import (
    IDENTITY3,
    ZERO3,
    add,
    cross,
    emit_mat,
    emit_vec,
    mat3,
    mat_vec,
    quaternion_rotation,
    scale,
)


class Free(JointKind):
    type = JointType.FREE
    partitionable = True
    coincident_subframes = True
    natural_spatial = True

    def steps(self, b, k, joint, qj, partition):
        rot = mat3(emit_mat(b, quaternion_rotation(*qj[3:7])))
        p = (qj[0], qj[1], qj[2])
        cols = [unit6(i) for i in range(6)]
        if partition:
            return [
                Step(rot if i == 0 else IDENTITY3, p if i == 0 else ZERO3, [cols[i]], [i])
                for i in range(6)
            ]
        return [Step(rot, p, cols, list(range(6)))]

    def integrate(self, b, qj, step):
        """Translation p + R V(ω) v with V(w) = 1 + c1 w× + c2 (w×)²."""
        w, lin = step[:3], step[3:]
        dq, theta_sq, theta = rotation_step(b, w)
        c1 = select_small(b, theta_sq, (1 - cos(theta)) / theta_sq, 0.5 - theta_sq / 24)
        c2 = select_small(
            b, theta_sq, (theta - sin(theta)) / (theta_sq * theta), (1.0 / 6.0) - theta_sq / 120
        )
        wl = emit_vec(b, cross(w, lin))
        wwl = emit_vec(b, cross(w, wl))
        trans = emit_vec(b, add(lin, add(scale(c1, wl), scale(c2, wwl))))
        rot = emit_mat(b, quaternion_rotation(*qj[3:]))
        position = emit_vec(b, add(qj[:3], mat_vec(rot, trans)))
        return list(position) + quaternion_product(b, qj[3:], dq)

    def rate(self, b, qj, vj):
        """ṗ = R(q) v (v the body-frame velocity of the origin), q̇ = ½ q ⊗ (ω, 0)."""
        rot = emit_mat(b, quaternion_rotation(*qj[3:]))
        return list(emit_vec(b, mat_vec(rot, vj[3:]))) + quaternion_rate(b, qj[3:], vj[:3])


__all__ = ["Free"]
