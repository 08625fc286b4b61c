"""Loop closure in joint coordinates, numerically: the cut joints' residuals, their
velocity-level constraint rows and the assembly of the loops (generation-time analysis).

A loop joint α joins the frame F_P = C_P S_P on its parent body P to the frame F_C = C_C S_C
on its child body C (``placement`` and ``child_placement``); the loop is closed when
F_P⁻¹ F_C is a motion of the joint, exp(Z_α q_α) (Müller 2014, eq. 19). At velocity level
the relative twist of C with respect to P, expressed in F_P, must lie in span(Z_α):

    W_α Ad⁻¹_{F_P} (V_C − V_P) = 0,    V_b = Σ_j J_j q̇_j  (spatial twists, eq. 15, 20-22)

with W_α the (6 − ν) rows orthogonal to Z_α; the columns of the constraint Jacobian H_α are
W_α Ad⁻¹_{F_P} (±J_j), + on C's chain and − on P's (eq. 22-23). Z_α is constant in F_P for
every joint type but the universal, whose second axis turns with the first angle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symgen.errors import SymgenError
from symgen.loops.screws import complement
from symgen.model import JointType, Model
from symgen.reference._numeric import (
    NumericJoint,
    NumericModel,
    model_columns,
    numeric_joint,
    prepare,
    tree_configuration,
    tree_rates,
)
from symgen.reference.integrate import integrate
from symgen.reference.joints import joint_pose, motion_subspace
from symgen.reference.kinematics import TreeKinematics, motion_pass, tree_kinematics
from symgen.reference.spatial import (
    cross_motion,
    pose_to_inverse_motion_transform,
    pose_to_motion_transform,
)

Array = np.ndarray


def _rotation_vector(r: Array) -> Array:
    """log of a rotation matrix as a rotation vector (angle ≤ π)."""
    cos = np.clip((np.trace(r) - 1.0) / 2.0, -1.0, 1.0)
    angle = float(np.arccos(cos))
    axial = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    if angle < 1e-6:
        return 0.5 * axial
    if np.pi - angle < 1e-6:  # axis from the symmetric part
        sym = (r + np.eye(3)) / 2.0
        k = int(np.argmax(np.diag(sym)))
        axis = sym[:, k] / np.sqrt(max(sym[k, k], 1e-300))
        return angle * axis
    return angle / (2.0 * np.sin(angle)) * axial


def rotation_error(cut: CutJoint, r: Array) -> Array:
    """e_R for the rotation r of F_C in F_P: a × (r a) for a joint turning about its axis a
    (revolute, cylindrical; a planar joint's normal), plus θa with θ = a·log(r) for the
    helical joint (whose W_α couples θ with the slide), ½ vee(r − rᵀ) for one that does not
    turn (prismatic, fixed), 0 for the spherical joint. Its derivative at r a = a is the
    relative angular velocity less its component along a."""
    a = cut.joint.axis
    if cut.type in (JointType.PRISMATIC, JointType.FIXED):
        return 0.5 * np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    if cut.type is JointType.SPHERICAL:
        return np.zeros(3)
    turn = np.cross(a, r @ a)
    if cut.type is JointType.HELICAL:
        return turn + (a @ _rotation_vector(r)) * a
    return turn


@dataclass(frozen=True)
class CutJoint:
    """A loop joint with its bodies' indices (−1: the root) and its numeric data."""

    name: str
    type: JointType
    parent: int
    child: int
    joint: NumericJoint
    child_rotation: Array
    child_translation: Array

    @property
    def nv(self) -> int:
        return self.type.nv

    def free_motion(self, relative: Array | None = None) -> Array:
        """Z_α: the joint's motion screws (6 × ν) in F_P, at the relative rotation
        ``relative`` of F_C in F_P (only the universal joint's depend on it)."""
        j = self.joint
        if self.type is JointType.FIXED:  # a weld: no relative motion
            return np.zeros((6, 0))
        if self.type is JointType.UNIVERSAL:
            second = (relative if relative is not None else np.eye(3)) @ j.axis2
            return np.column_stack([np.concatenate([j.axis, np.zeros(3)]),
                                    np.concatenate([second, np.zeros(3)])])
        zero = np.zeros(j.q.stop - j.q.start)
        r, p = joint_pose(j, zero)
        return pose_to_inverse_motion_transform(r, p) @ motion_subspace(j, zero)


    def constraint_basis(self, relative: Array | None = None) -> Array:
        """W_α ((6 − ν) × 6): rows whose product with the relative twist must vanish, the
        complement of :meth:`free_motion`. The universal joint's turns with its first angle:
        W = [[0, I₃], [nᵀ, 0]], n = (R a₂) × a₁ with R the relative rotation
        ``relative``, the derivative of its residual's cosine a₁·(R a₂) (ω × R a₂ · a₁ =
        n·ω), so that W stays smooth along the motion; every other type's is constant."""
        if self.type is JointType.UNIVERSAL:
            r = relative if relative is not None else np.eye(3)
            n = np.cross(r @ self.joint.axis2, self.joint.axis)
            return np.block([[np.zeros((3, 3)), np.eye(3)], [n[None, :], np.zeros((1, 3))]])
        return complement(self.free_motion())


class LoopClosure:
    """The loop joints of a model, numerically (parameters resolved with ``params``)."""

    def __init__(self, model: Model, params: dict[str, float] | None = None) -> None:
        resolved = model.resolve(params)
        self.model = resolved
        self.nm: NumericModel = prepare(resolved)
        index = {name: i for i, name in enumerate(self.nm.body_names)}
        index[resolved.root] = -1
        self.cuts: list[CutJoint] = []
        for j in resolved.loop_joints:
            if j.type is JointType.FREE:
                raise SymgenError(f"loop joint {j.name!r}: a free joint closes nothing")
            nj = numeric_joint(j, slice(0, j.type.nq), slice(0, j.type.nv))
            self.cuts.append(CutJoint(
                j.name, j.type, index[j.parent], index[j.child], nj,
                np.array(j.child_placement.rotation, float),
                np.array(j.child_placement.translation, float)))

    @property
    def nv(self) -> int:
        """Length of the model's v (couplings imposed: the independent joints)."""
        return self.nm.model_nv

    def kinematics(self, q: Array) -> TreeKinematics:
        """The tree kinematics at the model's configuration ``q`` (a coupled joint follows
        its master: :func:`symgen.reference._numeric.tree_configuration`)."""
        return tree_kinematics(self.nm, tree_configuration(self.nm, q))

    # ------------------------------------------------------------------ geometry

    def path(self, body: int) -> list[int]:
        """Bodies from ``body`` up to (not including) the root, tip first."""
        out = []
        while body >= 0:
            out.append(body)
            body = self.nm.parents[body]
        return out

    def chains(self, cut: CutJoint) -> tuple[list[int], list[int]]:
        """The tree joints (by body index, base first) from the loop's common ancestor to
        the cut joint's parent body and to its child body (Müller's K_k' and K_l'')."""
        up_p, up_c = self.path(cut.parent), self.path(cut.child)
        common = set(up_p) & set(up_c)
        return ([b for b in reversed(up_p) if b not in common],
                [b for b in reversed(up_c) if b not in common])

    def cut_frames(self, cut: CutJoint, tk: TreeKinematics) -> tuple[tuple[Array, Array],
                                                                    tuple[Array, Array]]:
        """World poses (R, p) of F_P and F_C."""
        rp, pp = tk.pose(cut.parent)
        rc, pc = tk.pose(cut.child)
        fp = (rp @ cut.joint.rotation, rp @ cut.joint.translation + pp)
        fc = (rc @ cut.child_rotation, rc @ cut.child_translation + pc)
        return fp, fc

    @staticmethod
    def to_world(tk: TreeKinematics, body: int) -> Array:
        """Ad of body ``body``'s frame: its motion vectors in world coordinates."""
        return pose_to_inverse_motion_transform(tk.rotation[body], tk.position[body])

    def world_screws(self, tk: TreeKinematics, bodies: list[int]) -> Array:
        """The spatial (world) motion screws of the joints driving ``bodies`` (6 × Σν)."""
        cols = [self.to_world(tk, b) @ tk.s[b] for b in bodies]
        return np.column_stack(cols) if cols else np.zeros((6, 0))

    # ------------------------------------------------------------------ constraints

    def raw_residual(self, cut: CutJoint, tk: TreeKinematics) -> Array:
        """The cut joint's position error, 6 − ν rows W_α e with e = (e_R, p) in F_P, p the
        origin of F_C and e_R :func:`rotation_error`: zero iff the loop is closed, with
        derivative W_α Ad⁻¹_{F_P}(V_C − V_P) there (up to an invertible map of the rows when
        the origins of F_P and F_C part, prismatic and helical joints). The universal
        joint's: the centre's offset and the cosine between its two axes."""
        (rp, pp), (rc, pc) = self.cut_frames(cut, tk)
        r_rel = rp.T @ rc
        p_rel = rp.T @ (pc - pp)
        j = cut.joint
        if cut.type is JointType.UNIVERSAL:
            return np.concatenate([p_rel, [j.axis @ r_rel @ j.axis2 - j.axis @ j.axis2]])
        return cut.constraint_basis() @ np.concatenate([rotation_error(cut, r_rel), p_rel])

    def residual(self, q: Array) -> Array:
        """Every cut joint's position error (:meth:`raw_residual`), stacked."""
        tk = self.kinematics(q)
        out = [self.raw_residual(cut, tk) for cut in self.cuts]
        return np.concatenate(out) if out else np.zeros(0)

    def loop_jacobian(self, cut: CutJoint, tk: TreeKinematics) -> Array:
        """H_α (6 − ν rows × nv) at the kinematics ``tk`` (Müller 2014, eq. 22-23), in the
        model's v (the tree's columns times T when joints are coupled)."""
        (rp, pp), (rc, _) = self.cut_frames(cut, tk)
        to_cut = pose_to_motion_transform(rp, pp)
        h = np.zeros((6, self.nm.nv))
        chain_p, chain_c = self.chains(cut)
        for sign, chain in ((-1.0, chain_p), (1.0, chain_c)):
            for b in chain:
                h[:, self.nm.joints[b].v] += sign * (to_cut @ self.world_screws(tk, [b]))
        return model_columns(self.nm, cut.constraint_basis(rp.T @ rc) @ h)

    def loop_bias(self, cut: CutJoint, tk: TreeKinematics, velocities: list[Array],
                  accelerations: list[Array]) -> Array:
        """Ḣ_α q̇ (6 − ν rows): with X = Ad⁻¹_{F_P}, V and A the spatial velocities and the
        accelerations at q̈ = 0 (no gravity) in world coordinates,
        d/dt [X (V_C − V_P)] = X (A_C − A_P) − [X V_P, X (V_C − V_P)], since
        d/dt Ad⁻¹_g = −ad_{g⁻¹ġ} Ad⁻¹_g (Murray, Li & Sastry 1994, §2.4; Müller 2014, eq. 29)."""
        (rp, pp), (rc, _) = self.cut_frames(cut, tk)
        to_cut = pose_to_motion_transform(rp, pp)

        def world(values: list[Array], body: int) -> Array:
            return np.zeros(6) if body < 0 else self.to_world(tk, body) @ values[body]

        v_p, v_c = world(velocities, cut.parent), world(velocities, cut.child)
        a_p, a_c = world(accelerations, cut.parent), world(accelerations, cut.child)
        relative = to_cut @ (v_c - v_p)
        raw = to_cut @ (a_c - a_p) - cross_motion(to_cut @ v_p, relative)
        r_rel = rp.T @ rc
        out = cut.constraint_basis(r_rel) @ raw
        if cut.type is JointType.UNIVERSAL:  # + Ẇ·twist: ṅ = ((ω × R a₂) × a₁), Ṙ = [ω]× R
            omega = relative[:3]
            out[3] += np.cross(np.cross(omega, r_rel @ cut.joint.axis2), cut.joint.axis) @ omega
        return out

    def biases(self, q: Array, v: Array) -> list[Array]:
        """Ḣ_α q̇ of every loop at (q, v)."""
        q_tree, v_tree = tree_configuration(self.nm, q), tree_rates(self.nm, "v", v)
        tk = tree_kinematics(self.nm, q_tree)
        velocities, accelerations = motion_pass(self.nm, tk, q_tree, v_tree,
                                                np.zeros(self.nm.nv), np.zeros(6))
        return [self.loop_bias(cut, tk, velocities, accelerations) for cut in self.cuts]

    def jacobians(self, q: Array) -> list[Array]:
        """H_α of every loop at q."""
        tk = self.kinematics(q)
        return [self.loop_jacobian(cut, tk) for cut in self.cuts]

    # ------------------------------------------------------------------ assembly

    def least_norm_steps(self, q: Array, selections: list[Array], keep: list[int],
                         iterations: int, damping: float) -> Array:
        """``iterations`` Gauss-Newton steps q ← q ⊕ (−Gᵀ(GGᵀ + δI)⁻¹Φ) on the kept rows
        ``keep`` of the loops' rows ``selections`` (Ū per loop), δ = ``damping`` times the
        trace of GGᵀ: the numeric counterpart of the ``loop_assemble`` kernel."""
        q = np.array(q, float)
        for _ in range(iterations):
            tk = self.kinematics(q)
            phi = np.concatenate([u @ self.raw_residual(cut, tk)
                                  for u, cut in zip(selections, self.cuts, strict=True)])[keep]
            g = np.vstack([u @ self.loop_jacobian(cut, tk)
                           for u, cut in zip(selections, self.cuts, strict=True)])[keep]
            normal = g @ g.T
            normal += damping * np.trace(normal) * np.eye(len(keep))
            q = integrate(self.model, q, -g.T @ np.linalg.solve(normal, phi), 1.0)
        return q

    def assemble(self, q: Array, iterations: int = 100, tolerance: float = 1e-12) -> Array:
        """Close the loops from ``q``: damped Gauss-Newton (Levenberg-Marquardt) on the
        residual, with its Jacobian by central differences along the configuration
        manifold (``integrate``). Raises when the loops cannot be closed from there."""
        q = np.array(q, float)
        nv = self.nv
        # lengths scale the position errors: the largest joint offset
        scale = max(1.0, max((float(np.linalg.norm(j.translation)) for j in self.nm.joints),
                             default=0.0))
        damping = 1e-6
        r = self.residual(q)
        for _ in range(iterations):
            if np.linalg.norm(r) <= tolerance * scale:
                return q
            step = 1e-7
            jac = np.column_stack([
                (self.residual(integrate(self.model, q, e * step, 1.0))
                 - self.residual(integrate(self.model, q, -e * step, 1.0))) / (2 * step)
                for e in np.eye(nv)])
            while True:
                delta = -np.linalg.solve(jac.T @ jac + damping * np.eye(nv), jac.T @ r)
                trial = integrate(self.model, q, delta, 1.0)
                r_trial = self.residual(trial)
                if np.linalg.norm(r_trial) < np.linalg.norm(r):
                    q, r = trial, r_trial
                    damping = max(damping / 10, 1e-12)
                    break
                damping *= 10
                if damping > 1e8:
                    break
            if damping > 1e8:
                break
        if np.linalg.norm(r) <= 1e-9 * scale:
            return q
        raise SymgenError(
            f"{self.model.name}: the loops cannot be closed near the given configuration "
            f"(residual {np.linalg.norm(r):.1e} after {iterations} damped Gauss-Newton "
            "iterations); check the loop joints' frames")


__all__ = ["CutJoint", "LoopClosure"]
