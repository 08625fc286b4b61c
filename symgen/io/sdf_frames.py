"""SDFormat values, poses and the frame graph of one ``<model>``, for :mod:`symgen.io.sdf`.

Semantics (sdformat.org/spec; for 1.7 and later the "Pose frame semantics" proposal,
sdformat.org/tutorials?tut=pose_frame_semantics):

- ``<pose>`` holds ``x y z roll pitch yaw`` (URDF's fixed-axis angles,
  R = Rz(yaw) Ry(pitch) Rx(roll)); ``degrees="true"`` gives the angles in degrees and
  ``rotation_format="quat_xyzw"`` replaces them by a quaternion ``x y z w`` (normalised here);
- the frames of a model are ``__model__`` (the model frame), its links, its joints and its
  ``<frame>`` elements; a pose is expressed in the frame its ``relative_to`` names, by
  default the model frame for a link, the child link for a joint and the ``attached_to``
  frame for a ``<frame>`` (whose own default is ``__model__``). Version 1.6 has no
  ``relative_to``: links are posed in the model frame, joints in their child link.
- A frame moves with one link: a link with itself, a joint with its child link, a
  ``<frame>`` with what it is ``attached_to``, the model frame with the canonical link
  (``canonical_link``, by default the first link).

All poses are those of the model's initial configuration, where every joint is at zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from symgen.io._xml import Node, SourceErrors
from symgen.model.joint_motion import quaternion_rotation
from symgen.model.transform import (  # noqa: F401 - rpy_from_rotation, xyz_rpy re-exported
    Transform,
    mat_mul,
    rotation_from_rpy,
    rpy_from_rotation,
    transpose,
    xyz_rpy,
)

#: Name of the model frame (SDFormat 1.7+).
MODEL_FRAME = "__model__"
#: Truth values of an SDFormat ``bool``.
BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


class SdfValues(SourceErrors):
    """Errors at file:line and the values of SDFormat elements (numbers in element text)."""

    def numbers(self, node: Node, n: int | tuple[int, ...], where: str,
                finite: bool = True) -> tuple[float, ...]:
        """The text of ``node`` as ``n`` numbers (one of the counts when ``n`` is a tuple)."""
        counts = (n,) if isinstance(n, int) else n
        text = node.text.strip()
        try:
            values = tuple(float(p) for p in text.split())
        except ValueError:
            values = ()
        if len(values) in counts and (not finite or all(math.isfinite(v) for v in values)):
            return values
        what = " or ".join(str(c) for c in counts)
        what = "a number" if counts == (1,) else f"{what} numbers"
        if len(values) in counts:  # parsed, but inf, nan or beyond the range of a double
            what = "a finite number" if counts == (1,) else f"{what} (finite)"
        shown = repr(text) if len(text) <= 60 else repr(text[:57]) + "..."
        raise self.error(f"{where}: <{node.tag}>{shown[1:-1]}</{node.tag}> is not {what}", node)

    def number(self, parent: Node, tag: str, default: float, where: str) -> float:
        """The number in child element ``tag`` of ``parent`` (``default`` when absent)."""
        node = parent.find(tag)
        return default if node is None else self.numbers(node, 1, where)[0]

    def flag(self, parent: Node, tag: str, default: bool, where: str) -> bool:
        """The ``bool`` in child element ``tag`` (``true``/``false``/``1``/``0``)."""
        node = parent.find(tag)
        if node is None:
            return default
        return self.boolean(node.text, node, f"{where}: <{tag}>")

    def boolean(self, text: str, node: Node, where: str) -> bool:
        value = BOOLEANS.get(text.strip().lower())
        if value is None:
            raise self.error(f"{where}: {text.strip()!r} is not true or false", node)
        return value

    def name_text(self, parent: Node, tag: str, where: str) -> tuple[str, Node]:
        """The name in child element ``tag`` (required, stripped)."""
        node = parent.find(tag)
        if node is None:
            raise self.error(f"{where}: missing <{tag}>", parent)
        name = node.text.strip()
        if not name:
            raise self.error(f"{where}: <{tag}> is empty", node)
        return name, node

    def pose(self, node: Node | None, where: str) -> Transform:
        """The transform of a ``<pose>`` element (identity when absent or empty)."""
        if node is None or not node.text.strip():
            return Transform()
        if node.attrs.get("frame", "").strip():
            raise self.error(f"{where}: <pose frame=...> is not supported (SDFormat 1.7 "
                             f"replaced it by relative_to)", node)
        fmt = node.attrs.get("rotation_format", "euler_rpy")
        if fmt not in ("euler_rpy", "quat_xyzw"):
            raise self.error(f"{where}: <pose rotation_format={fmt!r}> is not euler_rpy or "
                             f"quat_xyzw", node)
        degrees = self.boolean(node.attrs.get("degrees", "false"), node, f"{where}: degrees")
        if fmt == "quat_xyzw":
            x, y, z, *quat = self.numbers(node, 7, where)
            norm = math.sqrt(sum(c * c for c in quat))
            if norm < 1e-12:
                raise self.error(f"{where}: <pose> quaternion of zero norm", node)
            rotation = quaternion_rotation(*(c / norm for c in quat))
            return Transform(rotation, (x, y, z))
        x, y, z, *rpy = self.numbers(node, 6, where)
        if degrees:
            rpy = [math.radians(a) for a in rpy]
        return Transform.from_xyz_rpy((x, y, z), rpy)


@dataclass(eq=False)
class FrameEntry:
    """One frame of the model: its pose element, and the frames it refers to by name."""

    name: str
    kind: str  # "model", "link", "joint" or "frame"
    node: Node | None
    pose: Transform
    relative_to: str | None  # None for the model frame
    relative_node: Node | None = None  # the <pose> that names relative_to, for errors
    next_link: str | None = None  # joint: its child; frame: its attached_to
    in_model: Transform | None = None  # resolved pose in the model frame
    link: str | None = None  # resolved: the link it moves with


class FrameGraph:
    """The frames of one model: their poses in the model frame at the initial configuration
    and the link each moves with. Name references are checked, cycles are errors."""

    def __init__(self, values: SdfValues, model: Node, model_name: str, canonical: str) -> None:
        self.values = values
        self.model = model
        self.model_name = model_name
        self.canonical = canonical
        self.entries: dict[str, FrameEntry] = {}
        self.joints: dict[str, FrameEntry] = {}
        self.entries[MODEL_FRAME] = FrameEntry(MODEL_FRAME, "model", model, Transform(), None,
                                               in_model=Transform(), link=canonical)

    def add(self, entry: FrameEntry, by_name: bool = True) -> None:
        """Add a frame; ``by_name=False`` keeps it out of name lookup (1.6 joints)."""
        if entry.kind == "joint":
            self.joints[entry.name] = entry
        if by_name:
            self.entries[entry.name] = entry

    def lookup(self, name: str, node: Node, where: str, what: str) -> FrameEntry:
        entry = self.entries.get(name)
        if entry is None:
            raise self.values.error(
                f"{where}: {what} {name!r} is not a link, joint or frame of model "
                f"{self.model_name!r}", node)
        return entry

    def in_model(self, entry: FrameEntry, where: str) -> Transform:
        """Pose of ``entry`` in the model frame (following ``relative_to``)."""
        chain: list[FrameEntry] = []
        current = entry
        while current.in_model is None:
            if current in chain:
                names = " -> ".join(e.name for e in chain[chain.index(current):] + [current])
                raise self.values.error(f"{where}: the poses' relative_to form a cycle: {names}",
                                        current.relative_node or current.node or self.model)
            chain.append(current)
            assert current.relative_to is not None
            current = self.lookup(current.relative_to, current.relative_node or current.node,
                                  f"{current.kind} {current.name!r}", "relative_to")
        for e in reversed(chain):
            e.in_model = current.in_model.compose(e.pose)
            current = e
        assert entry.in_model is not None
        return entry.in_model

    def link_of(self, entry: FrameEntry, where: str) -> str:
        """The link ``entry`` moves with (a joint: its child; a frame: its attached_to)."""
        chain: list[FrameEntry] = []
        current = entry
        while current.link is None:
            if current in chain:
                names = " -> ".join(e.name for e in chain[chain.index(current):] + [current])
                raise self.values.error(f"{where}: attached_to and joint children form a "
                                        f"cycle: {names}", current.node or self.model)
            chain.append(current)
            assert current.next_link is not None
            what = "child" if current.kind == "joint" else "attached_to"
            current = self.lookup(current.next_link, current.node or self.model,
                                  f"{current.kind} {current.name!r}", what)
        for e in chain:
            e.link = current.link
        assert entry.link is not None
        return entry.link


__all__ = ["FrameEntry", "FrameGraph", "MODEL_FRAME", "SdfValues", "rpy_from_rotation",
           "xyz_rpy"]
