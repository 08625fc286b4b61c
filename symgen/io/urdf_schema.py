"""The URDF elements and attributes symgen knows (http://wiki.ros.org/urdf/XML), so that a
typo that would silently change the model (``<axsi>``: the default axis, ``xzy=``: a zero
origin, ``<inertal>``: a massless link) is reported with a did-you-mean.

Checked: the attributes and children of ``<robot>``, ``<link>``, ``<joint>`` and their
sub-elements down to the elements that hold values. Not descended into: the content of
``<geometry>``, robot-level ``<material>``, ``<transmission>``, ``<gazebo>``, ``<sensor>``
and other simulator extensions. Namespaced names (``xacro:``, ``xmlns:``) are never reported.
"""

from __future__ import annotations

import difflib
import warnings
from dataclasses import dataclass, field

from symgen.errors import ModelError, ModelWarning, SourceRef
from symgen.io._xml import Node


@dataclass(frozen=True)
class Spec:
    """An element's known attributes and children (None: not checked)."""

    attrs: tuple[str, ...] | None = ()
    children: dict[str, Spec] | None = field(default_factory=dict)


#: Elements whose content is not checked (geometry, simulator extensions).
OPAQUE = Spec(attrs=None, children=None)
ORIGIN = Spec(("xyz", "rpy"))

# The specification's names plus the extensions that tools reading URDF define (accepted
# silently, symgen ignores them): <collision><material> (common in xacro output, ignored by
# urdfdom), <link type> and <collision><verbose> (PR2), <link><contact> (PyBullet),
# <link><collision_checking> (Pinocchio), <joint dont_collapse> (Isaac Sim),
# <dynamics K D mu_coulomb mu_viscous> (franka_description), <limit command_effort current
# gear_velocity> (ANYmal B).
INERTIAL = Spec((), {
    "origin": ORIGIN,
    "mass": Spec(("value",)),
    "inertia": Spec(("ixx", "ixy", "ixz", "iyy", "iyz", "izz")),
})
VISUAL = Spec(("name",), {"origin": ORIGIN, "geometry": OPAQUE, "material": OPAQUE})
COLLISION = Spec(("name",), {"origin": ORIGIN, "geometry": OPAQUE, "material": OPAQUE,
                             "verbose": OPAQUE})
LINK = Spec(("name", "type"), {
    "inertial": INERTIAL,
    "visual": VISUAL,
    "collision": COLLISION,
    "contact": OPAQUE,
    "collision_checking": OPAQUE,
})
JOINT = Spec(("name", "type", "dont_collapse"), {
    "origin": ORIGIN,
    "parent": Spec(("link",)),
    "child": Spec(("link",)),
    "axis": Spec(("xyz",)),
    "calibration": Spec(("rising", "falling", "reference_position")),
    "dynamics": Spec(("damping", "friction", "K", "D", "mu_coulomb", "mu_viscous")),
    "limit": Spec(("lower", "upper", "effort", "velocity", "command_effort", "current",
                   "gear_velocity")),
    "mimic": Spec(("joint", "multiplier", "offset")),
    "safety_controller": Spec(("soft_lower_limit", "soft_upper_limit", "k_position",
                               "k_velocity")),
})
#: ``<robot>``: links and joints are checked; the other elements of the URDF specification
#: and of the tools that extend it (Gazebo, ros2_control) are known but not descended into.
ROBOT = Spec(("name", "version", "xmlns"), {
    "link": LINK,
    "joint": JOINT,
    "material": OPAQUE,
    "transmission": OPAQUE,
    "gazebo": OPAQUE,
    "sensor": OPAQUE,
    "model_state": OPAQUE,
    "ros2_control": OPAQUE,
})


def check_urdf(robot: Node, file: str, strict: bool = False) -> None:
    """Report every unknown element and attribute under ``robot`` (the ``<robot>`` element of
    ``file``): a :class:`ModelWarning` each, or with ``strict`` a :class:`ModelError` at the
    first."""
    for node, message in unknown_names(robot, ROBOT):
        source = SourceRef(file, node.line)
        if strict:
            raise ModelError(message, source)
        warnings.warn(f"{source}: {message}", ModelWarning, stacklevel=5)


def unknown_names(node: Node, spec: Spec, where: str = "") -> list[tuple[Node, str]]:
    """(element, message) for each unknown attribute of ``node`` and unknown element below
    it, in document order; ``where`` names the enclosing elements (' in <joint name="j1">',
    "" for ``<robot>``)."""
    context = f"{_label(node)}{where}"
    known = () if spec.attrs is None else spec.attrs
    found = [
        (node, f"unknown attribute {_short(attr)!r} of {context}{_hint(attr, known, '{!r}')}")
        for attr in node.attrs
        if spec.attrs is not None and attr not in known and not _namespaced(attr)
    ]
    if spec.children is None:
        return found
    below = "" if spec is ROBOT else f" in {context}"
    for child in node.children:
        child_spec = spec.children.get(child.tag)
        if child_spec is not None:
            found += unknown_names(child, child_spec, below)
        elif not _namespaced(child.tag):
            hint = _hint(child.tag, tuple(spec.children), "<{}>")
            found.append((child, f"unknown element <{_short(child.tag)}> in {context}{hint}"))
    return found


def _label(node: Node) -> str:
    """``<joint name="j1">`` for a named element, else ``<inertial>``."""
    name = node.attrs.get("name")
    return f'<{node.tag} name="{_short(name)}">' if name is not None else f"<{node.tag}>"


def _short(text: str, limit: int = 60) -> str:
    """``text`` as shown in a one-line message: cut to ``limit`` characters, control
    characters (an attribute's ``&#10;``) escaped."""
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text if text.isprintable() else repr(text)[1:-1]


def _hint(name: str, known: tuple[str, ...], form: str) -> str:
    """``; did you mean <axis>?`` for the closest known name, else ""."""
    close = difflib.get_close_matches(name, known, n=1)
    return f"; did you mean {form.format(close[0])}?" if close else ""


def _namespaced(name: str) -> bool:
    """An XML namespace prefix (``xacro:include``, ``xmlns:xacro``): another tool's name."""
    return ":" in name


__all__ = ["check_urdf", "unknown_names"]
