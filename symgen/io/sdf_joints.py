"""The ``<axis>`` and ``<axis2>`` of SDFormat joints, for :mod:`symgen.io.sdf`: axis
directions, limits, the screw pitch, ``<mimic>`` couplings and ``<dynamics>`` (joint
springs and dampers).

``<dynamics>`` (joint.sdf): ``spring_stiffness`` k, ``spring_reference`` q₀ and ``damping``
c give the passive force −k (q − q₀) − c q̇ on the joint coordinate q, which is zero at the
initial pose in SDFormat as in symgen, so q₀ is symgen's ``rest`` as it stands. symgen's
joint springs act on 1-DOF joints; those of universal and ball joints are left out with a
warning and a note, ``friction`` (a simulator's Coulomb friction) is ignored with a note.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path

from symgen.io._xml import Node
from symgen.io.builder import ModelBuilder
from symgen.io.sdf_frames import FrameEntry, FrameGraph, SdfValues
from symgen.model import Limits
from symgen.model.scalars import Vec3
from symgen.model.transform import mat_vec, transpose

#: symgen joint types a joint spring acts on (one coordinate).
ONE_DOF = ("revolute", "continuous", "prismatic", "helical")


@dataclass
class SdfJoint:
    node: Node
    name: str
    where: str
    type: str  # the SDFormat type
    parent: str  # the link (or "world") after resolving frames
    child: str
    frame: FrameEntry
    loop: bool = False


class SdfJoints(SdfValues):
    """Reads joint axes and what hangs from them; collects the reader's ``notes``."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.legacy = False  # SDFormat 1.6: no relative_to, no <frame>, no expressed_in
        self.notes: list[str] = []
        self.friction: list[str] = []  # joints whose <dynamics><friction> is ignored

    def limits(self, axis: Node | None, continuous: bool, where: str) -> Limits | None:
        """``<axis><limit>``: infinite bounds and negative effort or velocity (SDFormat's
        "not enforced") are no limit; a continuous joint keeps no position limits."""
        node = None if axis is None else axis.find("limit")
        if node is None:
            return None

        def value(tag: str, sign: bool) -> float | None:
            element = node.find(tag)
            if element is None:
                return None
            x = self.numbers(element, 1, f"{where}: <limit>", finite=False)[0]
            if math.isnan(x) or math.isinf(x) or (sign and x < 0):
                return None
            return x

        return Limits(
            lower=None if continuous else value("lower", False),
            upper=None if continuous else value("upper", False),
            velocity=value("velocity", True),
            effort=value("effort", True),
        )

    def axis(self, graph: FrameGraph, joint: SdfJoint, tag: str) -> Vec3:
        """``<axis><xyz>`` (or ``<axis2>``) in the joint frame (default ``0 0 1``)."""
        node = joint.node.find(tag)
        xyz = None if node is None else node.find("xyz")
        if node is None or xyz is None:
            return (0.0, 0.0, 1.0)
        where = f"{joint.where}: <{tag}>"
        vector: Vec3 = self.numbers(xyz, 3, where)  # type: ignore[assignment]
        frame = graph.in_model(joint.frame, joint.where).rotation
        parent_model = node.find("use_parent_model_frame")
        if parent_model is not None and not self.legacy:
            raise self.error(f"{where}: <use_parent_model_frame> was removed in SDFormat 1.7; "
                             f"write <xyz expressed_in=\"__model__\">", parent_model)
        if parent_model is not None and self.boolean(parent_model.text, parent_model, where):
            return mat_vec(transpose(frame), vector)
        if "expressed_in" in xyz.attrs:
            if self.legacy:
                raise self.error(f"{where}: expressed_in needs SDFormat 1.7 or later", xyz)
            name = xyz.attrs["expressed_in"].strip()
            if name:
                entry = graph.lookup(name, xyz, where, "expressed_in")
                basis = graph.in_model(entry, where).rotation
                return mat_vec(transpose(frame), mat_vec(basis, vector))
        return vector

    def pitch(self, joint: SdfJoint) -> float:
        """symgen's pitch (m/rad, positive: right-handed) of a screw joint: from
        ``<screw_thread_pitch>`` p (m/rev, right-handed positive, SDFormat 1.10), p / 2π;
        else from the deprecated ``<thread_pitch>`` t (rad/m, left-handed positive, as
        gazebo-classic reads it), -1 / t; else the spec's default p = 1 m/rev."""
        node = joint.node.find("screw_thread_pitch")
        if node is not None:
            return self.numbers(node, 1, joint.where)[0] / (2 * math.pi)
        node = joint.node.find("thread_pitch")
        if node is not None:
            t = self.numbers(node, 1, joint.where)[0]
            if t == 0:
                raise self.error(f"{joint.where}: <thread_pitch> 0 (radians per metre) has no "
                                 f"finite lead", node)
            return -1.0 / t
        return 1.0 / (2 * math.pi)

    def mimic(self, builder: ModelBuilder, joint: SdfJoint) -> None:
        """``<axis><mimic joint axis>`` (SDFormat 1.11): follower = multiplier (leader -
        reference) + offset, a coupling of ratio multiplier and offset offset - multiplier
        reference."""
        for tag in ("axis", "axis2"):
            axis = joint.node.find(tag)
            node = None if axis is None else axis.find("mimic")
            if node is None:
                continue
            where = f"{joint.where}: <mimic>"
            if tag == "axis2" or node.attrs.get("axis", "axis").strip() != "axis":
                raise self.error(f"{where}: symgen couples 1-DOF joints only (no <axis2> "
                                 f"leader or follower)", node)
            leader = node.attrs.get("joint", "").strip()
            if not leader:
                raise self.error(f"{where}: no 'joint' attribute", node)
            multiplier = self.number(node, "multiplier", 1.0, where)
            offset = self.number(node, "offset", 0.0, where)
            reference = self.number(node, "reference", 0.0, where)
            builder.coupling(joint.name, leader, ratio=multiplier,
                             offset=offset - multiplier * reference, source=self.ref(node))

    def dynamics(self, builder: ModelBuilder, joint: SdfJoint, kind: str) -> None:
        """``<axis><dynamics>`` of a 1-DOF joint: a joint spring ``{joint}_passive`` with
        stiffness ``spring_stiffness``, damping ``damping`` and rest ``spring_reference``
        (none when both are zero). A universal joint's (``<axis>``, ``<axis2>``) and a ball
        joint's are left out; ``friction`` is noted; a fixed joint's mean nothing."""
        if kind == "fixed":
            return
        tags = ("axis", "axis2") if kind == "universal" else ("axis",)
        for tag in tags:
            axis = joint.node.find(tag)
            node = None if axis is None else axis.find("dynamics")
            if node is None:
                continue
            where = f"{joint.where}: <{tag}><dynamics>"
            k, c, rest, friction = (self.number(node, t, 0.0, where) for t in (
                "spring_stiffness", "damping", "spring_reference", "friction"))
            if friction and joint.name not in self.friction:
                self.friction.append(joint.name)
            if not (k or c):
                continue
            if kind in ONE_DOF:
                builder.joint_spring(f"{joint.name}_passive", joint.name, k, c, rest,
                                     source=self.ref(node))
            else:
                what = "spring_stiffness" if k else "damping"
                self.left_out(f"<{tag}><dynamics> {what} of the {joint.type} joint "
                              f"{joint.name!r}")

    def left_out(self, what: str) -> None:
        """A passive force symgen's force elements cannot express: a warning and a note."""
        warnings.warn(f"{self.path}: {what} left out (symgen's joint springs and dampers act "
                      f"on 1-DOF joints)", stacklevel=6)
        self.notes.append(f"{what} left out (1-DOF joint springs only)")

    def friction_note(self) -> None:
        if self.friction:
            listed = ", ".join(repr(n) for n in self.friction)
            self.notes.append(f"joint friction (<dynamics><friction>) ignored on "
                              f"{len(self.friction)} joint(s): {listed}")


__all__ = ["ONE_DOF", "SdfJoint", "SdfJoints"]
