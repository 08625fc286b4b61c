"""Random tree models built with :class:`symgen.ModelBuilder`, for cross-checks.

Every joint type appears (fixed joints get merged by the builder), with random branching,
random placements (xyz, rpy), random non-axis-aligned axes, physically valid random inertias
and random frames on bodies (merged ones and the root included).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from symgen.io.builder import ModelBuilder
from symgen.model import JointType, Model

if TYPE_CHECKING:
    import pinocchio as pin

JOINT_TYPES = (
    "revolute",
    "continuous",
    "prismatic",
    "helical",
    "cylindrical",
    "universal",
    "planar",
    "spherical",
    "free",
    "fixed",
)


def random_unit(rng: np.random.Generator) -> list[float]:
    """A random unit vector with every component non-zero (never axis-aligned)."""
    while True:
        a = rng.standard_normal(3)
        a /= np.linalg.norm(a)
        if np.min(np.abs(a)) > 0.05:
            return a.tolist()


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniformly random rotation matrix (QR of a Gaussian matrix, det fixed to +1)."""
    qm, r = np.linalg.qr(rng.standard_normal((3, 3)))
    qm = qm @ np.diag(np.sign(np.diag(r)))
    if np.linalg.det(qm) < 0:
        qm[:, 0] = -qm[:, 0]
    return qm


def random_inertia(rng: np.random.Generator, mass: float) -> list[list[float]]:
    """A rotational inertia about the COM: a random rotation of principal moments built from
    positive second moments s (I_x = m(s_y + s_z), ...), so the triangle inequality holds."""
    s = rng.uniform(0.01, 0.2, 3)
    principal = mass * np.array([s[1] + s[2], s[0] + s[2], s[0] + s[1]])
    r = random_rotation(rng)
    inertia = r @ np.diag(principal) @ r.T
    return (0.5 * (inertia + inertia.T)).tolist()


def _xyz(rng: np.random.Generator, scale: float = 0.5) -> list[float]:
    return rng.uniform(-scale, scale, 3).tolist()


def _rpy(rng: np.random.Generator) -> list[float]:
    return rng.uniform(-np.pi, np.pi, 3).tolist()


def random_spec(
    seed: int,
    n_bodies: int | None = None,
    joint_types: tuple[str, ...] = JOINT_TYPES,
    n_frames: int | None = None,
    gravity: tuple[float, float, float] | None = None,
) -> dict:
    """The raw description of a random tree (before fixed-joint merging): ``n_bodies``
    bodies, each body's parent drawn uniformly among the root and the earlier bodies, so
    declarations are in topological order. Keys: name, root, gravity, bodies, joints, frames
    (lists of keyword dicts for the ModelBuilder methods)."""
    rng = np.random.default_rng(seed)
    n_bodies = int(rng.integers(4, 9)) if n_bodies is None else n_bodies
    if gravity is None:
        gravity = tuple(rng.uniform(-1.0, 1.0, 3) + np.array([0.0, 0.0, -9.81]))
    spec: dict = {
        "name": f"random_{seed}",
        "root": "ground",
        "gravity": [float(g) for g in gravity],
        "bodies": [],
        "joints": [],
        "frames": [],
    }
    names = ["ground"]
    for k in range(n_bodies):
        name = f"b{k}"
        mass = float(rng.uniform(0.2, 3.0))
        spec["bodies"].append(
            dict(name=name, mass=mass, com=_xyz(rng, 0.3), inertia=random_inertia(rng, mass))
        )
        jtype = str(rng.choice(joint_types))
        axis2 = random_unit(rng)
        axis = random_unit(rng)
        while abs(float(np.dot(axis, axis2))) > 0.9:
            axis2 = random_unit(rng)
        spec["joints"].append(
            dict(
                name=f"j{k}",
                type=jtype,
                parent=names[int(rng.integers(0, len(names)))],
                child=name,
                xyz=_xyz(rng),
                rpy=_rpy(rng),
                axis=axis,
                axis2=axis2,
                pitch=float(rng.uniform(-0.3, 0.3)),
            )
        )
        names.append(name)
    n_frames = int(rng.integers(1, 4)) if n_frames is None else n_frames
    for k in range(n_frames):
        spec["frames"].append(
            dict(
                name=f"f{k}",
                body=names[int(rng.integers(0, len(names)))],
                xyz=_xyz(rng),
                rpy=_rpy(rng),
            )
        )
    return spec


def builder(spec: dict) -> ModelBuilder:
    """A :class:`ModelBuilder` holding a :func:`random_spec` description (not yet built)."""
    b = ModelBuilder(spec["name"], root=spec["root"], gravity=spec["gravity"])
    for body in spec["bodies"]:
        b.body(**body)
    for joint in spec["joints"]:
        b.joint(**joint)
    for frame in spec["frames"]:
        b.frame(**frame)
    return b


def build(spec: dict) -> Model:
    """The symgen model of a :func:`random_spec` description."""
    return builder(spec).build()


def random_model(seed: int, **options) -> Model:
    """``build(random_spec(seed, **options))``."""
    return build(random_spec(seed, **options))


def random_state(
    model: Model, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A random (q, v, a, tau): q from the reference's random configuration, the rest N(0, 1)."""
    from symgen.reference import random_configuration

    q = random_configuration(model, rng)
    v, a, tau = (rng.standard_normal(model.nv) for _ in range(3))
    return q, v, a, tau


def random_forces(model: Model, rng: np.random.Generator, count: int = 2) -> dict:
    """External forces [moment; force] on up to ``count`` random moving bodies."""
    chosen = rng.choice(model.nbodies, size=min(count, model.nbodies), replace=False)
    return {model.bodies[int(i)].name: rng.standard_normal(6) for i in chosen}


__all__ = [
    "JOINT_TYPES",
    "build",
    "random_forces",
    "random_inertia",
    "random_model",
    "random_rotation",
    "random_spec",
    "random_state",
    "random_unit",
]


# ---------------------------------------------------------------- Pinocchio side
def _arr(x) -> np.ndarray:
    return np.array(x, dtype=float)


class _SpecJoint:
    """Joint fields of a raw description, shaped like symgen's Joint for pin_joint_model."""

    def __init__(self, d: dict) -> None:
        self.name, self.type = d["name"], JointType(d["type"])
        self.axis, self.axis2, self.pitch = d["axis"], d["axis2"], d["pitch"]


def _xyz_rpy(xyz, rpy) -> pin.SE3:
    import pinocchio as pin

    return pin.SE3(pin.rpy.rpyToMatrix(*map(float, rpy)), _arr(xyz))


def pin_model_from_spec(spec: dict) -> pin.Model:
    """A Pinocchio model of a raw (unmerged) description such as
    ``tests.random_models.random_spec``: Pinocchio itself lumps bodies on fixed joints into
    their moving ancestor (``appendBodyToJoint`` with a placement) and computes rpy rotations
    (``pin.rpy.rpyToMatrix``), independently of symgen's builder. Joints are added depth
    first, as Pinocchio's algorithms (e.g. CRBA) need each subtree's velocities contiguous.
    Pinocchio is imported here, so that the other builders work without it."""
    import pinocchio as pin

    from symgen.peers.pinocchio import pin_joint_model

    pm = pin.Model()
    pm.name = spec["name"]
    pm.gravity = pin.Motion(_arr(spec["gravity"]), np.zeros(3))
    # host joint and pose in the host joint frame of every body (the root: joint 0)
    host = {spec["root"]: (0, pin.SE3.Identity())}
    bodies = {b["name"]: b for b in spec["bodies"]}
    if spec["root"] != "universe":
        pm.addFrame(pin.Frame(spec["root"], 0, 0, pin.SE3.Identity(), pin.FrameType.OP_FRAME))
    children: dict[str, list[dict]] = {}
    for d in spec["joints"]:
        children.setdefault(d["parent"], []).append(d)
    order, stack = [], list(reversed(children.get(spec["root"], [])))
    while stack:
        d = stack.pop()
        order.append(d)
        stack.extend(reversed(children.get(d["child"], [])))
    for d in order:
        parent_joint, parent_pose = host[d["parent"]]
        pose = parent_pose * _xyz_rpy(d["xyz"], d["rpy"])
        if d["type"] == "fixed":
            host[d["child"]] = (parent_joint, pose)
        else:
            jid = pm.addJoint(parent_joint, pin_joint_model(_SpecJoint(d)), pose, d["name"])
            host[d["child"]] = (jid, pin.SE3.Identity())
        jid, body_pose = host[d["child"]]
        b = bodies[d["child"]]
        inertia = pin.Inertia(float(b["mass"]), _arr(b["com"]), _arr(b["inertia"]))
        pm.appendBodyToJoint(jid, inertia, body_pose)
        pm.addFrame(pin.Frame(b["name"], jid, 0, body_pose, pin.FrameType.BODY))
    for f in spec["frames"]:
        jid, body_pose = host[f["body"]]
        pm.addFrame(
            pin.Frame(
                f["name"], jid, 0, body_pose * _xyz_rpy(f["xyz"], f["rpy"]), pin.FrameType.OP_FRAME
            )
        )
    return pm


def parametric_arm() -> Model:
    """A 3-body arm whose gravity, payload mass and link length are runtime parameters."""
    b = ModelBuilder("param_arm", root="base", gravity=(0.0, 0.0, "$g"))
    b.parameter("g", -9.81, "gravity along z")
    b.parameter("payload", 0.5, "payload mass")
    b.parameter("reach", 0.4, "length of the second link")
    b.body("l1", mass=2.0, com=(0.0, 0.0, 0.2), inertia=(0.02, 0.02, 0.01))
    b.body("l2", mass=1.5, com=("$reach", 0.0, 0.0), inertia=(0.01, 0.03, 0.03, 0.001, 0, 0))
    b.body("l3", mass=0.7, com=(0.1, 0.02, 0.0), inertia=(0.004, 0.006, 0.005))
    b.body("payload", mass="$payload", com=(0.0, 0.0, 0.05), inertia=(0.001, 0.001, 0.001))
    b.joint("shoulder", "universal", "base", "l1", xyz=(0, 0, 0.3), axis=(0, 0, 1), axis2=(0, 1, 0))
    b.joint("elbow", "revolute", "l1", "l2", xyz=(0, 0, 0.4), rpy=(0.2, 0, 0), axis=(0, 1, 1))
    b.joint("slide", "prismatic", "l2", "l3", xyz=("$reach", 0, 0), axis=(1, 0, 0.2))
    b.joint("grip", "fixed", "l3", "payload", xyz=(0.2, 0.0, 0.0))
    b.frame("tool", "payload", xyz=(0.0, 0.0, 0.1), rpy=(0.0, 0.5, 0.0))
    return b.build()
