"""The joint coordinates of a model read back from its natural coordinates (the trajectories
of ``symgen.simulate(..., method="natural", …)``, :mod:`.natural_run`).

- **1-DOF joints** (revolute, continuous, prismatic; the natural model's ``actuated``): the
  compiled ``nc_joint_values``, angles continued from the previous read (unwrapped).
- **Spherical and free joints**: from the world poses [R | p] of the two bodies, the compiled
  ``nc_body_poses`` (R = X X̄⁻¹ R₀, García de Jalón & Bayo 1994, eq. 4.113-4.116). With the
  joint's placement (R_P, t_P) in its parent body (docs/conventions.md: the pose of the child
  in the parent is (R_P R_J, R_P p_J + t_P)), the parent's pose (R_p, p_p) and the child's
  (R_c, p_c):

      R_J = R_Pᵀ R_pᵀ R_c,      p_J = R_Pᵀ (R_pᵀ (p_c − p_p) − t_P).

  q: the unit quaternion (x, y, z, w) of R_J (Shepperd 1978, "Quaternion from rotation
  matrix", J. Guidance and Control 1(3), 223-224: the largest of |w|, |x|, |y|, |z| taken
  from the diagonal, the others from the off-diagonal sums and differences), its sign
  continued from the previous read (q and −q are the same rotation), and for a free joint
  p_J before it.
  v: the body-frame velocity of the child relative to the parent, ω = vee(R_Jᵀ Ṙ_J) (the
  skew part; R_Jᵀ Ṙ_J is skew up to the constraint residual) and, for a free joint,
  R_Jᵀ ṗ_J, with

      Ṙ_J = R_Pᵀ (Ṙ_pᵀ R_c + R_pᵀ Ṙ_c),   ṗ_J = R_Pᵀ (Ṙ_pᵀ (p_c − p_p) + R_pᵀ (ṗ_c − ṗ_p)).

  The rates [Ṙ | ṗ] of every body are exact, not differences: ``nc_body_poses``' program is
  affine in the natural coordinates q (X holds points' differences and unit vectors, the
  origin is a constant combination of the body's points and vectors), so
  [Ṙ | ṗ] = D q̇ with D = ∂poses/∂q constant, the forward-mode derivative
  (:func:`symgen.ir.autodiff.replay`) of the kernel's own program, computed once.
- **Other multi-DOF joints** (universal, cylindrical, planar) have no read-back: a one-line
  error names the joint.
"""

from __future__ import annotations

import numpy as np

from symgen.errors import SymgenError
from symgen.formulations.natural.kernels import body_poses_program
from symgen.formulations.natural.model import NaturalModel
from symgen.ir.autodiff import replay, seeds
from symgen.ir.expr import Num
from symgen.ir.program import ProgramBuilder
from symgen.model import JointType, Model

Array = np.ndarray
#: Multi-DOF joint types read back from the bodies' poses.
POSE_JOINTS = (JointType.SPHERICAL, JointType.FREE)


def pose_rate_matrix(nm: NaturalModel) -> Array:
    """D = ∂poses/∂q of ``nc_body_poses`` (rows: the poses' elements, nbodies×3×4 row-major;
    columns: the natural coordinates): its program replayed with q seeded as its own
    direction (forward mode). Constant, the program being affine in q; anything else is an
    error (no modeller produces it)."""
    program = body_poses_program(nm)
    b = ProgramBuilder("nc_body_pose_rates")
    q = b.input("q", nm.n)
    _, tangents = replay(b, program, {"q": q}, {"q": seeds(nm.n)})
    rows = tangents["poses"]
    out = np.zeros((len(rows), nm.n))
    for r, tangent in enumerate(rows):
        for d, x in tangent.items():
            if not isinstance(x, Num):
                raise SymgenError("simulate: the natural model's body poses are not affine in "
                                  "q; their rates cannot be read back")
            out[r, d] = x.value
    return out


def rotation_quaternion(r: Array) -> Array:
    """The unit quaternion (x, y, z, w) of a rotation matrix (Shepperd 1978), its largest
    component positive; normalised (R is off orthogonality by the constraint residual)."""
    t = r[0, 0] + r[1, 1] + r[2, 2]
    k = int(np.argmax([r[0, 0], r[1, 1], r[2, 2], t]))
    if k == 3:
        w = 0.5 * np.sqrt(1.0 + t)
        s = 0.25 / w
        out = [(r[2, 1] - r[1, 2]) * s, (r[0, 2] - r[2, 0]) * s, (r[1, 0] - r[0, 1]) * s, w]
    elif k == 0:
        x = 0.5 * np.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
        s = 0.25 / x
        out = [x, (r[0, 1] + r[1, 0]) * s, (r[0, 2] + r[2, 0]) * s, (r[2, 1] - r[1, 2]) * s]
    elif k == 1:
        y = 0.5 * np.sqrt(1.0 - r[0, 0] + r[1, 1] - r[2, 2])
        s = 0.25 / y
        out = [(r[0, 1] + r[1, 0]) * s, y, (r[1, 2] + r[2, 1]) * s, (r[0, 2] - r[2, 0]) * s]
    else:
        z = 0.5 * np.sqrt(1.0 - r[0, 0] - r[1, 1] + r[2, 2])
        s = 0.25 / z
        out = [(r[0, 2] + r[2, 0]) * s, (r[1, 2] + r[2, 1]) * s, z, (r[1, 0] - r[0, 1]) * s]
    quat = np.array(out)
    return quat / np.linalg.norm(quat)


def _vee_skew(a: Array) -> Array:
    """vee of the skew part of a 3×3 matrix: ω with ω× = ½(A − Aᵀ)."""
    return 0.5 * np.array([a[2, 1] - a[1, 2], a[0, 2] - a[2, 0], a[1, 0] - a[0, 1]])


class _PoseJoint:
    """A spherical or free joint: its bodies' rows of the poses, its placement and its
    slices of the model's q and v."""

    def __init__(self, model: Model, tree: Model, name: str) -> None:
        joint = next(j for j in tree.joints if j.name == name)
        self.name, self.free = name, joint.type is JointType.FREE
        self.child = tree.body_index(joint.child)
        self.parent = -1 if joint.parent == tree.root else tree.body_index(joint.parent)
        self.rotation = np.array([[float(x) for x in row] for row in joint.placement.rotation])
        self.translation = np.array([float(x) for x in joint.placement.translation])
        self.q, self.v = model.q_slices[name], model.v_slices[name]

    def read(self, poses: Array, rates: Array, q_out: Array, v_out: Array,
             previous: Array) -> None:
        """This joint's q and v into ``q_out``, ``v_out`` (the quaternion's sign that of
        ``previous``, the model's q of the last read)."""
        if self.parent < 0:
            r_p, p_p, rd_p, pd_p = np.eye(3), np.zeros(3), np.zeros((3, 3)), np.zeros(3)
        else:
            r_p, p_p = poses[self.parent, :, :3], poses[self.parent, :, 3]
            rd_p, pd_p = rates[self.parent, :, :3], rates[self.parent, :, 3]
        r_c, p_c = poses[self.child, :, :3], poses[self.child, :, 3]
        rd_c, pd_c = rates[self.child, :, :3], rates[self.child, :, 3]
        placed = self.rotation.T
        r_j = placed @ r_p.T @ r_c
        rd_j = placed @ (rd_p.T @ r_c + r_p.T @ rd_c)
        quat = rotation_quaternion(r_j)
        if quat @ previous[self.q.stop - 4:self.q.stop] < 0:
            quat = -quat
        q_out[self.q.stop - 4:self.q.stop] = quat
        v_out[self.v.start:self.v.start + 3] = _vee_skew(r_j.T @ rd_j)
        if self.free:
            q_out[self.q.start:self.q.start + 3] = placed @ (r_p.T @ (p_c - p_p)
                                                            - self.translation)
            pd_j = placed @ (rd_p.T @ (p_c - p_p) + r_p.T @ (pd_c - pd_p))
            v_out[self.v.start + 3:self.v.stop] = r_j.T @ pd_j


class JointReadback:
    """The model's joint coordinates (q, v) from natural states (module docstring).

    ``read(q, qd)`` reads a state and continues from it (the next read unwraps the angles
    and aligns the quaternions' signs with it); ``peek(q, qd)`` reads without continuing (a
    predictor's state)."""

    def __init__(self, model: Model, nm: NaturalModel, method: str) -> None:
        tree = nm.modeller.model
        position = {name: i for i, name in enumerate(nm.actuated)}
        nc, q_index, v_index, pose_joints = [], [], [], []
        for joint in model.joints:
            if joint.nq == 0 and joint.nv == 0:
                continue
            if joint.name in position and joint.nq == 1 and joint.nv == 1:
                nc.append(position[joint.name])
                q_index.append(model.q_slices[joint.name].start)
                v_index.append(model.v_slices[joint.name].start)
            elif joint.type in POSE_JOINTS:
                pose_joints.append(_PoseJoint(model, tree, joint.name))
            else:
                raise SymgenError(
                    f"simulate: method {method!r} reads joint coordinates back from natural "
                    f"coordinates for 1-DOF, spherical and free joints only; joint "
                    f"{joint.name!r} is {joint.type.value}: use method 'tree' or 'projected'")
        self.model, self.njoints = model, len(nm.actuated)
        self.nc, self.q_index, self.v_index = (np.array(x, dtype=int)
                                               for x in (nc, q_index, v_index))
        self.pose_joints = pose_joints
        #: the v entries of the spherical and free joints (no joint forces there)
        self.pose_v = np.array([i for j in pose_joints for i in range(j.v.start, j.v.stop)],
                               dtype=int)
        self.nbodies = tree.nbodies
        self.rate_matrix = pose_rate_matrix(nm) if pose_joints else None
        self.joint_values = self.body_poses = None
        self.values = np.zeros(self.njoints)
        self.q = np.asarray(model.neutral_configuration, dtype=float).copy()

    @property
    def kernel_names(self) -> list[str]:
        """The compiled kernels the reads call."""
        return (["nc_joint_values"] if self.njoints else []) + (
            ["nc_body_poses"] if self.pose_joints else [])

    def bind(self, lib, q_start: Array) -> None:
        """Take the compiled kernels; the first read continues from the joint configuration
        ``q_start`` (angles within ±π of it, quaternions on its side)."""
        self.joint_values = lib.nc_joint_values if self.njoints else None
        self.body_poses = lib.nc_body_poses if self.pose_joints else None
        self.values = np.zeros(self.njoints)  # loop joints: within ±π of the assembly
        self.values[self.nc] = q_start[self.q_index]
        self.q = np.array(q_start, dtype=float)

    def nc_tau(self, tau: Array) -> Array:
        """The step kernels' joint forces (``nm.actuated`` order) from the model's nv-vector;
        spherical and free joints take none (natural coordinates have no input for them)."""
        if self.pose_v.size and np.any(tau[self.pose_v] != 0):
            joint = next(j.name for j in self.pose_joints if np.any(tau[j.v] != 0))
            raise SymgenError(
                f"simulate: natural coordinates take joint forces on 1-DOF joints only; tau "
                f"on joint {joint!r} is not zero: use method 'tree' or 'projected'")
        out = np.zeros(self.njoints)
        out[self.nc] = tau[self.v_index]
        return out

    def work(self, tau: Array, q_before: Array, q_after: Array) -> float:
        """τ·Δq over the 1-DOF joints (the others take no force)."""
        return float(tau[self.v_index] @ (q_after[self.q_index] - q_before[self.q_index]))

    def peek(self, q: Array, qd: Array) -> tuple[Array, Array, Array]:
        """The joint state (q, v) of a natural state and ``nc_joint_values``' values (every
        1-DOF joint of ``nm.actuated``, loop joints too), continued from the last read."""
        q_out, v_out = self.q.copy(), np.zeros(self.model.nv)
        values = self.values
        if self.njoints:
            values, rates = (np.array(x) for x in self.joint_values(q, qd, self.values))
            q_out[self.q_index], v_out[self.v_index] = values[self.nc], rates[self.nc]
        if self.pose_joints:
            poses = np.asarray(self.body_poses(q))
            rates = (self.rate_matrix @ qd).reshape(self.nbodies, 3, 4)
            for joint in self.pose_joints:
                joint.read(poses, rates, q_out, v_out, self.q)
        return q_out, v_out, values

    def read(self, q: Array, qd: Array) -> tuple[Array, Array]:
        """:meth:`peek`, and the next read continues from this one (``values``: its 1-DOF
        values)."""
        q_out, v_out, self.values = self.peek(q, qd)
        self.q = q_out
        return q_out.copy(), v_out


__all__ = ["JointReadback", "POSE_JOINTS", "pose_rate_matrix", "rotation_quaternion"]
