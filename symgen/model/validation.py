"""Checks of physical plausibility for bodies and joints; each error names the element.

Every value is checked at the parameters' defaults: it must be a finite real number
(:func:`check_values`), and so must every quantity derived from it at load time and by the
kernels (:func:`check_model_scale`). Checks run with numpy's floating-point warnings off
and test for non-finite results explicitly, so no ``RuntimeWarning`` reaches the user.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from symgen.errors import ModelError, SourceRef
from symgen.model.elements import Body, Joint, JointType
from symgen.model.scalars import NonRealValueError, Scalar, evaluate

#: Tolerance on the inertia checks (symmetry, PSD, triangle inequality):
#: INERTIA_RTOL * trace + INERTIA_ATOL (kg m^2), so numerical noise on tiny inertias passes.
INERTIA_RTOL = 1e-6
INERTIA_ATOL = 1e-12
#: Largest accepted magnitude of a quantity the kernels form from the model's values (masses,
#: inertias, squared distances, mass x squared distance, ...). The largest double is 1.8e308;
#: the factor 1e8 left is headroom for the sums and products of such terms inside a kernel,
#: so that the constants a kernel derives from a model that loads stay finite.
MAX_MAGNITUDE = 1e300


def numeric(x: Scalar, values: Mapping[str, float]) -> float:
    return evaluate(x, values)


def value_of(
    x: Scalar, values: Mapping[str, float], where: str, label: str, source: SourceRef | None
) -> float:
    """``x`` at ``values``; a complex value is a ModelError naming ``where`` and ``label``."""
    try:
        return evaluate(x, values)
    except NonRealValueError as exc:
        raise ModelError(f"{where}: {label}: {exc.detail}", source) from None


def check_values(
    items: Iterable[tuple[str, Scalar]],
    values: Mapping[str, float],
    where: str,
    source: SourceRef | None,
) -> None:
    """Each ``(label, value)`` is a finite real number at the parameter values."""
    for label, x in items:
        v = value_of(x, values, where, label, source)
        if not math.isfinite(v):
            extra = f" ({_short(x)} = {v:g} at the parameters' defaults)" if _symbolic(x) else ""
            raise ModelError(f"{where}: {label} is not a finite number{extra}", source)


def _symbolic(x: Scalar) -> bool:
    return not isinstance(x, float | int)


def _short(x: object, limit: int = 60) -> str:
    text = str(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_body(body: Body, values: Mapping[str, float]) -> None:
    """Finite values, non-negative mass, symmetric rotational inertia."""
    where = f"body {body.name!r}"
    mass = value_of(body.mass, values, where, "mass", body.source)
    if not np.isfinite(mass):
        raise ModelError(f"{where}: mass is not a finite number", body.source)
    if mass < 0:
        raise ModelError(f"{where}: negative mass {mass:g} kg", body.source)
    inertia = _inertia(body, values)
    com = np.array([value_of(x, values, where, "centre of mass", body.source) for x in body.com])
    if not (np.all(np.isfinite(inertia)) and np.all(np.isfinite(com))):
        raise ModelError(f"{where}: inertia or centre of mass is not finite", body.source)
    scaled, scale = _scaled(inertia)
    if np.max(np.abs(scaled - scaled.T)) > _tolerance(scaled, scale):
        raise ModelError(f"{where}: rotational inertia is not symmetric", body.source)


def check_inertia(body: Body, values: Mapping[str, float]) -> None:
    """Rotational inertia positive semi-definite and satisfying the triangle inequality
    (each principal moment at most the sum of the other two). Computed on the inertia divided
    by its largest entry, so that no value near the largest double overflows."""
    where = f"body {body.name!r}"
    scaled, scale = _scaled(_inertia(body, values))
    tol = _tolerance(scaled, scale)
    with np.errstate(all="ignore"):
        moments = np.linalg.eigvalsh(0.5 * (scaled + scaled.T))
    if moments[0] < -tol:
        raise ModelError(
            f"{where}: rotational inertia is not positive semi-definite "
            f"(principal moments {', '.join(f'{m * scale:.6g}' for m in moments)})",
            body.source,
        )
    for k in range(3):
        others = moments.sum() - moments[k]
        if moments[k] > others + tol:
            raise ModelError(
                f"{where}: rotational inertia violates the triangle inequality "
                f"(principal moment {moments[k] * scale:.6g} > sum of the other two "
                f"{others * scale:.6g})",
                body.source,
            )


def _inertia(body: Body, values: Mapping[str, float]) -> np.ndarray:
    where = f"body {body.name!r}"
    return np.array(
        [[value_of(x, values, where, "inertia", body.source) for x in row] for row in body.inertia]
    )


def _scaled(inertia: np.ndarray) -> tuple[np.ndarray, float]:
    """``inertia / s`` and ``s``, the largest absolute entry (1 for a zero matrix)."""
    scale = float(np.max(np.abs(inertia)))
    if scale == 0.0 or not math.isfinite(scale):
        return inertia, 1.0
    return inertia / scale, scale


def _tolerance(scaled: np.ndarray, scale: float) -> float:
    """INERTIA_RTOL * trace + INERTIA_ATOL, in the units of ``scaled`` (= inertia / scale)."""
    return INERTIA_RTOL * max(float(np.trace(scaled)), 0.0) + INERTIA_ATOL / scale


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
    """Zero-length axes and parallel universal axes (lengths computed without overflow)."""
    axes = []
    if joint.type.layout.uses_axis:
        axes.append(("axis", joint.axis))
    if joint.type.layout.uses_axis2:
        axes.append(("second axis", joint.axis2))
    units = []
    for label, axis in axes:
        a = np.array([numeric(x, values) for x in axis])
        u, norm = unit_vector(a)
        if u is None or norm < 1e-12:
            raise ModelError(f"joint {joint.name!r}: zero-length {label}", joint.source)
        units.append(u)
    if joint.type.layout.uses_axis2 and np.linalg.norm(np.cross(*units)) < 1e-9:
        raise ModelError(f"joint {joint.name!r}: universal joint axes are parallel", joint.source)


def unit_vector(a: np.ndarray) -> tuple[np.ndarray | None, float]:
    """``a / |a|`` and ``|a|``, computed on ``a`` divided by its largest entry so that neither
    huge (1e200) nor tiny entries overflow or underflow; ``(None, 0)`` for a zero or
    non-finite vector."""
    with np.errstate(all="ignore"):
        scale = float(np.max(np.abs(a)))
        if scale == 0.0 or not math.isfinite(scale):
            return None, 0.0
        b = a / scale
        n = float(np.linalg.norm(b))
        return b / n, n * scale


def check_planar(joint: Joint, values: Mapping[str, float]) -> None:
    """A joint of a planar (xy) mechanism must keep every body in the plane."""
    where = f"joint {joint.name!r}"
    plane_axis = joint.type.layout.plane_axis
    if plane_axis is None:
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
    a, _ = unit_vector(np.array([numeric(x, values) for x in joint.axis]))
    if a is None:
        raise ModelError(f"{where}: zero-length axis", joint.source)
    along_z = abs(abs(a[2]) - 1.0) < 1e-9
    if plane_axis == "in-plane" and abs(a[2]) > 1e-9:
        raise ModelError(f"{where}: prismatic axis must lie in the xy plane", joint.source)
    if plane_axis == "normal" and not along_z:
        raise ModelError(f"{where}: axis must be along z in a planar mechanism", joint.source)


def joint_values(joint: Joint) -> list[tuple[str, Scalar]]:
    """The values of a joint, labelled for :func:`check_values`."""
    items: list[tuple[str, Scalar]] = []
    items += [("origin", x) for row in joint.placement.rotation for x in row]
    items += [("origin", x) for x in joint.placement.translation]
    items += [("child origin", x) for row in joint.child_placement.rotation for x in row]
    items += [("child origin", x) for x in joint.child_placement.translation]
    if joint.type.layout.uses_axis:
        items += [("axis", x) for x in joint.axis]
    if joint.type.layout.uses_axis2:
        items += [("axis2", x) for x in joint.axis2]
    if joint.type.layout.uses_pitch:
        items.append(("pitch", joint.pitch))
    if joint.limits is not None:
        for label in ("lower", "upper", "velocity", "effort"):
            x = getattr(joint.limits, label)
            if x is not None:
                items.append((f"{label} limit", x))
    items += [("armature", x) for x in joint.armature]
    return items


def check_model_scale(model, values: Mapping[str, float]) -> None:
    """Every quantity the kernels form from the model's values stays below MAX_MAGNITUDE
    (and is therefore finite): for each moving body, with r its distance bound from the root
    (the lengths of the joint placements along its chain plus its centre-of-mass offset),
    m, r, r^2, m r, m r^2, m |g| r and its inertia; the same sums over the whole model;
    for each frame its distance from the root. Computed in floats at the parameters'
    defaults, with overflow reported as an error naming the element, never as a warning."""
    name = f"model {model.name!r}"
    with np.errstate(all="ignore"):
        g = _norm([numeric(x, values) for x in model.gravity])
        _bounded(g, f"{name}: gravity", model.source)
        reach: dict[str, float] = {model.root: 0.0}
        totals = {"mass": 0.0, "m r^2 + inertia": 0.0}
        for body, joint in zip(model.bodies, model.joints, strict=True):
            where = f"body {body.name!r}"
            offset = _norm([numeric(x, values) for x in joint.placement.translation])
            reach[body.name] = reach[joint.parent] + offset
            r = reach[body.name] + _norm([numeric(x, values) for x in body.com])
            m = abs(numeric(body.mass, values))
            inertia = max(abs(numeric(x, values)) for row in body.inertia for x in row)
            chain = f" (along joint {joint.name!r} and its ancestors)"
            for label, q in (
                ("mass", m),
                ("rotational inertia", inertia),
                ("distance from the root" + chain, r),
                ("squared distance from the root" + chain, r * r),
                ("mass x distance from the root" + chain, m * r),
                ("mass x squared distance from the root" + chain, m * r * r),
                ("weight x distance from the root" + chain, m * g * r),
            ):
                _bounded(q, f"{where}: {label}", body.source)
            totals["mass"] += m
            totals["m r^2 + inertia"] += m * r * r + 3.0 * inertia
        for label, q in totals.items():
            _bounded(q, f"{name}: total {label} of all bodies", model.source)
        for frame in model.frames:
            d = reach.get(frame.body, 0.0) + _norm(
                [numeric(x, values) for x in frame.placement.translation]
            )
            _bounded(d * d, f"frame {frame.name!r}: squared distance from the root", frame.source)
        for joint in model.loop_joints:
            ends = ((joint.parent, joint.placement), (joint.child, joint.child_placement))
            for body, pose in ends:
                d = reach.get(body, 0.0) + _norm([numeric(x, values) for x in pose.translation])
                _bounded(
                    d * d, f"loop joint {joint.name!r}: squared distance from the root",
                    joint.source,
                )


def _norm(v: Sequence[float]) -> float:
    """Euclidean norm without overflow for huge entries (inf only when it truly is)."""
    a = np.asarray(v, dtype=float)
    with np.errstate(all="ignore"):
        scale = float(np.max(np.abs(a)))
        if scale == 0.0 or not math.isfinite(scale):
            return scale
        return scale * float(np.linalg.norm(a / scale))


def _bounded(q: float, what: str, source: SourceRef | None) -> None:
    if not q <= MAX_MAGNITUDE:  # also catches inf and nan
        shown = f"{q:.3g}" if math.isfinite(q) else "overflows"
        raise ModelError(
            f"{what} is too large ({shown}; at most {MAX_MAGNITUDE:g}, so that the kernels "
            f"do not overflow)",
            source,
        )


def check_generatable(model) -> None:
    """Every parameter-dependent value the kernels use can be turned into a program by
    :func:`symgen.ir.expr.from_sympy` (the code generator's own converter, so the two never
    disagree); otherwise a one-line error at load names the element, instead of a failure in
    ``generate``. Joint limits are data the kernels do not read: not checked."""
    from symgen.ir.expr import Sym, from_sympy

    mapping = {p.symbol: Sym(p.name) for p in model.parameters}

    def check(where: str, label: str, xs: Iterable[Scalar], source: SourceRef | None) -> None:
        for x in xs:
            if _symbolic(x) and not x.is_number:
                try:
                    from_sympy(x, mapping)
                except (ValueError, TypeError, KeyError) as exc:
                    raise ModelError(
                        f"{where}: {label} {_short(x)} cannot be generated as C ({exc}; a "
                        f"value that depends on parameters may use + - * /, powers, abs, "
                        f"sqrt and the trigonometric functions)",
                        source,
                    ) from None

    check(f"model {model.name!r}", "gravity", model.gravity, model.source)
    for b in model.bodies:
        where = f"body {b.name!r}"
        check(where, "mass", [b.mass], b.source)
        check(where, "centre of mass", b.com, b.source)
        check(where, "inertia", [x for row in b.inertia for x in row], b.source)
    for kind, joints in (("joint", model.joints), ("loop joint", model.loop_joints)):
        for j in joints:
            where = f"{kind} {j.name!r}"
            for label, pose in (("origin", j.placement), ("child origin", j.child_placement)):
                entries = [x for row in pose.rotation for x in row] + list(pose.translation)
                check(where, label, entries, j.source)
            check(where, "axis", [*j.axis, *j.axis2], j.source)
            if j.type is JointType.PLANAR and any(_symbolic(x) for x in j.axis):
                raise ModelError(
                    f"{where}: the axis (plane normal) of a planar joint cannot depend on "
                    f"parameters (it fixes the joint's in-plane directions when generating)",
                    j.source,
                )
            check(where, "pitch", [j.pitch], j.source)
            check(where, "armature", j.armature, j.source)
    for f in model.frames:
        entries = [x for row in f.placement.rotation for x in row] + list(f.placement.translation)
        check(f"frame {f.name!r}", "origin", entries, f.source)
    for c in model.couplings:
        check(f"coupling of joint {c.joint!r}", "ratio or offset", [c.ratio, c.offset], c.source)
