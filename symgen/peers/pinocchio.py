"""Pinocchio counterparts of symgen models, and conversions of q, v, matrices between them.

:func:`pin_model_from_symgen` builds a ``pinocchio.Model`` from a symgen ``Model`` using
Pinocchio's own joint definitions (unaligned revolute/prismatic/helical joints, composite
joints for cylindrical, universal and planar joints, spherical and free-flyer joints).
:class:`Bridge` maps a symgen model onto any Pinocchio model with the same joint names, e.g.
one from ``pin.buildModelFromUrdf`` (whose continuous joints store (cos θ, sin θ)).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pinocchio as pin

from symgen.model import JointType, Model
from symgen.peers.pinocchio_mjcf import (
    DIFFERS,
    is_mjcf,
    mjcf_reading_difference,
    pin_joint_parts,
    pin_model_from_mjcf,
)

#: Row order turning Pinocchio's [linear; angular] 6-vectors into symgen's [angular; linear].
SWAP = np.array([3, 4, 5, 0, 1, 2])


def _arr(x) -> np.ndarray:
    return np.array(x, dtype=float)


def _unit(x) -> np.ndarray:
    a = _arr(x)
    return a / np.linalg.norm(a)


def plane_directions(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """e1, e2 of a planar joint as docs/conventions.md defines them."""
    x = np.array([1.0, 0.0, 0.0])
    if abs(float(normal @ x)) > 0.9:
        x = np.array([0.0, 1.0, 0.0])
    e1 = x - float(normal @ x) * normal
    e1 = e1 / np.linalg.norm(e1)
    return e1, np.cross(normal, e1)


def _composite(*joints) -> pin.JointModelComposite:
    comp = pin.JointModelComposite()
    for k, jm in enumerate(joints):
        comp.addJoint(jm, pin.SE3.Identity(), f"part_{k}")
    return comp


def pin_joint_model(joint) -> pin.JointModel:
    """Pinocchio joint model with the motion symgen's joint type prescribes."""
    t = joint.type
    if t in (JointType.REVOLUTE, JointType.CONTINUOUS):
        return pin.JointModelRevoluteUnaligned(_unit(joint.axis))
    if t is JointType.PRISMATIC:
        return pin.JointModelPrismaticUnaligned(_unit(joint.axis))
    if t is JointType.HELICAL:
        # Pinocchio: translation = pitch * angle along the axis (checked in the tests)
        return pin.JointModelHelicalUnaligned(_unit(joint.axis), float(joint.pitch))
    if t is JointType.CYLINDRICAL:
        a = _unit(joint.axis)
        return _composite(pin.JointModelPrismaticUnaligned(a), pin.JointModelRevoluteUnaligned(a))
    if t is JointType.UNIVERSAL:
        return _composite(
            pin.JointModelRevoluteUnaligned(_unit(joint.axis)),
            pin.JointModelRevoluteUnaligned(_unit(joint.axis2)),
        )
    if t is JointType.PLANAR:
        n = _unit(joint.axis)
        e1, e2 = plane_directions(n)
        return _composite(
            pin.JointModelPrismaticUnaligned(e1),
            pin.JointModelPrismaticUnaligned(e2),
            pin.JointModelRevoluteUnaligned(n),
        )
    if t is JointType.SPHERICAL:
        return pin.JointModelSpherical()
    if t is JointType.FREE:
        return pin.JointModelFreeFlyer()
    raise ValueError(f"joint {joint.name!r}: no Pinocchio counterpart for {t.value!r}")


def se3(transform) -> pin.SE3:
    return pin.SE3(_arr(transform.rotation), _arr(transform.translation))


def pin_inertia(mass, com, inertia) -> pin.Inertia:
    """``pin.Inertia`` of a mass, centre of mass and rotational inertia about it, without the
    strict positivity check of its Python constructor ("The 3d inertia should be positive").

    A description may carry inertias that are positive semi-definite only up to rounding:
    iCub's ``r_hip_2`` has ixx = iyy = -5.42101e-20 kg m² in ``icub.urdf``, a point mass
    written through a float conversion. symgen's validation accepts it (principal moments
    down to -(INERTIA_RTOL·trace + INERTIA_ATOL), symgen.model.validation), and so does
    Pinocchio's own URDF parser, which builds its inertias without that check; the values
    are passed through unchanged.
    """
    out = pin.Inertia(float(mass), _arr(com), np.eye(3))
    out.inertia = _arr(inertia)
    return out


def pin_model_from_symgen(model: Model, params: Mapping[str, float] | None = None) -> pin.Model:
    """A Pinocchio model of ``model.resolve(params)``: joint i of symgen is Pinocchio joint
    i + 1; every body gets a BODY frame and every symgen frame an OP_FRAME of the same name;
    joint armature goes to ``model.armature``."""
    m = model.resolve(params)
    pm = pin.Model()
    pm.name = m.name
    pm.gravity = pin.Motion(_arr(m.gravity), np.zeros(3))
    body_frame = {m.root: 0}
    if m.root != "universe":
        body_frame[m.root] = pm.addFrame(
            pin.Frame(m.root, 0, 0, pin.SE3.Identity(), pin.FrameType.OP_FRAME)
        )
    for i, joint in enumerate(m.joints):
        body = m.bodies[i]
        jid = pm.addJoint(
            m.parents[i] + 1, pin_joint_model(joint), se3(joint.placement), joint.name
        )
        assert jid == i + 1
        inertia = pin_inertia(body.mass, body.com, body.inertia)
        pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        body_frame[body.name] = pm.addFrame(
            pin.Frame(
                body.name, jid, body_frame[joint.parent], pin.SE3.Identity(), pin.FrameType.BODY
            )
        )
    index = {b.name: i for i, b in enumerate(m.bodies)}
    for f in m.frames:
        parent_joint = index[f.body] + 1 if f.body in index else 0
        pm.addFrame(
            pin.Frame(
                f.name, parent_joint, body_frame[f.body], se3(f.placement), pin.FrameType.OP_FRAME
            )
        )
    for c in m.coupled.values():  # a coupled joint becomes a JointModelMimic of its master
        if pm.getJointId(c.joint) < pm.getJointId(c.master):
            raise ValueError(f"joint {c.joint!r} is coupled to {c.master!r}, which comes after "
                             "it: a Pinocchio mimic joint must follow its master")
        pm = pin.transformJointIntoMimic(pm, pm.getJointId(c.master), pm.getJointId(c.joint),
                                         float(c.ratio), float(c.offset))
    if m.has_armature:  # joint armature: Pinocchio's model.armature, in its v layout
        pm.armature = Bridge(m, pm).v_to_pin(np.array(m.armature, dtype=float))
    return pm


def pin_model_from_urdf(model: Model) -> pin.Model:
    """Pinocchio's own reading of the URDF file ``model`` was loaded from.

    ``pin.buildModelFromUrdf(model.source.file)``, with a free-flyer root joint of the same
    name when symgen's root body is not a link of the file (``--floating-base``), reduced by
    ``pin.buildReducedModel`` at symgen's locked joints (``model.locks``), with symgen's
    gravity and joint armature (a URDF holds neither). Comparing with this model checks
    symgen's reading of the file and its lumping of fixed links, not only its kernels.

    ``<mimic>`` joints are read as Pinocchio's ``JointModelMimic`` (``mimic=True``), as
    symgen imposes its couplings: a coupled joint has no coordinate of its own.

    Raises ValueError (one line) when the file's model cannot stand for ``model``: not read
    from a URDF, runtime parameters or loop joints; :class:`Bridge` then rejects a Pinocchio
    model whose joints differ (names, nq, nv).
    """
    src = model.source
    path = None if src is None else Path(src.file)
    if path is None or path.suffix.lower() != ".urdf":
        raise ValueError("the model was not read from a URDF file")
    if model.parameters:
        raise ValueError("the model has runtime parameters")
    if model.loop_joints:
        raise ValueError("the model has loop joints")
    if not path.is_file():
        raise ValueError(f"{path} is not a file")
    mimic = bool(model.couplings)
    pm = pin.buildModelFromUrdf(str(path), mimic=mimic)
    if not pm.existFrame(model.root, pin.FrameType.BODY):
        free = [j for j in model.joints if j.type is JointType.FREE and j.parent == model.root]
        if len(free) != 1:
            raise ValueError(f"symgen's root {model.root!r} is not a link of {path.name}")
        pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer(), free[0].name,
                                    mimic=mimic)
    m = model.resolve()
    locks = m.locks
    if locks:
        q_ref = pin.neutral(pm)
        ids = []
        for lock in locks:
            if not pm.existJointName(lock.name):
                raise ValueError(f"{path.name} read by Pinocchio has no joint {lock.name!r}")
            jid = pm.getJointId(lock.name)
            pj, values = pm.joints[jid], [float(x) for x in lock.values]
            if pj.nq == 2 and len(values) == 1:  # continuous joint: (cos θ, sin θ)
                values = [np.cos(values[0]), np.sin(values[0])]
            if pj.nq != len(values):
                raise ValueError(f"locked joint {lock.name!r}: nq differs from Pinocchio's")
            q_ref[pj.idx_q : pj.idx_q + pj.nq] = values
            ids.append(jid)
        pm = pin.buildReducedModel(pm, ids, q_ref)
    pm.gravity = pin.Motion(_arr(m.gravity), np.zeros(3))
    if m.has_armature:
        pm.armature = Bridge(m, pm).v_to_pin(np.array(m.armature, dtype=float))
    return pm


def pin_bridge_from_mjcf(model: Model) -> tuple[Bridge, list[str]]:
    """A :class:`Bridge` to Pinocchio's own reading of the MJCF file ``model`` was loaded
    from (:func:`symgen.peers.pinocchio_mjcf.pin_model_from_mjcf`), checked against symgen's
    reading of MuJoCo's compiled model (:func:`~symgen.peers.pinocchio_mjcf.
    mjcf_reading_difference`), and what was adopted from MuJoCo. Raises ValueError (one
    line) when it cannot stand for ``model``; when the readings differ the message starts
    with :data:`DIFFERS`."""
    pm, zeros, adopted = pin_model_from_mjcf(model)
    try:
        bridge = Bridge(model, pm, zeros)
    except ValueError as exc:
        raise ValueError(f"{DIFFERS}: {exc}") from None
    difference = mjcf_reading_difference(bridge)
    if difference is not None:
        raise ValueError(f"{DIFFERS}: {difference}")
    return bridge, adopted


def pinocchio_counterpart(model: Model, from_source: bool = True) -> tuple[Bridge, str]:
    """A :class:`Bridge` to the Pinocchio model to compare ``model`` with, and one line
    saying which it is: Pinocchio's reading of the source file (a URDF,
    :func:`pin_model_from_urdf`; an MJCF file where Pinocchio reads it as MuJoCo does,
    :func:`pin_bridge_from_mjcf`) when ``from_source`` and possible, else
    :func:`pin_model_from_symgen` (with the reason). Errors of the second construction
    propagate."""
    kind = "MJCF" if is_mjcf(model) else "URDF"
    reason = "not asked for"
    if from_source:
        try:
            bridge, adopted = pin_bridge_from_mjcf(model) if kind == "MJCF" else \
                (Bridge(model, pin_model_from_urdf(model)), [])
        except Exception as exc:  # noqa: BLE001 - any failure means: use the fallback
            reason = _one_line(exc, 400)
        else:
            assert model.source is not None
            how = f"pinocchio.buildModelFrom{'Urdf' if kind == 'URDF' else kind}"
            if model.locks:
                how += " + buildReducedModel"
            how = "; ".join([how, *adopted])
            return bridge, f"Pinocchio's own reading of {Path(model.source.file).name} ({how})"
    bridge = Bridge(model, pin_model_from_symgen(model))
    if not reason.startswith(DIFFERS):
        reason = f"Pinocchio's {kind} reading not used: {reason}"
    return bridge, f"built from symgen's model ({reason})"


def _one_line(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."


class Bridge:
    """Conversions between a symgen model and a Pinocchio model, joints matched by name.

    ``v_pin = v[perm]`` (free joints: symgen [ω; v] ↔ Pinocchio [v; ω]); the same holds for
    a and τ. Continuous joints with Pinocchio nq = 2 store (cos θ, sin θ).
    """

    def __init__(self, model: Model, pin_model: pin.Model,
                 zeros: Mapping[str, float] | None = None) -> None:
        self.model = model
        self.pin_model = pin_model
        self.data = pin_model.createData()
        #: Pinocchio's value of each 1-DOF joint's coordinate where symgen's is zero (its
        #: MJCF reading measures a hinge from the file's zero, symgen from ``ref``)
        self.zeros = dict(zeros or {})
        if pin_model.nv != model.nv:
            raise ValueError(f"nv differs: symgen {model.nv}, pinocchio {pin_model.nv}")
        parts = self.parts = pin_joint_parts(model, pin_model)
        #: whether some Pinocchio joint stands for several of symgen's (a composite joint)
        self.composite = any(name != pin_model.names[jid] for name, (jid, _) in parts.items())
        self.perm = np.full(model.nv, -1)
        self.joints: list[tuple] = []  # (symgen joint, q slice, pin idx_q, nq)
        for joint in model.independent_joints:  # coupled joints: Pinocchio's mimic joints
            if joint.name not in parts:
                raise ValueError(f"pinocchio model has no joint {joint.name!r}")
            pj = parts[joint.name][1]
            if pj.nv != joint.nv:
                raise ValueError(f"joint {joint.name!r}: nv {joint.nv} vs pinocchio {pj.nv}")
            if pj.nq != joint.nq and not (pj.nq == 2 and joint.nq == 1):
                raise ValueError(f"joint {joint.name!r}: nq {joint.nq} vs pinocchio {pj.nq}")
            vs = model.v_slices[joint.name]
            local = np.arange(vs.start, vs.stop)
            if joint.type is JointType.FREE:
                local = np.concatenate([local[3:], local[:3]])
            self.perm[pj.idx_v : pj.idx_v + pj.nv] = local
            self.joints.append((joint, model.q_slices[joint.name], pj.idx_q, pj.nq))
        if sorted(self.perm) != list(range(model.nv)):
            raise ValueError("pinocchio's joints do not cover symgen's coordinates")

    def joint_id(self, name: str) -> int:
        """The Pinocchio joint moving symgen's joint ``name`` (a composite joint's id for
        each of its parts)."""
        return self.parts[name][0]

    # ----------------------------------------------------------------- vectors
    def q_to_pin(self, q: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pin_model.nq)
        for joint, qs, iq, nq in self.joints:
            if nq == 2 and joint.nq == 1:
                out[iq : iq + 2] = np.cos(q[qs][0]), np.sin(q[qs][0])
            elif joint.name in self.zeros:
                out[iq] = q[qs][0] + self.zeros[joint.name]
            else:
                out[iq : iq + nq] = q[qs]
        return out

    def q_from_pin(self, qp: np.ndarray) -> np.ndarray:
        out = np.zeros(self.model.nq)
        for joint, qs, iq, nq in self.joints:
            if nq == 2 and joint.nq == 1:
                out[qs] = np.arctan2(qp[iq + 1], qp[iq])
            elif joint.name in self.zeros:
                out[qs] = qp[iq] - self.zeros[joint.name]
            else:
                out[qs] = qp[iq : iq + nq]
        return out

    def v_to_pin(self, v: np.ndarray) -> np.ndarray:
        """v, a or τ in Pinocchio's layout."""
        return np.asarray(v, dtype=float)[self.perm]

    def v_from_pin(self, vp: np.ndarray) -> np.ndarray:
        out = np.zeros(self.model.nv)
        out[self.perm] = vp
        return out

    def matrix_from_pin(self, mp: np.ndarray) -> np.ndarray:
        out = np.zeros((self.model.nv, self.model.nv))
        out[np.ix_(self.perm, self.perm)] = mp
        return out

    def regressor_from_pin(self, yp: np.ndarray) -> np.ndarray:
        """Pinocchio's joint-torque regressor (rows in its v order, a block of 10 columns
        per joint, in its joint order) in symgen's rows and body order; the 10 parameters
        of a block are in the same order in both."""
        out = np.zeros((self.model.nv, 10 * self.model.nbodies))
        rows = self.v_from_pin_rows(yp)
        if self.composite:
            raise ValueError("a Pinocchio composite joint carries one body where symgen has "
                             "a chain: the regressors' columns differ")
        for i, joint in enumerate(self.model.joints):
            jid = self.pin_model.getJointId(joint.name)
            out[:, 10 * i:10 * i + 10] = rows[:, 10 * (jid - 1):10 * jid]
        return out

    def v_from_pin_rows(self, mp: np.ndarray) -> np.ndarray:
        """A matrix whose rows are in Pinocchio's v order, with rows in symgen's."""
        out = np.zeros((self.model.nv, mp.shape[1]))
        out[self.perm] = mp
        return out

    def jacobian_from_pin(self, jp: np.ndarray) -> np.ndarray:
        out = np.zeros((6, self.model.nv))
        out[:, self.perm] = jp[SWAP]
        return out

    @staticmethod
    def motion(m: pin.Motion) -> np.ndarray:
        """A Pinocchio Motion as symgen's [angular; linear]."""
        return np.concatenate([m.angular, m.linear])

    def forces_to_pin(self, f_ext: Mapping[str, np.ndarray]) -> list[pin.Force]:
        """Per-body [moment; force] (body frame) as Pinocchio's per-joint local forces."""
        if self.composite:
            raise ValueError("a Pinocchio composite joint has no bodies between its parts: "
                             "no counterpart of external forces on symgen's chain bodies")
        out = [pin.Force.Zero() for _ in range(self.pin_model.njoints)]
        for name, f in f_ext.items():
            joint = self.model.joints[self.model.body_index(name)]
            out[self.pin_model.getJointId(joint.name)] = pin.Force(_arr(f[3:]), _arr(f[:3]))
        return out

    # ----------------------------------------------------------------- dynamics
    def mass_matrix(self, qp: np.ndarray) -> np.ndarray:
        """Pinocchio's ``crba`` (symmetrized: it fills the upper triangle), its layout. With
        mimic joints on fresh data: Pinocchio 4.1's crba then leaves stale sums in data.M
        (dm_control's manipulator: entry (arm_root, fingertip) moves by -7.4e-8 per call on
        the same data, while fresh data meets the reference and MuJoCo to 1e-17)."""
        data = self.pin_model.createData() if self.model.coupled else self.data
        m = np.asarray(pin.crba(self.pin_model, data, qp))
        return np.triu(m) + np.triu(m, 1).T

    def forward_dynamics(self, qp: np.ndarray, vp: np.ndarray, taup: np.ndarray,
                         forces: list[pin.Force] | None = None) -> np.ndarray:
        """Pinocchio's ``aba`` (its layout); with mimic joints, which its ABA rejects, the
        solve M⁻¹(τ − C) of its ``crba`` and ``rnea``."""
        pm, pd = self.pin_model, self.data
        extra = (forces,) if forces else ()
        if not self.model.coupled:
            return np.asarray(pin.aba(pm, pd, qp, vp, taup, *extra))
        c = pin.rnea(pm, pd, qp, vp, np.zeros(pm.nv), *extra)
        return np.linalg.solve(self.mass_matrix(qp), taup - c)

    def mass_matrix_inverse(self, qp: np.ndarray) -> np.ndarray:
        """Pinocchio's ``computeMinverse`` (symmetrized, its layout); with mimic joints,
        which it rejects, the inverse of its ``crba``."""
        if self.model.coupled:
            return np.linalg.inv(self.mass_matrix(qp))
        m = np.asarray(pin.computeMinverse(self.pin_model, self.data, qp))
        return np.triu(m) + np.triu(m, 1).T

    # ----------------------------------------------------------------- frames
    def frame_id(self, name: str) -> int:
        """Pinocchio frame of a symgen body or frame name: the BODY frame of that name if
        there is one, else any frame of that name; the root maps to frame 0 ("universe")."""
        pm = self.pin_model
        if pm.existFrame(name, pin.FrameType.BODY):
            return pm.getFrameId(name, pin.FrameType.BODY)
        if pm.existFrame(name):
            return pm.getFrameId(name)
        if name == self.model.root:
            return 0
        raise KeyError(f"pinocchio model has no frame {name!r}")

    def names(self) -> list[str]:
        """Every body (root included) and frame name of the symgen model."""
        return [self.model.root, *self.model.body_names, *self.model.frame_names]


def quaternion_blocks(model: Model) -> list[slice]:
    """Slices of q holding quaternions (compare them up to sign)."""
    out = []
    for joint in model.joints:
        s = model.q_slices[joint.name]
        if joint.type.layout.quaternion:
            out.append(slice(s.stop - 4, s.stop))
    return out


def align_quaternions(model: Model, q: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``q`` with each quaternion's sign flipped to the hemisphere of ``target``'s."""
    out = np.array(q, dtype=float)
    for s in quaternion_blocks(model):
        if out[s] @ target[s] < 0:
            out[s] = -out[s]
    return out


__all__ = [
    "SWAP",
    "Bridge",
    "align_quaternions",
    "pin_inertia",
    "pin_joint_model",
    "pin_model_from_symgen",
    "pin_bridge_from_mjcf",
    "pin_model_from_urdf",
    "pinocchio_counterpart",
    "plane_directions",
    "quaternion_blocks",
    "se3",
]
