"""A URDF that describes a symgen ``Model`` exactly, for peers that read URDF (Pinocchio through
casadi_kin_dyn).

The model's fixed joints are already merged, so the URDF holds one link per body and one
revolute or prismatic joint per tree joint; each ``<inertial>`` is the body's COM (rpy 0) and
inertia about it in body axes. Continuous joints are written as revolute (Pinocchio would
store them as (cos θ, sin θ)). A free joint ``root_joint`` from the root is left out: the URDF
then starts at its child link and the reader adds the floating base itself
(:func:`floating_base`).
"""

from __future__ import annotations

import math
from xml.sax.saxutils import quoteattr

from symgen.model import JointType, Model

Mat = tuple[tuple[float, float, float], ...]

#: Joint limits written for every joint (they do not enter the dynamics).
BIG = 1e4

_URDF_TYPES = {
    JointType.REVOLUTE: "revolute",
    JointType.CONTINUOUS: "revolute",
    JointType.PRISMATIC: "prismatic",
}


def _num(x: float) -> str:
    return repr(float(x))


def _vec(v) -> str:
    return " ".join(_num(x) for x in v)


def rpy_from_rotation(r: Mat) -> tuple[float, float, float]:
    """URDF (roll, pitch, yaw) with ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    cp = math.hypot(r[0][0], r[1][0])
    pitch = math.atan2(-r[2][0], cp)
    if cp > 1e-12:
        return math.atan2(r[2][1], r[2][2]), pitch, math.atan2(r[1][0], r[0][0])
    # gimbal lock: take yaw = 0, then R = [[0, sp sr, sp cr], [0, cr, -sr], [-sp, 0, 0]]
    return math.atan2(-r[1][2], r[1][1]), pitch, 0.0


def floating_base(model: Model) -> bool:
    """True when ``model`` has a free joint from the root (left out of :func:`urdf_from_model`).

    Raises NotImplementedError for a free joint anywhere else, or for a root with other
    children besides the floating body: URDF cannot say either.
    """
    m = model.resolve()
    free = [i for i, j in enumerate(m.joints) if j.type is JointType.FREE]
    if not free:
        return False
    if free != [0] or m.parents[0] != -1:
        raise NotImplementedError("URDF route: only one free joint, from the root, is supported")
    if any(p == -1 for p in m.parents[1:]):
        raise NotImplementedError("URDF route: a floating base and other joints on the root")
    if not m.joints[0].placement.is_identity:
        raise NotImplementedError("URDF route: a free joint whose placement is not the identity")
    return True


def urdf_from_model(model: Model) -> str:
    """URDF text of ``model`` (parameters at their defaults); see the module docstring.

    Raises NotImplementedError for joint types URDF has no counterpart for (helical,
    cylindrical, universal, planar, spherical).
    """
    m = model.resolve()
    floating = floating_base(m)
    start = 1 if floating else 0
    links: list[str] = []
    joints: list[str] = []
    if not floating:
        links.append(f"  <link name={quoteattr(m.root)}/>")
    for body in m.bodies:
        c, inertia = body.com, body.inertia
        links.append(
            f"  <link name={quoteattr(body.name)}>\n"
            "    <inertial>\n"
            f'      <origin xyz="{_vec(c)}" rpy="0 0 0"/>\n'
            f'      <mass value="{_num(body.mass)}"/>\n'
            f'      <inertia ixx="{_num(inertia[0][0])}" ixy="{_num(inertia[0][1])}"'
            f' ixz="{_num(inertia[0][2])}" iyy="{_num(inertia[1][1])}"'
            f' iyz="{_num(inertia[1][2])}" izz="{_num(inertia[2][2])}"/>\n'
            "    </inertial>\n"
            "  </link>"
        )
    for joint in m.joints[start:]:
        kind = _URDF_TYPES.get(joint.type)
        if kind is None:
            raise NotImplementedError(
                f"URDF route: joint {joint.name!r} of type {joint.type.value!r} has no URDF form"
            )
        p = joint.placement
        rpy = rpy_from_rotation(p.rotation)
        axis = [float(x) for x in joint.axis]
        norm = math.sqrt(sum(x * x for x in axis))
        joints.append(
            f'  <joint name={quoteattr(joint.name)} type="{kind}">\n'
            f"    <parent link={quoteattr(joint.parent)}/>\n"
            f"    <child link={quoteattr(joint.child)}/>\n"
            f'    <origin xyz="{_vec(p.translation)}" rpy="{_vec(rpy)}"/>\n'
            f'    <axis xyz="{_vec(x / norm for x in axis)}"/>\n'
            f'    <limit lower="{-BIG}" upper="{BIG}" effort="{BIG}" velocity="{BIG}"/>\n'
            "  </joint>"
        )
    return (
        "\n".join(
            [
                '<?xml version="1.0"?>',
                f"<robot name={quoteattr(m.name)}>",
                *links,
                *joints,
                "</robot>",
            ]
        )
        + "\n"
    )


__all__ = ["floating_base", "rpy_from_rotation", "urdf_from_model"]
