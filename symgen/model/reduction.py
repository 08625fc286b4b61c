"""Reduced models: joints locked at given values, and joint armature checks.

A joint J locked at q_J = θ0 becomes a fixed joint with placement ``placement ∘ X_J(θ0)``,
the pose its child has at θ0 (docs/conventions.md, joint table); the fixed-joint merging
then lumps what it carried into the nearest moving ancestor, as Pinocchio's
``buildReducedModel`` does. Locking a coupling's master locks the joints coupled to it at
``ratio·θ0 + offset``; locking a coupled joint alone is an error naming its master.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from symgen.errors import ModelError, SourceRef
from symgen.model.elements import Coupling, Joint, JointType, LockedJoint
from symgen.model.joint_motion import MOTIONS
from symgen.model.scalars import Scalar, evaluate, simplify_scalar, sqrt
from symgen.model.transform import Transform

#: A requested lock: the values given (None: the joint's neutral value) and where.
LockRequest = tuple[tuple[Scalar, ...] | None, SourceRef | None]

#: A lock value may exceed a limit by this much (relative to max(1, |limit|)): rounding.
LIMIT_TOLERANCE = 1e-9
#: A locked quaternion may differ from unit norm by this much; it is then normalised.
QUATERNION_TOLERANCE = 1e-6


def neutral_values(joint: Joint) -> tuple[float, ...]:
    """The neutral configuration of a joint: zeros, and the identity quaternion."""
    return joint.type.layout.neutral


def joint_motion(joint: Joint, q: Sequence[Scalar]) -> Transform:
    """``X_J(q)``: the pose of the child frame in the joint frame at joint coordinates ``q``
    (docs/conventions.md, joint table; unit axes), as the joint's type declares it."""
    return MOTIONS[joint.type](joint, q)


def _where(name: str) -> str:
    return f"lock of joint {name!r}"


def _check_values(
    joint: Joint,
    given: tuple[Scalar, ...],
    values: Mapping[str, float],
    source: SourceRef | None,
    default: bool,
    master: str | None,
) -> tuple[Scalar, ...]:
    """Count, unit quaternion and joint limits of the lock values of ``joint``."""
    where = _where(joint.name)
    if len(given) != joint.nq:
        names = ", ".join(joint.type.coordinate_names)
        what = "1 value" if joint.nq == 1 else f"{joint.nq} values ({names})"
        raise ModelError(
            f"{where}: a {joint.type.value} joint is locked by {what}, got {len(given)}", source
        )
    numbers = [evaluate(x, values) for x in given]
    if not all(math.isfinite(x) for x in numbers):
        raise ModelError(f"{where}: lock value is not finite", source)
    if joint.type.layout.quaternion:
        norm = math.sqrt(sum(x * x for x in numbers[-4:]))
        if abs(norm - 1.0) > QUATERNION_TOLERANCE:
            raise ModelError(
                f"{where}: the quaternion (qx, qy, qz, qw) must have unit norm, got {norm:.9g}",
                source,
            )
        n = sqrt(sum(x * x for x in given[-4:]))
        given = given[:-4] + tuple(simplify_scalar(x / n) for x in given[-4:])
    lim = joint.limits
    if joint.nq == 1 and lim is not None and joint.type is not JointType.CONTINUOUS:
        lo = None if lim.lower is None else evaluate(lim.lower, values)
        hi = None if lim.upper is None else evaluate(lim.upper, values)
        x = numbers[0]
        below = lo is not None and x < lo - LIMIT_TOLERANCE * max(1.0, abs(lo))
        above = hi is not None and x > hi + LIMIT_TOLERANCE * max(1.0, abs(hi))
        if below or above:
            how = " (its neutral value)" if default else ""
            if master is not None:
                how = f" (ratio·q + offset of its master {master!r})"
            low = "-inf" if lo is None else f"{lo:g}"
            high = "inf" if hi is None else f"{hi:g}"
            bounds = f"[{low}, {high}]"
            raise ModelError(
                f"{where}: value {x:g}{how} is outside the joint limits {bounds}", source
            )
    return given


def _unknown(name: str, tree: Sequence[Joint], loops: Sequence[Joint], source) -> ModelError:
    where = _where(name)
    if any(j.name == name for j in loops):
        return ModelError(f"{where}: a loop joint cannot be locked (only tree joints)", source)
    hint = difflib.get_close_matches(name, [j.name for j in tree], n=1)
    suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
    return ModelError(f"{where}: the model has no joint {name!r}{suggestion}", source)


def apply_locks(
    tree: Sequence[Joint],
    loops: Sequence[Joint],
    couplings: Sequence[Coupling],
    requests: Mapping[str, LockRequest],
    values: Mapping[str, float],
) -> tuple[list[Joint], list[Coupling], tuple[LockedJoint, ...]]:
    """Tree joints with every locked joint made fixed at its lock values, the couplings left
    between moving joints, and the locks applied (those implied by couplings included).

    ``tree`` holds unit axes; couplings are assumed valid (checked before)."""
    if not requests:
        return list(tree), list(couplings), ()
    by_name = {j.name: j for j in tree}
    master_of = {c.joint: c for c in couplings}
    for name, (_, source) in requests.items():
        if name not in by_name:
            raise _unknown(name, tree, loops, source)
        joint = by_name[name]
        source = source or joint.source
        if joint.type is JointType.FIXED:
            raise ModelError(f"{_where(name)}: the joint is already fixed", source)
        coupling = master_of.get(name)
        if coupling is not None and coupling.master not in requests:
            raise ModelError(
                f"{_where(name)}: the joint is coupled to joint {coupling.master!r} "
                f"(q = ratio·q_master + offset); lock {coupling.master!r} instead (the joints "
                f"coupled to it are locked with it)",
                source,
            )
    locked: dict[str, LockedJoint] = {}
    for name, (given, source) in requests.items():
        joint = by_name[name]
        default = given is None
        q0 = neutral_values(joint) if given is None else given
        source = source or joint.source
        q0 = _check_values(joint, tuple(q0), values, source, default, None)
        locked[name] = LockedJoint(name, q0, None, source)
    # joints coupled to a locked master follow it (chains of couplings included)
    pending = True
    while pending:
        pending = False
        for c in couplings:
            if c.master in locked and c.joint not in locked:
                m = locked[c.master]
                value = simplify_scalar(c.ratio * m.values[0] + c.offset)
                source = m.source
                q0 = _check_values(by_name[c.joint], (value,), values, source, False, c.master)
                locked[c.joint] = LockedJoint(c.joint, q0, c.master, source)
                pending = True
    out = []
    for j in tree:
        lock = locked.get(j.name)
        if lock is None:
            out.append(j)
            continue
        placement = j.placement.compose(joint_motion(j, lock.values))
        out.append(replace(j, type=JointType.FIXED, placement=placement, armature=()))
    kept = [c for c in couplings if c.joint not in locked and c.master not in locked]
    order = [j.name for j in tree]
    return out, kept, tuple(sorted(locked.values(), key=lambda x: order.index(x.name)))


def armature_values(
    raw: tuple[Scalar, ...] | None, joint: Joint, source: SourceRef | None, kind: str = "joint"
) -> tuple[Scalar, ...]:
    """The joint's armature as ``nv`` values: one value applies to every velocity coordinate
    (MuJoCo's convention for ball and free joints), or one per coordinate; () when none or
    all zero."""
    if raw is None:
        return ()
    where = f"{kind} {joint.name!r}"
    if joint.nv == 0:
        if any(not (isinstance(x, float) and x == 0.0) for x in raw):
            raise ModelError(f"{where}: a fixed joint has no armature (it does not move)", source)
        return ()
    if len(raw) == 1:
        raw = raw * joint.nv
    if len(raw) != joint.nv:
        raise ModelError(
            f"{where}: armature needs 1 value or {joint.nv} (one per velocity coordinate of a "
            f"{joint.type.value} joint), got {len(raw)}",
            source,
        )
    if all(isinstance(x, float) and x == 0.0 for x in raw):
        return ()
    return tuple(raw)


def check_armature(joint: Joint, values: Mapping[str, float]) -> None:
    """Armature finite and non-negative at the parameter values ``values``."""
    for x in joint.armature:
        value = evaluate(x, values)
        if not math.isfinite(value):
            raise ModelError(f"joint {joint.name!r}: armature is not finite", joint.source)
        if value < 0:
            raise ModelError(
                f"joint {joint.name!r}: negative armature {value:g} (kg m² or kg)", joint.source
            )


__all__ = [
    "LockRequest",
    "apply_locks",
    "armature_values",
    "check_armature",
    "joint_motion",
    "neutral_values",
]
