"""MJCF reader: MuJoCo compiles the file, symgen reads the compiled model.

What MuJoCo compiles is what the user means: default classes, ``childclass``,
``inertiafromgeom``, orientation forms, ``<include>``, angle units and ``ref`` are resolved
by ``mujoco.MjModel.from_xml_path``; this module maps the compiled ``MjModel`` onto
:class:`symgen.ModelBuilder` calls (docs/model-format.md, "MJCF").

Frames. MuJoCo places body b at ``body_pos``/``body_quat`` in its parent at ``qpos0`` and
moves it by its joints in order, each about its anchor ``jnt_pos`` and axis ``jnt_axis`` (both
in the body frame, the rotation applied in the frame already moved by the previous joints):
X(q) = X₀ · Π_k [Tr(p_k) · X_J,k(q_k − qpos0_k) · Tr(−p_k)]. symgen puts a body frame at each
joint, so body b becomes a chain of bodies, one per joint (Jain, Rodriguez & Kreutz-Delgado's
partitioning of a multi-DOF hinge into single hinges with massless intermediate bodies): the
frame of the k-th is Tr(p_k) after the first k − 1 motions, placed at Tr(p_k − p_{k−1}) in the
previous one; the last carries b's mass and children, and b's own frame sits at Tr(−p_n) in
it. The name of b is the last body's when p_n = 0, else a frame's at b's own frame (the
bodies are then named ``b__joint``): forward kinematics and Jacobians of "b" are MuJoCo's
body frame either way. A body without joints is welded to its parent (a fixed joint,
lumped, its name kept as a frame).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np

from symgen.errors import ModelError, SourceRef
from symgen.io.builder import Locks, ModelBuilder
from symgen.io.mjcf_lines import SourceLines
from symgen.model import Limits, Model
from symgen.model.joint_motion import quaternion_rotation
from symgen.model.source_data import FileCoordinates, FileJoint, Keyframe, Motor
from symgen.model.transform import Transform, rpy_from_rotation, xyz_rpy

#: MuJoCo's joint types (``mjtJoint``) -> symgen's.
JOINT_TYPES = {0: "free", 1: "spherical", 2: "slide", 3: "hinge"}
SYMGEN_TYPES = {"free": "free", "spherical": "spherical", "slide": "prismatic",
                "hinge": "revolute"}
MJCF_KIND = {"free": "free", "spherical": "ball", "slide": "slide", "hinge": "hinge"}
#: ``mjtEq``, ``mjtObj`` and ``mjtTrn`` values used here.
EQ_CONNECT, EQ_WELD, EQ_JOINT, EQ_TENDON = 0, 1, 2, 3
EQ_NAMES = {0: "connect", 1: "weld", 2: "joint", 3: "tendon", 4: "flex", 5: "flexvert"}
OBJ_SITE = 6
TRN_JOINT = 0
WRAP_JOINT = 1
#: Largest |coefficient| of a joint equality's quadratic and higher terms taken as zero.
POLY_TOLERANCE = 1e-12


def read_mjcf(path: str | Path, floating_base: bool = False, lock: Locks | None = None
              ) -> Model:
    """Read an MJCF file (root element ``<mujoco>``) into a validated :class:`Model`.

    The file is compiled by the ``mujoco`` package; its free joints are its floating bases,
    so ``floating_base=True`` is an error. ``lock`` holds joints at given values in symgen's
    coordinates (:meth:`ModelBuilder.lock`). The model records the file's ``qpos``/``qvel``
    layout (``model.file_coordinates``, mapped by :mod:`symgen.io.mjcf_state`), its keyframes,
    its joint motors and what was left out (``model.notes``).
    """
    path = Path(path)
    if floating_base:
        raise ModelError("an MJCF model declares its floating bases itself (<freejoint/>): "
                         "drop --floating-base", SourceRef(str(path)))
    mj, mujoco_warnings = compile_mjcf(path)
    reader = _MjcfReader(path, mj)
    reader.notes += [f"MuJoCo: {text}" for text in dict.fromkeys(mujoco_warnings)]
    return reader.read(lock)


def compile_mjcf(path: Path):
    """MuJoCo's compiled model of ``path`` and the warnings MuJoCo gave while compiling
    (caught, so that MuJoCo writes no MUJOCO_LOG.TXT); its errors become one-line
    ModelErrors."""
    try:
        import mujoco
    except ImportError:
        raise ModelError("reading MJCF needs the mujoco package (pip install mujoco)",
                         SourceRef(str(path))) from None
    caught: list[str] = []
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda text: caught.append(" ".join(str(text).split())))
    try:
        return mujoco.MjModel.from_xml_path(str(path)), caught
    except ValueError as exc:
        raise _mujoco_error(path, str(exc)) from None
    finally:
        mujoco.set_mju_user_warning(previous)


def _mujoco_error(path: Path, text: str) -> ModelError:
    """MuJoCo's multi-line message as one line, at the line it names when it names one."""
    parts = [p.strip() for p in text.replace("Error:", "").splitlines() if p.strip()]
    line_match = re.search(r"line (\d+)", text)
    message = "; ".join(p.rstrip(".") for p in parts
                        if not p.startswith(("Element", "Object")) or "'" in p)
    message = re.sub(r",?\s*line \d+(, column \d+)?", "", message).strip(" ;,") or text
    message = re.sub(r"Element name '', id (\d+)", r"element #\1", message)
    message = re.sub(r"Element '([^']*)'", r"element <\1>", message)
    message = re.sub(r"\s+", " ", message.replace("Element name", "element"))
    return ModelError(f"MuJoCo cannot compile the file: {message}",
                      SourceRef(str(path), int(line_match.group(1)) if line_match else None))


def _quat_rotation(q) -> np.ndarray:
    """Rotation matrix of a MuJoCo quaternion (w, x, y, z), normalised."""
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array(quaternion_rotation(x, y, z, w), dtype=float)


def _pose(rotation: np.ndarray, translation) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = rotation
    out[:3, 3] = translation
    return out


def _translation(p) -> np.ndarray:
    return _pose(np.eye(3), p)


def _transform(pose: np.ndarray) -> Transform:
    rotation = tuple(tuple(float(x) for x in row) for row in pose[:3, :3])
    return Transform(rotation, tuple(float(x) for x in pose[:3, 3]))


class _MjcfReader:
    def __init__(self, path: Path, mj) -> None:
        import mujoco

        self.mujoco = mujoco
        self.path = path
        self.mj = mj
        self.lines = SourceLines(path)
        self.notes: list[str] = []
        #: per MuJoCo body: the symgen body carrying it, and its frame's pose in that body
        self.carrier: list[str] = []
        self.offset: list[np.ndarray] = []
        self.used_names: set[str] = set()

    # ------------------------------------------------------------------ names, sources
    def name(self, kind: str, index: int) -> str:
        obj = {"body": self.mj.body, "joint": self.mj.joint, "site": self.mj.site,
               "equality": self.mj.eq, "actuator": self.mj.actuator, "key": self.mj.key}
        return obj[kind](index).name

    def ref(self, tag: str, name: str) -> SourceRef:
        return SourceRef(str(self.path), self.lines.line(tag, name))

    def error(self, message: str, tag: str = "mujoco", name: str = "") -> ModelError:
        return ModelError(message, self.ref(tag, name))

    def equality_ref(self, e: int) -> SourceRef:
        return SourceRef(str(self.path), self.lines.equality_line(e) or self.lines.root_line)

    def unique(self, wanted: str) -> str:
        name, k = wanted, 1
        while name in self.used_names:
            k += 1
            name = f"{wanted}_{k}"
        self.used_names.add(name)
        return name

    def body_name(self, b: int) -> str:
        return self.mj.body(b).name or f"body{b}"

    # ------------------------------------------------------------------ model
    def read(self, lock: Locks | None) -> Model:
        mj = self.mj
        root = self.body_name(0)
        gravity = tuple(float(g) for g in mj.opt.gravity)
        if mj.opt.disableflags & self.mujoco.mjtDisableBit.mjDSBL_GRAVITY:
            gravity = (0.0, 0.0, 0.0)
            self.notes.append("gravity is disabled (<flag gravity=\"disable\"/>): zero gravity")
        if mj.opt.density or mj.opt.viscosity:
            self.notes.append("fluid forces (density, viscosity) ignored")
        compensated = int(np.count_nonzero(mj.body_gravcomp))
        if compensated:
            self.notes.append(f"gravity compensation (gravcomp) of {compensated} body(ies) "
                              "ignored: the kernels' gravity forces are uncompensated")
        if mj.nbody < 2:
            raise self.error("MuJoCo compiled no body: the file has no <worldbody> with "
                             "bodies (is it a fragment meant for <include>?)")
        self.builder = ModelBuilder(self.model_name(), root=root, gravity=gravity,
                                    source=self.ref("mujoco", ""))
        self.used_names = {self.body_name(b) for b in range(mj.nbody)}
        self.carrier = [root]
        self.offset = [np.eye(4)]
        self.file_joints: list[FileJoint] = []
        for b in range(1, mj.nbody):
            self.add_body(b)
        self.check_tendons()
        self.add_sites()
        self.add_joint_forces()
        self.add_equalities()
        for name, value in (lock or {}).items():
            self.builder.lock(name, value)
        model = self.builder.build()
        return self.finish(model)

    def model_name(self) -> str:
        """The ``<mujoco model=...>`` name, else the file's stem (not MuJoCo's default)."""
        name = self.mj.names[:self.mj.names.index(b"\0")].decode() if self.mj.names else ""
        return name if name and name != "MuJoCo Model" else self.path.stem

    def add_body(self, b: int) -> None:
        mj = self.mj
        name = self.body_name(b)
        source = self.ref("body", mj.body(b).name)
        parent = int(mj.body_parentid[b])
        reference = self.offset[parent] @ _pose(_quat_rotation(mj.body_quat[b]), mj.body_pos[b])
        joints = list(range(mj.body_jntadr[b], mj.body_jntadr[b] + mj.body_jntnum[b]))
        mass, com, inertia = self.mass_properties(b)
        if not joints:
            self.builder.body(name, mass=mass, com=tuple(com), inertia=inertia, source=source)
            self.builder.joint(self.unique(f"{name}_weld"), "fixed", parent=self.carrier[parent],
                               child=name, placement=_transform(reference), source=source)
            self.carrier.append(name)
            self.offset.append(np.eye(4))
            return
        previous = self.carrier[parent]
        placement = reference
        anchor_before = np.zeros(3)
        for k, j in enumerate(joints):
            kind = JOINT_TYPES[int(mj.jnt_type[j])]
            joint_name = self.joint_name(j, b, len(joints))
            anchor = np.zeros(3) if kind == "free" else np.asarray(mj.jnt_pos[j], dtype=float)
            if kind == "free":
                if parent != 0:
                    raise self.error(f"body {name!r}: a free joint must join a body to the "
                                     "world", "body", mj.body(b).name)
                placement = np.eye(4)  # qpos is the body's world pose
            elif k == 0:
                placement = reference @ _translation(anchor)
            else:
                placement = _translation(anchor - anchor_before)
            last = k == len(joints) - 1
            # the last body carries the MuJoCo body's name, unless its frame (at the last
            # joint's anchor) is not the MuJoCo body frame: then a frame carries the name
            at_origin = last and not anchor.any()
            child = name if at_origin else self.unique(f"{name}__{joint_name}")
            if last:
                self.builder.body(child, mass=mass, com=tuple(com - anchor), inertia=inertia,
                                  source=source)
            else:
                self.builder.body(child, source=source)
            self.add_joint(j, joint_name, kind, previous, child, placement)
            previous, anchor_before = child, anchor
        if previous != name:
            self.builder.frame(name, previous, xyz=tuple(float(x) for x in -anchor_before),
                               source=source)
        self.carrier.append(previous)
        self.offset.append(_translation(-anchor_before))

    def joint_name(self, j: int, b: int, count: int) -> str:
        given = self.mj.joint(j).name
        if given:
            return given
        base = f"{self.body_name(b)}_joint"
        if count > 1:
            base += str(j - int(self.mj.body_jntadr[b]))
        return self.unique(base)

    def mass_properties(self, b: int) -> tuple[float, np.ndarray, tuple]:
        """Mass, centre of mass in the MuJoCo body frame, inertia about it in body axes."""
        mj = self.mj
        rotation = _quat_rotation(mj.body_iquat[b])
        inertia = rotation @ np.diag(mj.body_inertia[b]) @ rotation.T
        inertia = 0.5 * (inertia + inertia.T)
        rows = tuple(tuple(float(x) for x in row) for row in inertia)
        return float(mj.body_mass[b]), np.asarray(mj.body_ipos[b], dtype=float), rows

    def add_joint(self, j: int, name: str, kind: str, parent: str, child: str,
                  placement: np.ndarray) -> None:
        mj = self.mj
        dof = int(mj.jnt_dofadr[j])
        nv = {"free": 6, "spherical": 3}.get(kind, 1)
        armature = [float(x) for x in mj.dof_armature[dof:dof + nv]]
        if kind == "free":
            armature = self.free_armature(name, armature)
        zero = float(mj.qpos0[mj.jnt_qposadr[j]]) if nv == 1 else 0.0
        limits = None
        if nv == 1 and mj.jnt_limited[j]:
            low, high = (float(x) - zero for x in mj.jnt_range[j])
            limits = Limits(lower=low, upper=high)
        self.builder.joint(
            name, SYMGEN_TYPES[kind], parent=parent, child=child,
            placement=_transform(placement),
            axis=tuple(float(x) for x in mj.jnt_axis[j]) if nv == 1 else (0.0, 0.0, 1.0),
            limits=limits, armature=armature if any(armature) else None,
            source=self.ref("joint", mj.joint(j).name))
        self.file_joints.append(FileJoint(name, MJCF_KIND[kind], int(mj.jnt_qposadr[j]), dof,
                                          zero))

    def free_armature(self, name: str, values: list[float]) -> list[float]:
        """A free joint's armature in symgen's order (angular, linear); MuJoCo's linear
        coordinates are world-frame velocities, so their armature must be isotropic."""
        linear, angular = values[:3], values[3:]
        if max(linear) - min(linear) > 1e-12 * max(1.0, max(linear)):
            raise self.error(f"joint {name!r}: a free joint's translational armature must be "
                             f"the same on x, y and z (got {linear})", "joint", name)
        return angular + linear

    def joint_of(self, j: int) -> str:
        """The symgen name given to MuJoCo joint ``j``."""
        return self.file_joints[[fj.qpos_address for fj in self.file_joints].index(
            int(self.mj.jnt_qposadr[j]))].joint

    # ------------------------------------------------------------------ frames and forces
    def add_sites(self) -> None:
        mj = self.mj
        for s in range(mj.nsite):
            given = mj.site(s).name
            if not given:
                continue
            b = int(mj.site_bodyid[s])
            pose = self.offset[b] @ _pose(_quat_rotation(mj.site_quat[s]), mj.site_pos[s])
            name = given if given not in self.used_names else self.unique(f"{given}_site")
            self.used_names.add(name)
            if name != given:
                self.notes.append(f"site {given!r} is the frame {name!r} (a body has its name)")
            self.builder.frame(name, self.carrier[b], xyz=tuple(float(x) for x in pose[:3, 3]),
                               rpy=rpy_from_rotation(pose[:3, :3]), source=self.ref("site", given))

    def add_joint_forces(self) -> None:
        """``stiffness``/``springref`` and ``damping`` of 1-DOF joints as joint springs:
        τ = −k (q − springref) − c q̇ (MuJoCo's passive force; springref is absolute, so its
        symgen rest value is springref − qpos0)."""
        mj = self.mj
        flags = self.mujoco.mjtDisableBit
        passive = getattr(flags, "mjDSBL_PASSIVE", 0)  # before MuJoCo split it in two
        springs = not mj.opt.disableflags & (getattr(flags, "mjDSBL_SPRING", 0) | passive)
        dampers = not mj.opt.disableflags & (getattr(flags, "mjDSBL_DAMPER", 0) | passive)
        for what, on in (("springs", springs), ("dampers", dampers)):
            if not on:
                self.notes.append(f"joint {what} are disabled (<flag>): left out")
        for j in range(mj.njnt):
            fj = self.file_joints[[f.qpos_address for f in self.file_joints].index(
                int(mj.jnt_qposadr[j]))]
            dof, nv = fj.dof_address, {"free": 6, "ball": 3}.get(fj.kind, 1)
            stiffness = float(mj.jnt_stiffness[j]) if springs else 0.0
            damping = [float(x) if dampers else 0.0 for x in mj.dof_damping[dof:dof + nv]]
            if nv > 1:
                if stiffness or any(damping):
                    self.left_out(f"{'stiffness' if stiffness else 'damping'} of the "
                                  f"{fj.kind} joint {fj.joint!r}")
                continue
            if stiffness or damping[0]:
                rest = float(mj.qpos_spring[fj.qpos_address]) - fj.zero
                self.builder.joint_spring(self.unique(f"{fj.joint}_passive"), fj.joint,
                                          stiffness, damping[0], rest,
                                          source=self.ref("joint", mj.joint(j).name))
        friction = [fj.joint for fj in self.file_joints
                    if np.any(mj.dof_frictionloss[fj.dof_address:fj.dof_address + 1])]
        if friction:
            self.notes.append(f"friction loss ignored on {len(friction)} joint(s)")

    def check_tendons(self) -> None:
        """Tendon armature adds to M (MuJoCo: armature·JₜᵀJₜ): refused; tendon springs and
        dampers are passive forces symgen's elements do not express: left out."""
        mj = self.mj
        for t in range(mj.ntendon):
            name = mj.tendon(t).name or f"#{t + 1}"
            if mj.tendon_armature[t]:
                raise self.error(f"tendon {name!r}: tendon armature (it adds to the mass "
                                 "matrix) is not supported", "fixed", mj.tendon(t).name)
            if mj.tendon_stiffness[t] or mj.tendon_damping[t]:
                self.left_out(f"stiffness and damping of tendon {name!r}",
                              "symgen has no tendon force elements")

    def left_out(self, what: str, why: str = "symgen's joint springs and dampers act on "
                 "1-DOF joints") -> None:
        """A passive force symgen's force elements cannot express: a warning and a note."""
        message = (f"{self.path}: {what} left out ({why}; the tree kernels take no passive "
                   "forces anyway)")
        warnings.warn(message, stacklevel=5)
        self.notes.append(f"{what} left out ({why})")

    # ------------------------------------------------------------------ equalities
    def add_equalities(self) -> None:
        mj = self.mj
        for e in range(mj.neq):
            kind = EQ_NAMES.get(int(mj.eq_type[e]), str(int(mj.eq_type[e])))
            given = mj.eq(e).name
            label = f"equality {given!r}" if given else f"equality #{e + 1} <{kind}>"
            if not mj.eq_active0[e]:
                self.notes.append(f"{label} is inactive: skipped")
                continue
            if kind == "joint":
                self.joint_equality(e, label)
            elif kind == "tendon":
                self.tendon_equality(e, label)
            elif kind in ("connect", "weld"):
                self.loop_equality(e, kind, label, given)
            else:
                raise ModelError(f"{label}: <{kind}> equalities are not supported (symgen reads "
                                 "connect, weld, joint and fixed-tendon ones)",
                                 self.equality_ref(e))

    def equality_frames(self, e: int, kind: str) -> tuple[tuple[int, np.ndarray],
                                                           tuple[int, np.ndarray]]:
        """(MuJoCo body, pose in its frame) of each side of a connect or weld.

        connect: anchor ``data[0:3]`` on body1, ``data[3:6]`` on body2 (MuJoCo computes the
        latter at ``qpos0``). weld: body2's frame at ``data[3:6]``/``data[6:10]`` in body1's
        and the anchor ``data[0:3]`` on body2 coincide (MuJoCo's weld residual). Site-based
        equalities join the two sites' frames."""
        mj = self.mj
        ids = int(mj.eq_obj1id[e]), int(mj.eq_obj2id[e])
        data = np.asarray(mj.eq_data[e], dtype=float)
        if int(mj.eq_objtype[e]) == OBJ_SITE:
            sides = []
            for s in ids:
                pose = _pose(_quat_rotation(mj.site_quat[s]), mj.site_pos[s])
                if kind == "connect":
                    pose[:3, :3] = np.eye(3)
                sides.append((int(mj.site_bodyid[s]), pose))
            return sides[0], sides[1]
        if kind == "connect":
            return (ids[0], _translation(data[0:3])), (ids[1], _translation(data[3:6]))
        return ((ids[0], _pose(_quat_rotation(data[6:10]), data[3:6])),
                (ids[1], _translation(data[0:3])))

    def loop_equality(self, e: int, kind: str, label: str, given: str) -> None:
        (b1, pose1), (b2, pose2) = self.equality_frames(e, kind)
        parent, child = self.carrier[b1], self.carrier[b2]
        if parent == child:
            raise ModelError(f"{label}: joins {self.body_name(b1)!r} and {self.body_name(b2)!r}, "
                             f"which move as one body ({parent!r})", self.equality_ref(e))
        pose1, pose2 = self.offset[b1] @ pose1, self.offset[b2] @ pose2
        if kind == "connect":  # orient the child side as the parent side at qpos0 (the
            world = self.world_poses()  # carriers' frames turn with the MuJoCo bodies')
            pose2[:3, :3] = world[b2][:3, :3].T @ world[b1][:3, :3] @ pose1[:3, :3]
        name = self.unique(given or f"{kind}_{self.body_name(b1)}_{self.body_name(b2)}")
        (xyz, rpy), (child_xyz, child_rpy) = xyz_rpy(_transform(pose1)), xyz_rpy(_transform(pose2))
        self.builder.loop_joint(
            name, "spherical" if kind == "connect" else "fixed", parent=parent, child=child,
            xyz=xyz, rpy=rpy, child_xyz=child_xyz, child_rpy=child_rpy,
            source=self.equality_ref(e))

    def world_poses(self) -> list[np.ndarray]:
        """World pose of every MuJoCo body frame at ``qpos0``."""
        data = self.mujoco.MjData(self.mj)
        data.qpos[:] = self.mj.qpos0
        self.mujoco.mj_kinematics(self.mj, data)
        return [_pose(data.xmat[b].reshape(3, 3), data.xpos[b]) for b in range(self.mj.nbody)]

    def joint_equality(self, e: int, label: str) -> None:
        """q1 − q1₀ = a₀ + a₁ (q2 − q2₀) + ... (MuJoCo's ``polycoef``): a coupling when only
        a₀ and a₁ are non-zero, a lock at a₀ without a second joint."""
        mj = self.mj
        coefficients = [float(x) for x in mj.eq_data[e][:5]]
        if any(abs(c) > POLY_TOLERANCE for c in coefficients[2:]):
            raise ModelError(f"{label}: a joint equality of degree > 1 (polycoef "
                             f"{coefficients}) is not supported; symgen couples joints "
                             "linearly", self.equality_ref(e))
        j1, j2 = int(mj.eq_obj1id[e]), int(mj.eq_obj2id[e])
        joint = self.joint_of(j1)
        source = self.equality_ref(e)
        if j2 < 0 or abs(coefficients[1]) <= POLY_TOLERANCE:
            self.builder.lock(joint, coefficients[0], source=source)
            return
        self.builder.coupling(joint, self.joint_of(j2), ratio=coefficients[1],
                              offset=coefficients[0], source=source)

    def tendon_weights(self, t: int, label: str, e: int) -> dict[int, float]:
        """Joint -> coefficient of fixed tendon ``t`` (length L = Σ coef·qpos)."""
        mj = self.mj
        weights: dict[int, float] = {}
        for w in range(mj.tendon_adr[t], mj.tendon_adr[t] + mj.tendon_num[t]):
            if int(mj.wrap_type[w]) != WRAP_JOINT:
                raise ModelError(f"{label}: tendon {mj.tendon(t).name or t!r} is spatial; symgen "
                                 "reads equalities of fixed tendons only", self.equality_ref(e))
            j = int(mj.wrap_objid[w])
            weights[j] = weights.get(j, 0.0) + float(mj.wrap_prm[w])
        return weights

    def tendon_equality(self, e: int, label: str) -> None:
        """L1 − L1₀ = a₀ + a₁ (L2 − L2₀) of fixed tendons, L = Σ c_j q_j (MuJoCo's tendon
        equality): a linear relation Σ w_j (q_j − q_j0) = a₀ among joints, i.e. a coupling
        when it involves two joints (the later one in q follows the earlier one), a lock
        when it involves one; more joints are refused."""
        mj = self.mj
        coefficients = [float(x) for x in mj.eq_data[e][:5]]
        if any(abs(c) > POLY_TOLERANCE for c in coefficients[2:]):
            raise ModelError(f"{label}: a tendon equality of degree > 1 (polycoef "
                             f"{coefficients}) is not supported", self.equality_ref(e))
        weights = self.tendon_weights(int(mj.eq_obj1id[e]), label, e)
        if int(mj.eq_obj2id[e]) >= 0:
            for j, c in self.tendon_weights(int(mj.eq_obj2id[e]), label, e).items():
                weights[j] = weights.get(j, 0.0) - coefficients[1] * c
        joints = sorted(j for j, w in weights.items() if abs(w) > POLY_TOLERANCE)
        source = self.equality_ref(e)
        if len(joints) == 1:
            self.builder.lock(self.joint_of(joints[0]), coefficients[0] / weights[joints[0]],
                              source=source)
        elif len(joints) == 2:
            master, follower = joints
            self.builder.coupling(self.joint_of(follower), self.joint_of(master),
                                  ratio=-weights[master] / weights[follower],
                                  offset=coefficients[0] / weights[follower], source=source)
        else:
            names = ", ".join(self.joint_of(j) for j in joints)
            raise ModelError(f"{label}: the tendons tie {len(joints)} joints ({names}) in one "
                             "linear relation; symgen couples one joint to one master",
                             source)

    # ------------------------------------------------------------------ metadata
    def finish(self, model: Model) -> Model:
        import dataclasses

        mj = self.mj
        motors, skipped = [], 0
        moving = set(model.joint_names) | {j.name for j in model.loop_joints}
        for a in range(mj.nu):
            if int(mj.actuator_trntype[a]) != TRN_JOINT:
                skipped += 1
                continue
            joint = self.joint_of(int(mj.actuator_trnid[a][0]))
            if joint not in moving or joint in model.coupled:
                skipped += 1
                continue
            name = mj.actuator(a).name or f"actuator{a}"
            motors.append(Motor(name, joint, float(mj.actuator_gear[a][0]),
                                self.ref("motor", mj.actuator(a).name)))
        if skipped:
            self.notes.append(f"{skipped} actuator(s) not on an independent joint ignored "
                              "(tendon, site or body transmissions, coupled joints)")
        keyframes = tuple(
            Keyframe(self.name("key", k) or f"key{k}", tuple(float(x) for x in mj.key_qpos[k]),
                     tuple(float(x) for x in mj.key_qvel[k]))
            for k in range(mj.nkey))
        coordinates = FileCoordinates("mujoco", int(mj.nq), int(mj.nv),
                                      tuple(float(x) for x in mj.qpos0), tuple(self.file_joints))
        return dataclasses.replace(model, motors=tuple(motors), keyframes=keyframes,
                                   file_coordinates=coordinates,
                                   notes=tuple(self.notes + self.ignored()))

    def ignored(self) -> list[str]:
        """What the file has that means nothing for the kernels, counted once."""
        mj = self.mj
        counts = [("geom", mj.ngeom), ("contact pair", mj.npair), ("contact exclusion",
                  mj.nexclude), ("sensor", mj.nsensor), ("tendon", mj.ntendon),
                  ("camera", mj.ncam), ("light", mj.nlight), ("mesh", mj.nmesh),
                  ("material", mj.nmat), ("texture", mj.ntex)]
        listed = ", ".join(f"{n} {what}{'s' if n > 1 else ''}" for what, n in counts if n)
        return [f"ignored (no meaning for the kernels): {listed}"] if listed else []


__all__ = ["compile_mjcf", "read_mjcf"]
