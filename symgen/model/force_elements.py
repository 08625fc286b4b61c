"""Force elements of a model (springs, dampers, joint actuators): validation at the
parameter defaults, and re-attachment of spring points when fixed joints are merged.

A point spring acts along the line joining its two points (García de Jalón & Bayo 1994,
eq. 4.102-4.107); its direction is undefined where the points coincide, so they must not
coincide at the zero (assembled) configuration. Joint springs and actuators act on one
joint coordinate, so their joint must have exactly one velocity coordinate.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from symgen.errors import ModelError
from symgen.model.elements import ForceElement, Joint, JointActuator, JointSpring, PointSpring
from symgen.model.scalars import Scalar, evaluate
from symgen.model.transform import Transform
from symgen.model.validation import check_values, value_of

#: What each element is called in messages.
KINDS: dict[type, str] = {PointSpring: "spring", JointSpring: "joint spring",
                          JointActuator: "actuator"}


def describe(element: ForceElement) -> str:
    """``spring 'name'``, ``joint spring 'name'`` or ``actuator 'name'``."""
    return f"{KINDS[type(element)]} {element.name!r}"


def labelled_values(element: ForceElement) -> list[tuple[str, Scalar]]:
    """Every numeric value of ``element`` with its key."""
    if isinstance(element, PointSpring):
        items = [("point_a", x) for x in element.point_a]
        items += [("point_b", x) for x in element.point_b]
        items += [("stiffness", element.stiffness), ("damping", element.damping)]
        if element.rest_length is not None:
            items.append(("rest_length", element.rest_length))
        return items
    if isinstance(element, JointSpring):
        return [("stiffness", element.stiffness), ("damping", element.damping),
                ("rest", element.rest)]
    return [("force", element.force)]


def _missing(kind: str, name: str, known: Iterable[str]) -> str:
    hint = difflib.get_close_matches(name, list(known), n=1)
    suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
    return f"{kind} {name!r} does not exist{suggestion}"


def check_force_elements(
    elements: Sequence[ForceElement], bodies: Iterable[str], joints: Sequence[Joint],
    values: Mapping[str, float],
) -> None:
    """Unique names; bodies (or the root) and 1-DOF joints that exist; finite values and
    non-negative stiffness, damping and rest length at the parameter values ``values``."""
    seen: set[str] = set()
    known_bodies = set(bodies)
    by_name = {j.name: j for j in joints}
    for e in elements:
        where = describe(e)
        if e.name in seen:
            raise ModelError(f"duplicate force element name {e.name!r}", e.source)
        seen.add(e.name)
        if isinstance(e, PointSpring):
            for body in (e.body_a, e.body_b):
                if body not in known_bodies:
                    raise ModelError(f"{where}: {_missing('body', body, known_bodies)}",
                                     e.source)
        else:
            joint = by_name.get(e.joint)
            if joint is None:
                raise ModelError(f"{where}: {_missing('joint', e.joint, by_name)}", e.source)
            if joint.nv != 1:
                raise ModelError(
                    f"{where}: joint {e.joint!r} is a {joint.type.value} joint; joint springs "
                    "and actuators act on 1-DOF joints (revolute, continuous, prismatic)",
                    e.source,
                )
        check_values(labelled_values(e), values, where, e.source)
    check_force_signs(elements, values)


def check_force_signs(elements: Sequence[ForceElement], values: Mapping[str, float]) -> None:
    """Stiffness, damping and rest length are non-negative at ``values``."""
    for e in elements:
        if isinstance(e, JointActuator):
            continue
        items = [("stiffness", e.stiffness, "N/m or N·m/rad"), ("damping", e.damping,
                 "N·s/m or N·m·s/rad")]
        if isinstance(e, PointSpring) and e.rest_length is not None:
            items.append(("rest_length", e.rest_length, "m"))
        for label, x, unit in items:
            value = value_of(x, values, describe(e), label, e.source)
            if value < 0:
                raise ModelError(f"{describe(e)}: negative {label} {value:g} ({unit})",
                                 e.source)


def attach_force_elements(
    elements: Sequence[ForceElement], owner: Mapping[str, tuple[str, Transform]],
    locked: Iterable[str],
) -> tuple[ForceElement, ...]:
    """The elements after fixed-joint merging: a spring point on a merged body moves to the
    body it was merged into (``owner``: body -> (host, pose in the host frame)); joint
    springs and actuators on a locked joint are dropped (a locked joint does not move, so
    they do no work)."""
    gone = set(locked)
    out: list[ForceElement] = []
    for e in elements:
        if isinstance(e, PointSpring):
            host_a, pose_a = owner[e.body_a]
            host_b, pose_b = owner[e.body_b]
            out.append(replace(e, body_a=host_a, point_a=pose_a.apply(e.point_a),
                               body_b=host_b, point_b=pose_b.apply(e.point_b)))
        elif e.joint not in gone:
            out.append(e)
    return tuple(out)


def _numeric(t: Transform, values: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    rot = np.array([[evaluate(x, values) for x in row] for row in t.rotation])
    return rot, np.array([evaluate(x, values) for x in t.translation])


def check_spring_points(model, values: Mapping[str, float]) -> None:
    """The two points of every spring with stiffness or damping are apart at the zero
    (assembled) configuration of ``model`` (a merged, tree-ordered model)."""
    springs = [e for e in model.force_elements if isinstance(e, PointSpring)]
    if not springs:
        return
    poses = {model.root: (np.eye(3), np.zeros(3))}
    for joint in model.joints:  # parents come first
        rot, origin = poses[joint.parent]
        r, p = _numeric(joint.placement, values)
        poses[joint.child] = (rot @ r, origin + rot @ p)
    for e in springs:
        if evaluate(e.stiffness, values) == 0.0 and evaluate(e.damping, values) == 0.0:
            continue
        ends = []
        for body, point in ((e.body_a, e.point_a), (e.body_b, e.point_b)):
            rot, origin = poses[body]
            ends.append(origin + rot @ np.array([evaluate(x, values) for x in point]))
        scale = max(1.0, *(float(np.linalg.norm(w)) for w in ends))
        if float(np.linalg.norm(ends[1] - ends[0])) <= 1e-9 * scale:
            raise ModelError(
                f"{describe(e)}: its two points coincide at the zero (assembled) "
                "configuration, where the spring's direction is undefined; attach it at "
                "distinct points",
                e.source,
            )


__all__ = [
    "KINDS",
    "attach_force_elements",
    "check_force_elements",
    "check_force_signs",
    "check_spring_points",
    "describe",
    "labelled_values",
]
