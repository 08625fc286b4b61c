"""Loop joints as Pinocchio constraints, and Pinocchio's constrained dynamics of a symgen state.

:func:`pin_model_with_loops` builds the Pinocchio model of a symgen model's spanning tree
(:func:`symgen.peers.pinocchio.pin_model_from_symgen`) and one or two
``pinocchio.RigidConstraintModel`` per loop joint, which hold exactly the loop joint's
relative motion:

- revolute / continuous: two ``CONTACT_3D`` point constraints, at the joint frame's origin
  and at ``axis_offset`` along its axis: two points of a body fixed to two points of
  another leave exactly the rotation about the line through them (6 rows, 5 independent);
- spherical: one ``CONTACT_3D`` at the joint frame's origin;
- fixed: one ``CONTACT_6D`` between the two joint frames.

:func:`constraint_dynamics` runs ``pinocchio.initConstraintDynamics`` and
``pinocchio.constraintDynamics`` (the proximal solver of Carpentier, Budhiraja, Mansard,
"Proximal and sparse resolution of constrained dynamic equations", RSS 2021) on a symgen
state converted by :class:`symgen.peers.pinocchio.Bridge`. Its rows are redundant (per
revolute loop, and between loops in overconstrained mechanisms): the proximal iterations
converge to a least-squares multiplier, and the accelerations, unique at a consistent
state, do not depend on which.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pinocchio as pin

from symgen.model import JointType, Model
from symgen.peers.pinocchio import Bridge, pin_model_from_symgen, se3

#: Distance (m) from the joint frame's origin of a revolute loop joint's second point.
AXIS_OFFSET = 0.1
#: Proximal settings of :func:`constraint_dynamics`. Each proximal iteration contracts the
#: error of λ in the range of the Delassus matrix D = J M⁻¹ Jᵀ by mu / (σ² + mu), σ² its
#: nonzero eigenvalues; in its null space (the redundant rows) λ is left to rounding, which
#: the accelerations do not see. Pinocchio stops when the change of λ falls below
#: ACCURACY, or after MAX_ITER iterations; :func:`constraint_dynamics` then checks the
#: constraint residual itself (RESIDUAL_RTOL).
MU = 1e-8
ACCURACY = 1e-12
MAX_ITER = 100
#: Bound on |J q̈ − (drift₂ − drift₁)|∞ relative to max(1, |J|∞ |q̈|∞, |drift₂ − drift₁|∞).
RESIDUAL_RTOL = 1e-11


def default_settings() -> pin.ProximalSettings:
    """``pinocchio.ProximalSettings(0, ACCURACY, MU, MAX_ITER)``: no absolute criterion
    (Pinocchio's absolute residual does not vanish with redundant rows), the relative one
    (the change of λ) at ACCURACY."""
    return pin.ProximalSettings(0.0, ACCURACY, MU, MAX_ITER)


def _attachment(bridge: Bridge, body: str) -> tuple[int, pin.SE3]:
    """Pinocchio joint carrying ``body`` (the root: 0) and the body frame's placement in it."""
    frame = bridge.pin_model.frames[bridge.frame_id(body)]
    return frame.parentJoint, frame.placement


def loop_constraint_models(
    model: Model,
    pin_model: pin.Model,
    params: Mapping[str, float] | None = None,
    axis_offset: float = AXIS_OFFSET,
) -> list[pin.RigidConstraintModel]:
    """``pinocchio.RigidConstraintModel`` s (reference frame ``LOCAL``, no Baumgarte terms)
    holding the loop joints of ``model.resolve(params)`` on ``pin_model`` (the tree of
    :func:`pin_model_from_symgen`, or any with the same joint names and BODY frames).

    Raises ValueError (one line) for a loop joint type other than revolute, continuous,
    spherical or fixed.
    """
    m = model.resolve(params)
    bridge = Bridge(m, pin_model)
    out: list[pin.RigidConstraintModel] = []
    for joint in m.loop_joints:
        j1, body1 = _attachment(bridge, joint.parent)
        j2, body2 = _attachment(bridge, joint.child)
        f1 = body1 * se3(joint.placement)  # joint frame F_P in Pinocchio joint j1
        f2 = body2 * se3(joint.child_placement)  # F_C in joint j2
        if joint.type in (JointType.REVOLUTE, JointType.CONTINUOUS):
            axis = np.array(joint.axis, dtype=float)
            shift = pin.SE3(np.eye(3), axis_offset * axis / np.linalg.norm(axis))
            pairs = [(f1, f2, pin.ContactType.CONTACT_3D, ""),
                     (f1 * shift, f2 * shift, pin.ContactType.CONTACT_3D, "_axis")]
        elif joint.type is JointType.SPHERICAL:
            pairs = [(f1, f2, pin.ContactType.CONTACT_3D, "")]
        elif joint.type is JointType.FIXED:
            pairs = [(f1, f2, pin.ContactType.CONTACT_6D, "")]
        else:
            raise ValueError(f"loop joint {joint.name!r}: no Pinocchio constraint for type "
                             f"{joint.type.value!r} (revolute, continuous, spherical, fixed)")
        for p1, p2, kind, suffix in pairs:
            cm = pin.RigidConstraintModel(kind, pin_model, j1, p1, j2, p2, pin.ReferenceFrame.LOCAL)
            cm.name = joint.name + suffix
            out.append(cm)
    return out


def pin_model_with_loops(
    model: Model,
    params: Mapping[str, float] | None = None,
    axis_offset: float = AXIS_OFFSET,
) -> tuple[pin.Model, list[pin.RigidConstraintModel]]:
    """:func:`pin_model_from_symgen` and :func:`loop_constraint_models` on it."""
    pin_model = pin_model_from_symgen(model, params)
    return pin_model, loop_constraint_models(model, pin_model, params, axis_offset)


def constraint_dynamics(
    model: Model,
    pin_model: pin.Model,
    constraints: Sequence[pin.RigidConstraintModel],
    q: np.ndarray,
    v: np.ndarray,
    tau: np.ndarray,
    settings: pin.ProximalSettings | None = None,
) -> np.ndarray:
    """q̈ (symgen's layout) of ``pinocchio.constraintDynamics(pin_model, data, q, v, tau,
    constraints, datas, settings)`` after ``pinocchio.initConstraintDynamics``, for the
    symgen state (q, v, τ) converted by :class:`Bridge`.

    ``settings`` defaults to :func:`default_settings`; Pinocchio updates it in place with
    the iterations done. The solution is checked on Pinocchio's own terms: J q̈ equals the
    difference of the two contact points' acceleration drifts (``getConstraintsJacobian``,
    ``RigidConstraintData.contact{1,2}_acceleration_drift``) to RESIDUAL_RTOL; else a
    one-line ValueError.
    """
    bridge = Bridge(model, pin_model)
    settings = default_settings() if settings is None else settings
    models = pin.StdVec_RigidConstraintModel()
    for cm in constraints:
        models.append(cm)
    datas = pin.StdVec_RigidConstraintData()
    for cm in constraints:
        datas.append(cm.createData())
    data = pin_model.createData()
    pin.initConstraintDynamics(pin_model, data, models, datas)
    a = pin.constraintDynamics(pin_model, data, bridge.q_to_pin(np.asarray(q, dtype=float)),
                               bridge.v_to_pin(v), bridge.v_to_pin(tau), models, datas, settings)
    jac = pin.getConstraintsJacobian(pin_model, data, models, datas)
    rhs = np.concatenate([(cd.contact2_acceleration_drift.vector
                           - cd.contact1_acceleration_drift.vector)[: cm.residualSize()]
                          for cm, cd in zip(models, datas, strict=True)])
    residual = float(np.max(np.abs(jac @ a - rhs), initial=0.0))
    scale = max(1.0, float(np.max(np.abs(jac), initial=0.0) * np.max(np.abs(a), initial=0.0)),
                float(np.max(np.abs(rhs), initial=0.0)))
    if residual > RESIDUAL_RTOL * scale:
        raise ValueError(f"pinocchio.constraintDynamics: constraint residual {residual:.2e} "
                         f"(scale {scale:.2e}) after {settings.iter} proximal iterations")
    return bridge.v_from_pin(a)


__all__ = [
    "ACCURACY",
    "AXIS_OFFSET",
    "MAX_ITER",
    "MU",
    "constraint_dynamics",
    "default_settings",
    "loop_constraint_models",
    "pin_model_with_loops",
]
