"""Checks of physical plausibility for bodies and joints; each error names the element."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .elements import Body, Joint, JointType
from .errors import ModelError
from .scalars import Scalar, evaluate

#: Tolerance on the inertia checks (symmetry, PSD, triangle inequality):
#: INERTIA_RTOL * trace + INERTIA_ATOL (kg m^2), so numerical noise on tiny inertias passes.
INERTIA_RTOL = 1e-6
INERTIA_ATOL = 1e-12


def numeric(x: Scalar, values: Mapping[str, float]) -> float:
    return evaluate(x, values)


def check_body(body: Body, values: Mapping[str, float]) -> None:
    """Finite values, non-negative mass, symmetric rotational inertia."""
    where = f"body {body.name!r}"
    mass = numeric(body.mass, values)
    if not np.isfinite(mass):
        raise ModelError(f"{where}: mass is not a finite number", body.source)
    if mass < 0:
        raise ModelError(f"{where}: negative mass {mass:g} kg", body.source)
    inertia = _inertia(body, values)
    com = np.array([numeric(x, values) for x in body.com])
    if not (np.all(np.isfinite(inertia)) and np.all(np.isfinite(com))):
        raise ModelError(f"{where}: inertia or centre of mass is not finite", body.source)
    if np.max(np.abs(inertia - inertia.T)) > _tolerance(inertia):
        raise ModelError(f"{where}: rotational inertia is not symmetric", body.source)


def check_inertia(body: Body, values: Mapping[str, float]) -> None:
    """Rotational inertia positive semi-definite and satisfying the triangle inequality
    (each principal moment at most the sum of the other two)."""
    where = f"body {body.name!r}"
    inertia = _inertia(body, values)
    tol = _tolerance(inertia)
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    if moments[0] < -tol:
        raise ModelError(
            f"{where}: rotational inertia is not positive semi-definite "
            f"(principal moments {', '.join(f'{m:.6g}' for m in moments)})",
            body.source,
        )
    for k in range(3):
        others = moments.sum() - moments[k]
        if moments[k] > others + tol:
            raise ModelError(
                f"{where}: rotational inertia violates the triangle inequality "
                f"(principal moment {moments[k]:.6g} > sum of the other two {others:.6g})",
                body.source,
            )


def _inertia(body: Body, values: Mapping[str, float]) -> np.ndarray:
    return np.array([[numeric(x, values) for x in row] for row in body.inertia])


def _tolerance(inertia: np.ndarray) -> float:
    return INERTIA_RTOL * max(float(np.trace(inertia)), 0.0) + INERTIA_ATOL


def check_limits(joint: Joint, values: Mapping[str, float]) -> None:
    """Lower limit not above the upper one; velocity and effort limits not negative."""
    lim = joint.limits
    if lim is None:
        return
    where = f"joint {joint.name!r}"
    if lim.lower is not None and lim.upper is not None:
        lo, hi = numeric(lim.lower, values), numeric(lim.upper, values)
        if lo > hi:
            raise ModelError(
                f"{where}: lower limit {lo:g} is above upper limit {hi:g}", joint.source
            )
    for label, x in (("velocity", lim.velocity), ("effort", lim.effort)):
        if x is not None and numeric(x, values) < 0:
            raise ModelError(f"{where}: negative {label} limit", joint.source)


def check_model_bodies(bodies: Sequence[Body], values: Mapping[str, float]) -> None:
    """All body checks, on the bodies that carry dynamics (after fixed-joint lumping)."""
    for body in bodies:
        check_body(body, values)
        check_inertia(body, values)


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
            raise ModelError(
                f"joint {joint.name!r}: universal joint axes are parallel", joint.source
            )


def check_planar(joint: Joint, values: Mapping[str, float]) -> None:
    """A joint of a planar (xy) mechanism must keep every body in the plane."""
    where = f"joint {joint.name!r}"
    allowed = {
        JointType.REVOLUTE,
        JointType.CONTINUOUS,
        JointType.PRISMATIC,
        JointType.PLANAR,
        JointType.FIXED,
    }
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
