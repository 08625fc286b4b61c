"""Checks of physical plausibility for bodies and joints; each error names the element."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .elements import Body, Joint, JointType
from .errors import ModelError
from .scalars import Scalar, evaluate

#: Relative tolerance on the inertia checks (symmetry, PSD, triangle inequality).
INERTIA_RTOL = 1e-6


def numeric(x: Scalar, values: Mapping[str, float]) -> float:
    return evaluate(x, values)


def check_body(body: Body, values: Mapping[str, float]) -> None:
    """Negative mass, non-symmetric / indefinite inertia, triangle inequality."""
    where = f"body {body.name!r}"
    mass = numeric(body.mass, values)
    if not np.isfinite(mass):
        raise ModelError(f"{where}: mass is not a finite number", body.source)
    if mass < 0:
        raise ModelError(f"{where}: negative mass {mass:g} kg", body.source)
    inertia = np.array([[numeric(x, values) for x in row] for row in body.inertia])
    com = np.array([numeric(x, values) for x in body.com])
    if not (np.all(np.isfinite(inertia)) and np.all(np.isfinite(com))):
        raise ModelError(f"{where}: inertia or centre of mass is not finite", body.source)
    scale = max(float(np.trace(inertia)), 0.0) or 1.0
    if np.max(np.abs(inertia - inertia.T)) > INERTIA_RTOL * scale:
        raise ModelError(f"{where}: rotational inertia is not symmetric", body.source)
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    if moments[0] < -INERTIA_RTOL * scale:
        raise ModelError(
            f"{where}: rotational inertia is not positive semi-definite "
            f"(principal moments {', '.join(f'{m:.6g}' for m in moments)})",
            body.source,
        )
    for k in range(3):
        others = moments.sum() - moments[k]
        if moments[k] > others + INERTIA_RTOL * scale:
            raise ModelError(
                f"{where}: rotational inertia violates the triangle inequality "
                f"(principal moment {moments[k]:.6g} > sum of the other two {others:.6g})",
                body.source,
            )


def check_joint_axes(joint: Joint, values: Mapping[str, float]) -> None:
    """Zero-length axes and non-finite pitch."""
    axes = []
    if joint.type.uses_axis:
        axes.append(("axis", joint.axis))
    if joint.type is JointType.UNIVERSAL:
        axes.append(("second axis", joint.axis2))
    for label, axis in axes:
        a = np.array([numeric(x, values) for x in axis])
        if not np.all(np.isfinite(a)) or np.linalg.norm(a) < 1e-12:
            raise ModelError(f"joint {joint.name!r}: zero-length {label}", joint.source)
    if joint.type is JointType.UNIVERSAL:
        a1 = np.array([numeric(x, values) for x in joint.axis])
        a2 = np.array([numeric(x, values) for x in joint.axis2])
        if np.linalg.norm(np.cross(a1, a2)) < 1e-9 * np.linalg.norm(a1) * np.linalg.norm(a2):
            raise ModelError(f"joint {joint.name!r}: universal joint axes are parallel", joint.source)


def check_planar(joint: Joint, values: Mapping[str, float]) -> None:
    """A joint of a planar (xy) mechanism must keep every body in the plane."""
    where = f"joint {joint.name!r}"
    allowed = {JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC,
               JointType.PLANAR, JointType.FIXED}
    if joint.type not in allowed:
        raise ModelError(
            f"{where}: a {joint.type.value} joint cannot be part of a planar mechanism",
            joint.source,
        )
    for label, pose in (("placement", joint.placement), ("child placement", joint.child_placement)):
        r = np.array([[numeric(x, values) for x in row] for row in pose.rotation])
        if abs(r[2, 2] - 1.0) > 1e-9:
            raise ModelError(
                f"{where}: {label} rotates out of the xy plane of a planar mechanism", joint.source
            )
    a = np.array([numeric(x, values) for x in joint.axis])
    a = a / np.linalg.norm(a)
    along_z = abs(abs(a[2]) - 1.0) < 1e-9
    if joint.type is JointType.PRISMATIC and abs(a[2]) > 1e-9:
        raise ModelError(f"{where}: prismatic axis must lie in the xy plane", joint.source)
    if joint.type in (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PLANAR) and not along_z:
        raise ModelError(f"{where}: axis must be along z in a planar mechanism", joint.source)
