"""Pinocchio's own reading of an MJCF file (``pinocchio.buildModelFromMJCF``), checked
against MuJoCo's.

What Pinocchio 4.1's MJCF reader does, found by experiment (docs/model-format.md, "MJCF"):

- named joints keep their MJCF names; an unnamed joint is ``<body>Joint_<k>`` (symgen's
  reader says ``<body>_joint``), so the joints are matched in the file's order, which both
  readers keep (depth first);
- the joints of a body with several become one composite joint ``Composite_<first>``
  (:func:`pin_joint_parts` maps its parts);
- a hinge or slide coordinate is MuJoCo's ``qpos``, measured from the joint's zero, not
  from its ``ref`` as symgen's (the bridge adds ``ref``); ball and free joints
  store (x, y, z, w) quaternions, as symgen; armature and gravity are read;
- ``<equality>`` elements are ignored (a coupled joint keeps its own coordinate).

Its known misreadings (a body tree after the first one of ``<worldbody>`` left out, the
pose of a top-level body without joints dropped, a joint ``pos`` from a default class
ignored, a free body's position) change the model, not the file's meaning: MuJoCo compiles
the file and defines it. :func:`mjcf_reading_difference` compares Pinocchio's model with
symgen's reading of MuJoCo's compiled model (checked against MuJoCo itself by the ``mujoco``
peer of ``symgen verify``) and says what differs, so that verify can fall back instead of
failing.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pinocchio as pin

import symgen.reference as ref
from symgen.model import Model

#: Prefix of the name Pinocchio's MJCF reader gives the composite joint of a body with
#: several joints (followed by the name of the body's first joint).
COMPOSITE_PREFIX = "Composite_"


def pin_joint_parts(model: Model, pin_model: pin.Model) -> dict[str, tuple[int, object]]:
    """Symgen joint name -> (Pinocchio joint id, the Pinocchio joint or composite part that
    moves it, with its ``idx_q``/``idx_v``/``nq``/``nv``). Joints are matched by name; a
    composite joint named ``Composite_<first>`` (Pinocchio's MJCF reading of a body with
    several joints) stands for symgen's chain of joints from ``<first>`` (its massless
    intermediate bodies have one child joint each), part by part."""
    names = set(model.joint_names)
    below: dict[str, list[str]] = {}
    for joint in model.joints:
        below.setdefault(joint.parent, []).append(joint.name)
    child = {j.name: j.child for j in model.joints}
    out: dict[str, tuple[int, object]] = {}
    for jid in range(1, pin_model.njoints):
        name, pj = pin_model.names[jid], pin_model.joints[jid]
        if name in names or not name.startswith(COMPOSITE_PREFIX) \
                or pj.shortname() != "JointModelComposite":
            out[name] = (jid, pj)
            continue
        chain = [name.removeprefix(COMPOSITE_PREFIX)]
        parts = list(pj.extract().joints)
        while len(chain) < len(parts) and chain[-1] in child:
            after = below.get(child[chain[-1]], [])
            if len(after) != 1:
                break
            chain.append(after[0])
        if chain[0] not in names or len(chain) != len(parts):
            raise ValueError(f"pinocchio's composite joint {name!r} matches no chain of "
                             "symgen's joints")
        out.update({n: (jid, part) for n, part in zip(chain, parts, strict=True)})
    return out


#: How the reason of a fallback starts when Pinocchio's reading differs from MuJoCo's.
DIFFERS = "Pinocchio's MJCF reading differs from MuJoCo's"
#: Relative difference above which Pinocchio's reading is taken to differ from MuJoCo's
#: (rounding stays below 1e-12 on every MuJoCo model of gymnasium and dm_control).
READING_TOLERANCE = 1e-8
#: Random configurations (besides q = 0) at which the readings are compared.
READING_STATES = 2


def is_mjcf(model: Model) -> bool:
    """Whether ``model`` was read from an MJCF file (it has MuJoCo's coordinates)."""
    layout = model.file_coordinates
    return layout is not None and layout.convention == "mujoco" and model.source is not None


def pin_model_from_mjcf(model: Model) -> tuple[pin.Model, dict[str, float], list[str]]:
    """Pinocchio's own reading of the MJCF file ``model`` was loaded from
    (``pin.buildModelFromMJCF``), its joints renamed as symgen's (the file's order), reduced
    by ``pin.buildReducedModel`` at symgen's locked joints, with MuJoCo's gravity (Pinocchio
    4.1 ignores ``<option gravity>`` and the gravity flag); the ``ref`` of each hinge and
    slide, Pinocchio's coordinate where symgen's is zero (for the ``Bridge``); and what was
    adopted from MuJoCo (one line each, for verify's note).

    Its tree stands for symgen's spanning tree: the loops of ``<equality>`` connect and weld
    are symgen's loop joints, which verify's Pinocchio peer leaves to the tree kernels.
    Raises ValueError (one line) when the file's model cannot stand for ``model``: not read
    from an MJCF file, runtime parameters, joint couplings (Pinocchio's reader ignores
    ``<equality>`` joint and tendon couplings; the reason then starts with
    :data:`DIFFERS`)."""
    if not is_mjcf(model):
        raise ValueError("the model was not read from an MJCF file")
    assert model.source is not None and model.file_coordinates is not None
    path = Path(model.source.file)
    if model.parameters:
        raise ValueError("the model has runtime parameters")
    if model.couplings:
        raise ValueError(f"{DIFFERS}: it ignores the joint couplings of <equality> (its "
                         f"coupled joints keep coordinates of their own: "
                         f"{', '.join(sorted(model.coupled))})")
    if not path.is_file():
        raise ValueError(f"{path} is not a file")
    try:
        pm = pin.buildModelFromMJCF(str(path))
    except (RuntimeError, ValueError) as exc:  # "From file: ... message: <what>"
        text = " ".join(str(exc).split())
        raise ValueError(f"pinocchio.buildModelFromMJCF: {text.rpartition('message: ')[2]}"
                         ) from None
    layout = model.file_coordinates
    _rename(pm, [j.joint for j in sorted(layout.joints, key=lambda j: j.qpos_address)])
    zeros = {j.joint: j.zero for j in layout.joints if j.kind in ("hinge", "slide")}
    if model.locks:
        q_ref = pin.neutral(pm)
        ids = []
        for lock in model.locks:
            jid = pm.getJointId(lock.name) if pm.existJointName(lock.name) else 0
            if jid == 0 or pm.joints[jid].nq != len(lock.values):
                raise ValueError(f"locked joint {lock.name!r} is not a joint of its own in "
                                 "Pinocchio's MJCF reading")
            values = [float(x) for x in lock.values]
            if lock.name in zeros:
                values[0] += zeros[lock.name]
            pj = pm.joints[jid]
            q_ref[pj.idx_q:pj.idx_q + pj.nq] = values
            ids.append(jid)
        pm = pin.buildReducedModel(pm, ids, q_ref)
    adopted = []
    gravity = np.array([float(g) for g in model.resolve().gravity])
    if not np.array_equal(pm.gravity.linear, gravity):
        adopted.append(f"MuJoCo's gravity {_vec(gravity)}: Pinocchio reads "
                       f"{_vec(pm.gravity.linear)}")
        pm.gravity = pin.Motion(gravity, np.zeros(3))
    return pm, zeros, adopted


def _rename(pm: pin.Model, names: list[str]) -> None:
    """Give Pinocchio's joints MuJoCo's names in symgen's spelling (``names``: the file's
    joints in qpos order); a composite joint becomes ``Composite_<first part>``. Raises
    ValueError (:data:`DIFFERS`) when the numbers of joints differ."""
    parts = []
    for jid in range(1, pm.njoints):
        pj = pm.joints[jid]
        composite = pj.shortname() == "JointModelComposite"
        parts.append((jid, len(pj.extract().joints) if composite else 1, composite))
    count = sum(n for _, n, _ in parts)
    if count < len(names):
        missing = ", ".join(repr(n) for n in names[count:count + 3])
        more = ", ..." if len(names) > count + 3 else ""
        raise ValueError(f"{DIFFERS}: it has {count} of MuJoCo's {len(names)} joints "
                         f"({missing}{more} missing)")
    if count > len(names):
        raise ValueError(f"{DIFFERS}: it has {count} joints where MuJoCo has {len(names)}")
    k = 0
    for jid, n, composite in parts:
        pm.names[jid] = COMPOSITE_PREFIX + names[k] if composite else names[k]
        k += n


class BridgeLike(Protocol):
    """What :func:`mjcf_reading_difference` uses of a :class:`symgen.peers.pinocchio.Bridge`."""

    model: Model
    pin_model: Any
    data: Any
    parts: Mapping[str, tuple[int, Any]]

    def q_to_pin(self, q: np.ndarray) -> np.ndarray: ...
    def v_from_pin(self, vp: np.ndarray) -> np.ndarray: ...
    def matrix_from_pin(self, mp: np.ndarray) -> np.ndarray: ...
    def mass_matrix(self, qp: np.ndarray) -> np.ndarray: ...


def mjcf_reading_difference(bridge: BridgeLike) -> str | None:
    """What differs between Pinocchio's MJCF model (``bridge.pin_model``) and symgen's model
    of MuJoCo's compiled file (one line, None when they agree): the mass each Pinocchio body
    carries, then, at q = 0 (MuJoCo's ``qpos0``) and :data:`READING_STATES` random
    configurations, each body's world centre of mass (a misplaced free body moves no entry
    of M or g), the mass matrix (armature included) and the gravity forces."""
    model = bridge.model
    pm, data = bridge.pin_model, bridge.data
    carried = _carried(bridge)
    for jid, bodies in carried.items():
        mass = sum(float(body.mass) for body in bodies)
        if abs(pm.inertias[jid].mass - mass) > READING_TOLERANCE * max(1.0, mass):
            return (f"body {_body_name(pm, jid)!r} weighs {pm.inertias[jid].mass:.6g} kg, "
                    f"in MuJoCo {mass:.6g} kg")
    rng = np.random.default_rng(0)
    configurations = [("q = 0", np.array(model.neutral_configuration, dtype=float))]
    configurations += [("a random q", ref.random_configuration(model, rng))
                       for _ in range(READING_STATES)]
    for where, q in configurations:
        qp = bridge.q_to_pin(q)
        text = _com_difference(bridge, carried, q, qp)
        if text:
            return f"at {where}, {text}"
        m = bridge.matrix_from_pin(bridge.mass_matrix(qp))
        error, (i, j) = _worst(m, ref.mass_matrix(model, q))
        if error > READING_TOLERANCE:
            return (f"its mass matrix differs at {where} (relative {error:.1e}, entry of "
                    f"{_coordinate(model, i)!r} and {_coordinate(model, j)!r})")
        g = bridge.v_from_pin(np.asarray(pin.computeGeneralizedGravity(pm, data, qp)))
        error, (i,) = _worst(g, ref.gravity_forces(model, q))
        if error > READING_TOLERANCE:
            return (f"its gravity forces differ at {where} (relative {error:.1e}, at "
                    f"{_coordinate(model, i)!r})")
    return None


def _carried(bridge: BridgeLike) -> dict[int, list[Any]]:
    """The symgen bodies each Pinocchio joint carries (a composite joint: its chain)."""
    out: dict[int, list[Any]] = {}
    for joint, body in zip(bridge.model.joints, bridge.model.bodies, strict=True):
        if joint.name in bridge.parts:
            out.setdefault(bridge.parts[joint.name][0], []).append(body)
    return out


def _com_difference(bridge: BridgeLike, carried: Mapping[int, list[Any]], q: np.ndarray,
                    qp: np.ndarray) -> str | None:
    """The world centre of mass of each Pinocchio body against that of the symgen bodies
    its joint carries, at q."""
    pm, data = bridge.pin_model, bridge.data
    pin.forwardKinematics(pm, data, qp)
    poses = ref.forward_kinematics(bridge.model, q)
    for jid, bodies in carried.items():
        mass = sum(float(body.mass) for body in bodies)
        if mass == 0.0:
            continue
        com = sum(float(body.mass) * (poses[body.name][:3, :3] @ np.array(body.com, float)
                                      + poses[body.name][:3, 3]) for body in bodies) / mass
        pin_com = data.oMi[jid].act(pm.inertias[jid].lever)
        if float(np.max(np.abs(pin_com - com))) > READING_TOLERANCE * max(
                1.0, float(np.max(np.abs(com)))):
            return (f"body {_body_name(pm, jid)!r} has its centre of mass at {_vec(pin_com)}, "
                    f"in MuJoCo at {_vec(com)}")
    return None


def _body_name(pm: pin.Model, jid: int) -> str:
    """The MJCF name of the body Pinocchio's joint ``jid`` moves (its BODY frame)."""
    for frame in pm.frames:
        if frame.parentJoint == jid and frame.type == pin.FrameType.BODY:
            return str(frame.name)
    return str(pm.names[jid])  # pragma: no cover - every MJCF body has its frame


def _worst(actual: np.ndarray, expected: np.ndarray) -> tuple[float, tuple[int, ...]]:
    """Relative error max|a − b| / max(max|b|, 1) and the index of the worst entry."""
    diff = np.abs(np.asarray(actual) - np.asarray(expected))
    index = np.unravel_index(int(np.argmax(diff)), diff.shape)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    return float(diff[index]) / scale, tuple(int(i) for i in index)


def _coordinate(model: Model, i: int) -> str:
    """The joint owning velocity coordinate i."""
    for name, s in model.v_slices.items():
        if s.start <= i < s.stop:
            return name if s.stop - s.start == 1 else f"{name}[{i - s.start}]"
    return str(i)  # pragma: no cover


def _vec(x) -> str:
    return "(" + ", ".join(f"{float(v):.4g}" for v in x) + ")"


__all__ = ["COMPOSITE_PREFIX", "DIFFERS", "READING_TOLERANCE", "BridgeLike", "is_mjcf",
           "mjcf_reading_difference", "pin_joint_parts", "pin_model_from_mjcf"]
