"""URDF reader: turns a ``.urdf`` file into :class:`symgen.ModelBuilder` calls.

Supported subset (docs/model-format.md): ``<robot name>``; ``<link>`` with an optional
``<inertial>`` (``<origin xyz rpy>``, ``<mass value>``, ``<inertia ixx ixy ixz iyy iyz izz>``);
``<joint>`` of type revolute, continuous, prismatic, fixed, floating (symgen "free") or planar
(``axis`` = plane normal), with ``<origin>``, ``<axis>``, ``<limit>`` and ``<mimic>``. Visual,
collision, gazebo, transmission, sensor and other elements of the URDF specification are
ignored; unknown ones (typos) are warned about (:mod:`symgen.io.urdf_schema`). Validation is
left to :meth:`ModelBuilder.build`; every element carries its file:line so errors cite it.
"""

from __future__ import annotations

import math
from pathlib import Path

from symgen.errors import ModelError, SourceRef
from symgen.io._xml import Node, SourceErrors, parse_xml
from symgen.io.builder import Locks, ModelBuilder
from symgen.io.urdf_schema import check_urdf
from symgen.model import Limits, Model
from symgen.model.transform import mat_mul, rotation_from_rpy, transpose

#: URDF joint type -> symgen joint type.
URDF_JOINT_TYPES = {
    "revolute": "revolute",
    "continuous": "continuous",
    "prismatic": "prismatic",
    "fixed": "fixed",
    "floating": "free",
    "planar": "planar",
}

#: Name of the world body and of the free joint added by ``floating_base=True`` (Pinocchio's).
WORLD = "world"
ROOT_JOINT = "root_joint"
#: Name of the added root body when the URDF's own root link is already called "world".
UNIVERSE = "universe"


def read_urdf(
    path: str | Path, floating_base: bool = False, lock: Locks | None = None,
    couplings: bool = True, strict: bool = False,
) -> Model:
    """Read a URDF file into a validated :class:`Model`.

    With ``floating_base=False`` the URDF's root link (the one link that is no joint's child)
    is the model's fixed root. With ``floating_base=True`` a new root body ``world`` is added
    (``universe`` when the URDF's root link is itself called ``world``) and a free joint
    ``root_joint`` connects it to the URDF's root link. ``lock`` maps joint names to the
    values they are held at (None: neutral), see :meth:`ModelBuilder.lock`.
    ``couplings=False`` leaves the ``<mimic>`` tags unread: every joint keeps its own
    coordinate, and a mimic naming a joint that does not exist is no error. An unknown
    element or attribute (a likely typo) is a :class:`~symgen.errors.ModelWarning`, with
    ``strict=True`` a :class:`ModelError`.
    """
    path = Path(path)
    try:
        return _UrdfReader(path, couplings, strict).read(floating_base, lock)
    except RecursionError:  # nothing here recurses per level; this is the last defence
        raise ModelError("the model is nested too deeply to read", SourceRef(str(path))) from None


class _UrdfReader(SourceErrors):

    def __init__(self, path: Path, couplings: bool = True, strict: bool = False) -> None:
        super().__init__(path)
        self.couplings = couplings
        self.strict = strict

    # ------------------------------------------------------------------ values
    def floats(
        self, node: Node, attr: str, n: int, default: tuple[float, ...] | None, where: str
    ) -> tuple[float, ...]:
        """Attribute ``attr`` of ``node`` as ``n`` numbers (``default`` when absent)."""
        text = node.attrs.get(attr)
        if text is None:
            if default is None:
                raise self.error(f"{where}: <{node.tag}> has no {attr!r} attribute", node)
            return default
        parts = text.replace(",", " ").split()
        try:
            values = tuple(float(p) for p in parts)
        except ValueError:
            values = ()
        finite = all(math.isfinite(v) for v in values)
        if len(values) != n or not finite:
            what = "a number" if n == 1 else f"{n} numbers"
            if len(values) == n:  # parsed, but inf, nan or beyond the range of a double
                what = "a finite number" if n == 1 else f"{n} finite numbers"
            shown = repr(text) if len(text) <= 60 else repr(text[:57]) + "..."
            raise self.error(f"{where}: <{node.tag} {attr}={shown}> is not {what}", node)
        return values

    def number(self, node: Node, attr: str, default: float | None, where: str) -> float | None:
        if attr not in node.attrs:
            return default
        return self.floats(node, attr, 1, None, where)[0]

    def origin(self, parent: Node, where: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
        node = parent.find("origin")
        if node is None:
            return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
        return (
            self.floats(node, "xyz", 3, (0.0, 0.0, 0.0), where),
            self.floats(node, "rpy", 3, (0.0, 0.0, 0.0), where),
        )

    def name_of(self, node: Node, what: str) -> str:
        name = node.attrs.get("name")
        if name is None or not name.strip():
            raise self.error(f"<{node.tag}> without a name attribute ({what})", node)
        return name

    # ------------------------------------------------------------------ elements
    def inertial(self, link: Node, where: str) -> tuple[float, tuple, tuple]:
        """Mass, centre of mass and inertia about the COM in link axes (R I R^T)."""
        node = link.find("inertial")
        if node is None:
            return 0.0, (0.0, 0.0, 0.0), ((0.0,) * 3,) * 3
        xyz, rpy = self.origin(node, where)
        mass_node = node.find("mass")
        if mass_node is None:
            raise self.error(f"{where}: <inertial> has no <mass value=...>", node)
        mass = self.floats(mass_node, "value", 1, None, where)[0]
        inertia_node = node.find("inertia")
        keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        if inertia_node is None:
            values = dict.fromkeys(keys, 0.0)
        else:
            values = {k: self.number(inertia_node, k, 0.0, where) for k in keys}
        i = values
        tensor = (
            (i["ixx"], i["ixy"], i["ixz"]),
            (i["ixy"], i["iyy"], i["iyz"]),
            (i["ixz"], i["iyz"], i["izz"]),
        )
        if any(rpy):
            r = rotation_from_rpy(*rpy)
            tensor = mat_mul(mat_mul(r, tensor), transpose(r))
        return mass, xyz, tensor

    def limits(self, joint: Node, where: str) -> Limits | None:
        node = joint.find("limit")
        if node is None:
            return None
        return Limits(
            lower=self.number(node, "lower", None, where),
            upper=self.number(node, "upper", None, where),
            velocity=self.number(node, "velocity", None, where),
            effort=self.number(node, "effort", None, where),
        )

    def mimic(self, builder: ModelBuilder, joint: Node, jname: str, where: str, jtype: str,
              joint_names: set[str]) -> None:
        """The coupling of the joint's ``<mimic>``, if any. A <mimic> left on a joint that was
        made fixed (reduced models such as talos_reduced.urdf) describes a motion that cannot
        happen: ignored."""
        mimic = joint.find("mimic")
        if mimic is None or jtype == "fixed":
            return
        master = mimic.attrs.get("joint")
        if not master:
            raise self.error(f"{where}: <mimic> has no 'joint' attribute", mimic)
        if master not in joint_names:
            raise self.error(
                f"{where}: <mimic> names mimic master {master!r} that does not exist; load "
                "with --no-couplings (couplings=False) to ignore the <mimic> tags", mimic)
        builder.coupling(
            jname,
            master,
            ratio=self.number(mimic, "multiplier", 1.0, where),
            offset=self.number(mimic, "offset", 0.0, where),
            source=self.ref(mimic),
        )

    def link_ref(self, joint: Node, role: str, where: str) -> str:
        node = joint.find(role)
        if node is None:
            raise self.error(f"{where}: missing <{role} link=...>", joint)
        link = node.attrs.get("link")
        if link is None or not link.strip():
            raise self.error(f"{where}: <{role}> has no 'link' attribute", node)
        return link

    # ------------------------------------------------------------------ model
    def read(self, floating_base: bool, lock: Locks | None = None) -> Model:
        robot = parse_xml(self.path)
        if robot.tag != "robot":
            raise self.error(
                f"not a URDF file: the top element is <{robot.tag}>, not <robot>", robot
            )
        check_urdf(robot, self.file, self.strict)
        name = robot.attrs.get("name") or self.path.stem
        links = robot.findall("link")
        joints = robot.findall("joint")
        if not links:
            raise self.error(f"robot {name!r} has no <link>", robot)
        link_names = [self.name_of(link, "link") for link in links]
        parsed = []
        for node in joints:
            jname = self.name_of(node, "joint")
            where = f"joint {jname!r}"
            jtype = node.attrs.get("type")
            if jtype is None:
                raise self.error(f"{where}: no 'type' attribute", node)
            if jtype not in URDF_JOINT_TYPES:
                known = ", ".join(URDF_JOINT_TYPES)
                raise self.error(
                    f"{where}: unknown URDF joint type {jtype!r} (known: {known})", node
                )
            parsed.append(
                (
                    node,
                    jname,
                    where,
                    jtype,
                    self.link_ref(node, "parent", where),
                    self.link_ref(node, "child", where),
                )
            )
        root_link = self.root_link(links, link_names, {p[5] for p in parsed}, name, robot)
        root_node = links[link_names.index(root_link)]

        root = root_link
        if floating_base:  # Pinocchio's name for the world when a link is already "world"
            root = WORLD if root_link != WORLD else UNIVERSE
        builder = ModelBuilder(name, root=root, source=self.ref(robot))
        for node, lname in zip(links, link_names, strict=True):
            if lname == root_link and not floating_base:
                continue  # the fixed root carries no dynamics
            mass, com, inertia = self.inertial(node, f"link {lname!r}")
            builder.body(lname, mass=mass, com=com, inertia=inertia, source=self.ref(node))
        if floating_base:
            builder.joint(
                ROOT_JOINT, "free", parent=root, child=root_link, source=self.ref(root_node)
            )
        joint_names = {p[1] for p in parsed}
        # Siblings are numbered in the alphabetical order of their joint names, as urdfdom
        # (and so Pinocchio) does: q and v then come in Pinocchio's order.
        for node, jname, where, jtype, parent, child in sorted(parsed, key=lambda p: p[1]):
            xyz, rpy = self.origin(node, where)
            axis_node = node.find("axis")
            axis = (
                (1.0, 0.0, 0.0)
                if axis_node is None
                else self.floats(axis_node, "xyz", 3, (1.0, 0.0, 0.0), where)
            )
            builder.joint(
                jname,
                URDF_JOINT_TYPES[jtype],
                parent=parent,
                child=child,
                xyz=xyz,
                rpy=rpy,
                axis=axis,
                limits=self.limits(node, where),
                source=self.ref(node),
            )
            if self.couplings:
                self.mimic(builder, node, jname, where, jtype, joint_names)
        for jname, value in (lock or {}).items():
            builder.lock(jname, value)
        return builder.build()

    def root_link(
        self, links: list[Node], names: list[str], children: set[str], robot_name: str, robot: Node
    ) -> str:
        """The one link that is no joint's child."""
        roots = [(n, node) for n, node in zip(names, links, strict=True) if n not in children]
        if len(roots) == 1:
            return roots[0][0]
        if not roots:
            raise self.error(
                f"robot {robot_name!r}: no root link (every link is the child of a joint, so "
                f"the joints form a cycle)",
                robot,
            )
        listed = ", ".join(f"{n!r} (line {node.line})" for n, node in roots)
        raise self.error(
            f"robot {robot_name!r}: several root links (links that are no joint's child): "
            f"{listed}; a URDF must form a single tree",
            robot,
        )


__all__ = ["read_urdf", "URDF_JOINT_TYPES"]
