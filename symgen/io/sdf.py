"""SDFormat reader: turns an ``.sdf`` file (SDFormat 1.6 and later) into
:class:`symgen.ModelBuilder` calls, as :mod:`symgen.io.urdf` does for URDF.

Supported subset (docs/model-format.md, "SDF"; specification: sdformat.org/spec, and for
1.7+ the "Pose frame semantics" proposal, sdformat.org/tutorials?tut=pose_frame_semantics):
``<sdf version>`` holding one ``<model>``, or a ``<world>`` (its ``<gravity>``) holding one
non-static ``<model>``; ``<link>`` with ``<pose>`` and ``<inertial>``; ``<frame>``;
``<joint>`` of type revolute, continuous, prismatic, ball, fixed, universal or screw with
``<pose>``, ``<parent>``, ``<child>``, ``<axis>``/``<axis2>`` (``<xyz expressed_in>``,
``<limit>``, ``<mimic>``, ``<dynamics>``: :mod:`symgen.io.sdf_joints`) and the screw's
pitch. Poses are resolved by :mod:`symgen.io.sdf_frames`. A body's frame is its joint's;
a link whose joint is away from its origin is the body ``{link}__{joint}`` and keeps its
name as a frame at the link origin. Joints that close a kinematic loop become loop joints.
Visual, collision, sensor, plugin and simulator elements are ignored; what else is left out
is listed in ``model.notes``. Validation is left to :meth:`ModelBuilder.build`; every
element carries its file:line so errors cite it.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from pathlib import Path

from symgen.errors import ModelError, SourceRef
from symgen.io._xml import Node, parse_xml
from symgen.io.builder import Locks, ModelBuilder
from symgen.io.sdf_frames import MODEL_FRAME, FrameEntry, FrameGraph, xyz_rpy
from symgen.io.sdf_joints import ONE_DOF, SdfJoint, SdfJoints
from symgen.model import Model
from symgen.model.scalars import Mat3, Vec3
from symgen.model.transform import Transform, mat_mul, mat_vec, transpose

#: SDFormat joint type -> symgen joint type.
SDF_JOINT_TYPES = {
    "revolute": "revolute",
    "continuous": "continuous",
    "prismatic": "prismatic",
    "ball": "spherical",
    "fixed": "fixed",
    "universal": "universal",
    "screw": "helical",
}
#: SDFormat joint types symgen has no counterpart for.
REFUSED_JOINT_TYPES = ("gearbox", "revolute2")
#: Oldest SDFormat version read (1.5 and before expressed poses differently).
MIN_VERSION = (1, 6)
#: Name of the world frame a joint's parent may name, and of the root it becomes.
WORLD = "world"
#: Name of the free joint added by ``floating_base=True`` (Pinocchio's, as for URDF).
ROOT_JOINT = "root_joint"
#: Mass and inertia SDFormat gives a link without ``<inertial>`` (inertial.sdf defaults).
DEFAULT_MASS = 1.0
DEFAULT_INERTIA = {"ixx": 1.0, "iyy": 1.0, "izz": 1.0, "ixy": 0.0, "ixz": 0.0, "iyz": 0.0}


def read_sdf(path: str | Path, floating_base: bool = False, lock: Locks | None = None) -> Model:
    """Read an SDFormat file into a validated :class:`Model`.

    With ``floating_base=False`` the model's root is the world when a joint names ``world``
    as its parent, else its one root link (the link no joint has as child), fixed. With
    ``floating_base=True`` a root body ``world`` is added and a free joint ``root_joint``
    connects it to the root link. ``lock`` maps joint names to the values they are held at
    (None: neutral), see :meth:`ModelBuilder.lock`.
    """
    path = Path(path)
    try:
        return _SdfReader(path).read(floating_base, lock)
    except RecursionError:  # nothing here recurses per level; this is the last defence
        raise ModelError("the model is nested too deeply to read", SourceRef(str(path))) from None


class _SdfReader(SdfJoints):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.version_text = ""
        self.model_name = ""

    # ------------------------------------------------------------------ document
    def version(self, root: Node) -> tuple[int, int]:
        if root.tag != "sdf":
            raise self.error(f"not an SDF file: the top element is <{root.tag}>, not <sdf>", root)
        text = root.attrs.get("version")
        if text is None:
            raise self.error("<sdf> has no 'version' attribute", root)
        parts = text.strip().split(".")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise self.error(f"<sdf version={text!r}> is not a version such as 1.7", root)
        version = (int(parts[0]), int(parts[1]))
        if version < MIN_VERSION:
            raise self.error(f"SDFormat version {text.strip()} is not supported (1.6 or later; "
                             f"convert the file with 'gz sdf -p')", root)
        return version

    def find_model(self, root: Node) -> tuple[Node, Vec3, Transform]:
        """The model, the gravity (world frame) and the model's pose in the world."""
        gravity: Vec3 = (0.0, 0.0, -9.81)
        scope = root
        worlds = root.findall("world")
        if worlds:
            if len(worlds) > 1 or root.findall("model"):
                raise self.error("the file holds several worlds or models; symgen reads one "
                                 "model", root)
            scope = worlds[0]
            node = scope.find("gravity")
            if node is not None:
                gravity = self.numbers(node, 3, "world")  # type: ignore[assignment]
            for tag in ("include", "joint"):
                node = scope.find(tag)
                if node is not None:
                    raise self.error(f"world: <{tag}> is not supported (symgen reads one inline "
                                     f"<model>)", node)
        include = scope.find("include")
        if include is not None:
            raise self.error("<include> is not supported: write the model inline", include)
        models = scope.findall("model")
        if worlds:  # static models (ground planes, walls) have no dynamics
            models = [m for m in models if not self.flag(m, "static", False, "model")]
        if len(models) != 1:
            where = "world" if worlds else "<sdf>"
            count = "no" if not models else f"{len(models)}"
            extra = " non-static" if worlds else ""
            raise self.error(f"{where}: {count}{extra} <model> elements; symgen reads exactly "
                             f"one", scope)
        model = models[0]
        name = model.attrs.get("name", "")
        if self.flag(model, "static", False, f"model {name!r}"):
            raise self.error(f"model {name!r}: a static model has no dynamics", model)
        if model.attrs.get("placement_frame", "").strip():
            raise self.error(f"model {name!r}: placement_frame is not supported", model)
        pose_node = model.find("pose")
        if pose_node is not None and pose_node.attrs.get("relative_to", "") not in ("", WORLD):
            raise self.error(f"model {name!r}: <pose relative_to=...> naming a world frame is "
                             f"not supported", pose_node)
        return model, gravity, self.pose(pose_node, f"model {name!r}")

    def name_of(self, node: Node, what: str, reserved: bool) -> str:
        name = node.attrs.get("name", "")
        if not name.strip():
            raise self.error(f"<{node.tag}> without a name attribute ({what})", node)
        if reserved and (name == WORLD or (name.startswith("__") and name.endswith("__"))):
            raise self.error(f"{what} {name!r}: the name is reserved by SDFormat", node)
        return name

    # ------------------------------------------------------------------ frames
    def relative_to(self, node: Node, default: str, where: str) -> tuple[Transform, str, Node]:
        pose = node.find("pose")
        target = default
        if pose is not None and "relative_to" in pose.attrs:
            if self.legacy:
                raise self.error(f"{where}: relative_to needs SDFormat 1.7 or later (this file "
                                 f"is {self.version_text})", pose)
            target = pose.attrs["relative_to"].strip() or default
        return self.pose(pose, where), target, pose if pose is not None else node

    def frames(self, model: Node, links: list[Node], names: list[str], joints: list[Node],
               frames: list[Node]) -> FrameGraph:
        canonical = model.attrs.get("canonical_link", "").strip() or names[0]
        if canonical not in names:
            raise self.error(f"model {self.model_name!r}: canonical_link {canonical!r} is not "
                             f"a link", model)
        graph = FrameGraph(self, model, self.model_name, canonical)
        seen: dict[str, Node] = {}

        def unique(name: str, node: Node) -> None:
            if name in seen:
                raise self.error(f"duplicate name {name!r} (also <{seen[name].tag}> at line "
                                 f"{seen[name].line}); SDFormat names are unique in a model",
                                 node)
            seen[name] = node

        for node, name in zip(links, names, strict=True):
            unique(name, node)
            pose, target, pnode = self.relative_to(node, MODEL_FRAME, f"link {name!r}")
            graph.add(FrameEntry(name, "link", node, pose, target, pnode, link=name))
        for node in frames:
            name = self.name_of(node, "frame", True)
            attached = node.attrs.get("attached_to", "").strip() or MODEL_FRAME
            pose, target, pnode = self.relative_to(node, attached, f"frame {name!r}")
            unique(name, node)
            graph.add(FrameEntry(name, "frame", node, pose, target, pnode, next_link=attached))
        for node in joints:
            name = self.name_of(node, "joint", not self.legacy)
            child, _ = self.name_text(node, "child", f"joint {name!r}")
            pose, target, pnode = self.relative_to(node, child, f"joint {name!r}")
            if self.legacy:
                if name in graph.joints:
                    raise self.error(f"duplicate joint name {name!r}", node)
            else:
                unique(name, node)
            graph.add(FrameEntry(name, "joint", node, pose, target, pnode, next_link=child),
                      by_name=not self.legacy)
        return graph

    def endpoint(self, graph: FrameGraph, joint: Node, role: str, where: str) -> str:
        """The link (or ``world``) a joint's ``<parent>``/``<child>`` names, through frames."""
        name, node = self.name_text(joint, role, where)
        if name == WORLD:
            if role == "child":
                raise self.error(f"{where}: the child may not be the world", node)
            return WORLD
        entry = graph.entries.get(name)
        if entry is None or entry.kind == "joint" or (self.legacy and entry.kind != "link"):
            kinds = "a link" if self.legacy else "a link or frame"
            raise self.error(f"{where}: {role} {name!r} is not {kinds} of model "
                             f"{self.model_name!r}", node)
        return graph.link_of(entry, where)

    # ------------------------------------------------------------------ elements
    def inertial(self, link: Node, where: str) -> tuple[float, Transform, Mat3]:
        """Mass, pose of the inertial frame in the link frame, inertia about the COM in the
        inertial frame's axes (inertial.sdf; its defaults: mass 1, unit inertia)."""
        node = link.find("inertial")
        if node is None:
            values = DEFAULT_INERTIA
            return DEFAULT_MASS, Transform(), _tensor(values)
        if self.boolean(node.attrs.get("auto", "false"), node, f"{where}: <inertial auto>"):
            raise self.error(f"{where}: <inertial auto=\"true\"> (inertia computed from the "
                             f"collision geometry) is not supported; give mass and inertia",
                             node)
        if node.find("fluid_added_mass") is not None:
            raise self.error(f"{where}: <fluid_added_mass> is not supported",
                             node.find("fluid_added_mass"))  # type: ignore[arg-type]
        pose_node = node.find("pose")
        if pose_node is not None and pose_node.attrs.get("relative_to", "").strip() not in (
                "", link.attrs.get("name")):
            raise self.error(f"{where}: the inertial <pose> is relative to its link "
                             f"(relative_to is not allowed here)", pose_node)
        mass = self.number(node, "mass", DEFAULT_MASS, where)
        inertia = node.find("inertia")
        values = dict(DEFAULT_INERTIA)
        if inertia is not None:
            values = {k: self.number(inertia, k, v, where) for k, v in DEFAULT_INERTIA.items()}
        return mass, self.pose(pose_node, f"{where}: <inertial>"), _tensor(values)

    def check_link(self, node: Node, where: str) -> None:
        if not self.flag(node, "gravity", True, where):
            raise self.error(f"{where}: <gravity>false</gravity> (a link gravity ignores) is "
                             f"not supported", node.find("gravity"))  # type: ignore[arg-type]
        if self.flag(node, "kinematic", False, where):
            raise self.error(f"{where}: a kinematic link is not supported",
                             node.find("kinematic"))  # type: ignore[arg-type]

    # ------------------------------------------------------------------ model
    def read(self, floating_base: bool, lock: Locks | None) -> Model:
        root = parse_xml(self.path)
        version = self.version(root)
        self.legacy = version < (1, 7)
        self.version_text = f"{version[0]}.{version[1]}"
        model, gravity, model_pose = self.find_model(root)
        self.model_name = model.attrs.get("name", "").strip() or self.path.stem
        for tag in ("model", "include"):
            nested = model.find(tag)
            if nested is not None:
                raise self.error(f"model {self.model_name!r}: nested <{tag}> is not supported",
                                 nested)
        links = model.findall("link")
        if not links:
            raise self.error(f"model {self.model_name!r} has no <link>", model)
        frames = model.findall("frame")
        if frames and self.legacy:
            raise self.error(f"<frame> needs SDFormat 1.7 or later (this file is "
                             f"{self.version_text})", frames[0])
        names = [self.name_of(node, "link", True) for node in links]
        graph = self.frames(model, links, names, model.findall("joint"), frames)
        joints = [self.joint(graph, node) for node in model.findall("joint")]
        root_name, root_link = self.spanning_tree(model, links, names, joints, floating_base)

        body, carrier = self.body_frames(graph, names, frames, joints, model_pose)
        root_frame = body[root_name] if root_name != WORLD else body[WORLD]
        to_root = model_pose.compose(root_frame).rotation  # world axes -> root axes
        gravity = mat_vec(transpose(to_root), gravity)

        builder = ModelBuilder(self.model_name, root=root_name, gravity=gravity,
                               source=self.ref(model))
        for node, name in zip(links, names, strict=True):
            where = f"link {name!r}"
            self.check_link(node, where)
            if name == root_name:
                continue  # the fixed root carries no dynamics
            mass, pose, tensor = self.inertial(node, where)
            in_body = body[name].inverse().compose(graph.entries[name].in_model).compose(pose)
            r = in_body.rotation
            builder.body(carrier[name], mass=mass, com=in_body.translation,
                         inertia=mat_mul(mat_mul(r, tensor), transpose(r)), source=self.ref(node))
        if floating_base:
            builder.joint(ROOT_JOINT, "free", parent=WORLD, child=root_link,
                          source=self.ref(links[names.index(root_link)]))
        for j in joints:
            self.emit_joint(builder, graph, body, carrier, j)
        for node, name in zip(links, names, strict=True):
            if carrier[name] != name:  # the link's own frame, on the body at its joint
                link_pose = graph.in_model(graph.entries[name], f"link {name!r}")
                xyz, rpy = xyz_rpy(body[name].inverse().compose(link_pose))
                builder.frame(name, carrier[name], xyz=xyz, rpy=rpy, source=self.ref(node))
        for node in frames:
            name = node.attrs["name"]
            entry = graph.entries[name]
            link = graph.link_of(entry, f"frame {name!r}")
            pose = graph.in_model(entry, f"frame {name!r}")
            xyz, rpy = xyz_rpy(body[link].inverse().compose(pose))
            builder.frame(name, carrier[link], xyz=xyz, rpy=rpy, source=self.ref(node))
        for jname, value in (lock or {}).items():
            builder.lock(jname, value)
        self.friction_note()
        renamed = [b for n, b in carrier.items() if b != n]
        if renamed:
            self.notes.append(f"bodies at joints away from their link's origin: "
                              f"{', '.join(map(repr, renamed))} (named link__joint; the "
                              f"link's name is a frame at the link origin)")
        model = builder.build()
        return dataclasses.replace(model, notes=tuple(self.notes)) if self.notes else model

    def body_frames(self, graph: FrameGraph, names: list[str], frames: list[Node],
                    joints: list[SdfJoint], model_pose: Transform
                    ) -> tuple[dict[str, Transform], dict[str, str]]:
        """Body frames in the model frame, and the symgen body carrying each link.

        A link's body frame is its inboard tree joint's frame, named after the link when
        that frame is the link frame (to 1e-12), else ``{link}__{joint}`` (the link's name
        then becomes a frame at the link origin, as the MJCF reader does); the link frame
        for a fixed joint, whose frame does not matter; the root link's own frame; the world
        at the model's pose."""
        body: dict[str, Transform] = {WORLD: model_pose.inverse()}
        carrier = {WORLD: WORLD}
        for name in names:
            body[name] = graph.in_model(graph.entries[name], f"link {name!r}")
            carrier[name] = name
        used = {WORLD, *names, *(node.attrs["name"] for node in frames)}
        for j in joints:
            frame = graph.in_model(j.frame, j.where)
            if j.loop or j.type == "fixed" or _same_frame(body[j.child], frame):
                continue
            body[j.child] = frame
            wanted = name = f"{j.child}__{j.name}"
            k = 1
            while name in used:
                k += 1
                name = f"{wanted}_{k}"
            used.add(name)
            carrier[j.child] = name
        return body, carrier

    def joint(self, graph: FrameGraph, node: Node) -> SdfJoint:
        name = node.attrs["name"]
        where = f"joint {name!r}"
        jtype = node.attrs.get("type", "").strip()
        if not jtype:
            raise self.error(f"{where}: no 'type' attribute", node)
        if jtype in REFUSED_JOINT_TYPES:
            raise self.error(f"{where}: SDFormat joint type {jtype!r} is not supported", node)
        if jtype not in SDF_JOINT_TYPES:
            known = ", ".join(SDF_JOINT_TYPES)
            raise self.error(f"{where}: unknown SDFormat joint type {jtype!r} (known: {known})",
                             node)
        parent = self.endpoint(graph, node, "parent", where)
        child = self.endpoint(graph, node, "child", where)
        if parent == child:
            raise self.error(f"{where}: parent and child are the same link {child!r}", node)
        physics = node.find("physics")
        simbody = None if physics is None else physics.find("simbody")
        loop = simbody is not None and self.flag(simbody, "must_be_loop_joint", False, where)
        return SdfJoint(node, name, where, jtype, parent, child, graph.joints[name], loop)

    def spanning_tree(self, model: Node, links: list[Node], names: list[str],
                      joints: list[SdfJoint], floating_base: bool) -> tuple[str, str]:
        """Mark loop joints; return the root (``world`` or a link) and the root link.

        Breadth-first from the root, each link's joints in file order: the first joint that
        reaches a link is its tree joint, a later one whose child is already reached closes
        a loop (so does one with ``<must_be_loop_joint>``)."""
        to_world = [j for j in joints if j.parent == WORLD]
        children = {j.child for j in joints if not j.loop}
        free = [(n, node) for n, node in zip(names, links, strict=True) if n not in children]
        if to_world:
            if floating_base:
                raise self.error(f"{to_world[0].where}: the model is attached to the world; "
                                 f"floating_base=True needs a free root link", to_world[0].node)
            if free:
                listed = ", ".join(f"{n!r} (line {node.line})" for n, node in free)
                raise self.error(f"model {self.model_name!r}: links {listed} are not attached "
                                 f"to the world by joints (SDFormat lets them float)", model)
            root = root_link = WORLD
        elif len(free) == 1:
            root_link = free[0][0]
            root = WORLD if floating_base else root_link
        elif not free:
            raise self.error(f"model {self.model_name!r}: no root link (every link is the "
                             f"child of a joint, so the joints form a cycle)", model)
        else:
            listed = ", ".join(f"{n!r} (line {node.line})" for n, node in free)
            raise self.error(f"model {self.model_name!r}: several root links (links that are "
                             f"no joint's child): {listed}; SDFormat lets them float, symgen "
                             f"needs one tree", model)
        start = WORLD if to_world else root_link
        outgoing: dict[str, list[SdfJoint]] = {}
        for j in joints:
            if not j.loop:
                outgoing.setdefault(j.parent, []).append(j)
        reached = {start}
        queue = deque([start])
        while queue:
            for j in outgoing.get(queue.popleft(), []):
                if j.child in reached:
                    j.loop = True
                else:
                    reached.add(j.child)
                    queue.append(j.child)
        for n, node in zip(names, links, strict=True):
            if n not in reached:
                raise self.error(f"link {n!r}: not connected to the root {start!r} by joints "
                                 f"from parent to child", node)
        return root, root_link

    def emit_joint(self, builder: ModelBuilder, graph: FrameGraph,
                   body: dict[str, Transform], carrier: dict[str, str], j: SdfJoint) -> None:
        kind = SDF_JOINT_TYPES[j.type]
        frame = graph.in_model(j.frame, j.where)
        axis = self.axis(graph, j, "axis") if kind not in ("spherical", "fixed") else (0, 0, 1)
        axis2 = self.axis(graph, j, "axis2") if kind == "universal" else (0.0, 1.0, 0.0)
        pitch = self.pitch(j) if kind == "helical" else 0.0
        parent, child = carrier[j.parent], carrier[j.child]
        if j.loop:
            xyz, rpy = xyz_rpy(body[j.parent].inverse().compose(frame))
            child_xyz, child_rpy = xyz_rpy(body[j.child].inverse().compose(frame))
            builder.loop_joint(j.name, kind, parent=parent, child=child, xyz=xyz, rpy=rpy,
                               child_xyz=child_xyz, child_rpy=child_rpy, axis=axis,
                               axis2=axis2, pitch=pitch, cut="declared", source=self.ref(j.node))
        else:
            limits = self.limits(j.node.find("axis"), kind == "continuous", j.where)
            builder.joint(j.name, kind, parent=parent, child=child,
                          placement=body[j.parent].inverse().compose(body[j.child]),
                          axis=axis, axis2=axis2, pitch=pitch,
                          limits=limits if kind in ONE_DOF else None, source=self.ref(j.node))
        if kind != "fixed":
            self.mimic(builder, j)
        self.dynamics(builder, j, kind)


def _same_frame(a: Transform, b: Transform) -> bool:
    """Whether ``b`` is ``a`` to 1e-12 (rotation entries; translation relative to the
    larger distance from the model origin, at least 1 m)."""
    rel = a.inverse().compose(b)
    scale = max(1.0, *(abs(float(x)) for x in (*a.translation, *b.translation)))
    turned = max(abs(float(rel.rotation[r][c]) - (r == c)) for r in range(3) for c in range(3))
    return turned <= 1e-12 and max(abs(float(x)) for x in rel.translation) <= 1e-12 * scale


def _tensor(i: dict[str, float]) -> Mat3:
    """The inertia matrix of ixx..izz (products with SDFormat's and URDF's sign: -∫xy dm)."""
    return (
        (i["ixx"], i["ixy"], i["ixz"]),
        (i["ixy"], i["iyy"], i["iyz"]),
        (i["ixz"], i["iyz"], i["izz"]),
    )


__all__ = ["read_sdf", "SDF_JOINT_TYPES"]
