"""Loop-closure constraints in joint coordinates on the hinge tree (Müller 2014, eq. 19-23
and 29): the residual Φ(q), the Jacobian G(q) and the bias Ġ q̇ of every loop joint, in
the rows kept by the loop analysis (:mod:`symgen.loops.analysis`).

Each loop joint α contributes K_α e, K_α = Ū_α W_α the constant r_α × 6 matrix of its kept
rows, applied to

- at position level, e = (e_R, p) in F_P: p the origin of F_C, e_R = a × (R a) for a joint
  turning about its axis a (revolute, cylindrical; a planar joint's normal), ½ vee(R − Rᵀ)
  for one that does not turn (prismatic, fixed), 0 for the spherical joint, R the rotation
  of F_C in F_P (zero iff the loop is closed; :func:`symgen.loops.closure.rotation_error`);
- at velocity level, the relative twist of the child body with respect to the parent body
  in F_P, Ad⁻¹_{F_P}(V_C − V_P) = Σ_j ±Ad⁻¹_{F_P} J_j q̇_j over the two chains (eq. 20-23),
  whose coefficients are the rows of G;
- at acceleration level, its derivative at q̈ = 0: Ad⁻¹_{F_P}(A_C − A_P) −
  [Ad⁻¹_{F_P}V_P, Ad⁻¹_{F_P}(V_C − V_P)] (d/dt Ad⁻¹_g = −ad_{g⁻¹ġ} Ad⁻¹_g), so that the
  constraints read G q̈ + Ġ q̇ = 0.

A universal cut joint's free motions turn with its first angle, so its rows are not
constant: with a₁ its first axis (in F_P), a₂ its second (in F_C) and R the rotation of F_C
in F_P, its raw rows are W = [[0, I₃], [nᵀ, 0]], n = (R a₂) × a₁, applied to the twist, and
its residual is (p, a₁·(R a₂) − a₁·a₂), whose derivative they are; the kept rows are Ū_α W
(Ū_α over the 4 raw rows, ``rows`` holds Ū_α for such a loop), and the bias gains
Ẇ·twist = Ū_α (0, ṅ·ω), ṅ = (ω × R a₂) × a₁ (:meth:`symgen.loops.CutJoint.constraint_basis`).
Helical cut joints (an angle in the residual) are not supported: cut such a loop at another
joint.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from symgen.errors import SymgenError
from symgen.formulations import dense
from symgen.formulations.integrate import integrate
from symgen.formulations.kinematics import jacobian_columns
from symgen.formulations.recursions import (
    acceleration_pass,
    accumulate,
    motion_pass,
    root_acceleration,
)
from symgen.formulations.tree.hinges import CutFrames, FrameRef, SymbolicTree, build_tree
from symgen.ir.expr import ONE, Expr, Less, esum, select
from symgen.ir.program import ProgramBuilder
from symgen.model import JointType, Model
from symgen.spatial import (
    ZERO,
    Motion,
    Pose,
    Vec3,
    cross,
    dot,
    emit_mat,
    emit_vec,
    mat_mul,
    mat_t_vec,
    mat_vec,
    number,
    scale,
    sub,
    transpose,
    vec3,
)

TURNING = (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.CYLINDRICAL, JointType.PLANAR)
RIGID = (JointType.PRISMATIC, JointType.FIXED)


def _base(tree: SymbolicTree, cut: CutFrames) -> int:
    """The loop's lowest common ancestor hinge (-1: the root): the frame its kinematics is
    taken relative to (a loop's rows, expressed in F_P, do not depend on the motion of what
    carries the loop)."""
    up_p = tree.ancestors(cut.parent.hinge) if cut.parent.hinge >= 0 else []
    up_c = set(tree.ancestors(cut.child.hinge)) if cut.child.hinge >= 0 else set()
    return next((h for h in up_p if h in up_c), -1)


def loop_poses(b: ProgramBuilder, tree: SymbolicTree, cut: CutFrames) -> dict[int, Pose]:
    """Poses of the loop's hinges (its base, :func:`_base`, and the two chains) relative to
    the hinge that carries the cut's parent frame F_P (the root where that is the ground):
    up that hinge's chain to the base, ``T(℘(k)) = T(k) · X(k)``, then down the child's,
    ``T(k) = T(℘(k)) · X(k)⁻¹``. In these coordinates F_P and everything on its own body
    are constant: the parent side's Jacobian column and motion take no rotation into F_P
    and back (relative to the base they would, the rotation and its transpose never
    cancelling in the program)."""
    base = _base(tree, cut)
    top = cut.parent.hinge if cut.parent.hinge >= 0 else base
    poses: dict[int, Pose] = {top: Pose()}
    h = top
    while h != base:  # the parent's chain, up: X(h) = pose of h in ℘(h), inverted
        x = tree.hinges[h].X
        poses[tree.hinges[h].parent] = (poses[h] * Pose(x.E, vec3(
            [-e for e in mat_vec(x.E, x.r)]))).emit(b)
        h = tree.hinges[h].parent
    down = []
    h = cut.child.hinge
    while h != base and h >= 0:
        down.append(h)
        h = tree.hinges[h].parent
    for h in reversed(down):  # the child's chain, down from the base
        poses[h] = (poses[tree.hinges[h].parent] * Pose.of(tree.hinges[h].X)).emit(b)
    return poses


def _frame(b: ProgramBuilder, poses: dict[int, Pose], frame: FrameRef) -> Pose:
    """Pose of a frame fixed on a hinge, relative to the loop's base."""
    return (poses[frame.hinge] * Pose(frame.R, frame.p)).emit(b)


def _check(cut: CutFrames) -> None:
    if cut.type in (JointType.HELICAL, JointType.FREE):
        raise SymgenError(f"loop joint {cut.name!r}: the loop kernels do not support a "
                          f"{cut.type.value} cut joint; close the loop at another joint")


def _rows(b: ProgramBuilder, k: np.ndarray, x: Sequence[Expr]) -> list[Expr]:
    """The constant matrix ``k`` (r × 6) times the 6-vector ``x``."""
    return [b.emit(esum([number(float(c)) * xi for c, xi in zip(row, x, strict=True)
                         if c != 0.0])) for row in k]


def _rows_turned(b: ProgramBuilder, k: np.ndarray, rotation) -> list[list[Expr]]:
    """The rows of ``k`` (r × 6) times diag(Rᵀ, Rᵀ), R = ``rotation``: K applied to a motion
    vector in the frame R maps from (Rᵀ·ω, Rᵀ·v), as r × 6 expressions."""
    out = []
    for row in k:
        turned = []
        for block in (row[:3], row[3:]):  # (kᵀ Rᵀ)_j = Σ_i k_i R_ji
            turned += [b.emit(esum([number(float(c)) * rotation[j][i]
                                    for i, c in enumerate(block) if c != 0.0]))
                       for j in range(3)]
        out.append(turned)
    return out


def constraints(b: ProgramBuilder, tree: SymbolicTree, rows: Sequence[np.ndarray]) -> list[Expr]:
    """Φ(q): K_α e of every loop (module documentation), stacked."""
    out: list[Expr] = []
    for cut, k in zip(tree.cuts, rows, strict=True):
        _check(cut)
        poses = loop_poses(b, tree, cut)
        fp, fc = _frame(b, poses, cut.parent), _frame(b, poses, cut.child)
        r = emit_mat(b, mat_mul(transpose(fp.R), fc.R))
        p = emit_vec(b, mat_t_vec(fp.R, sub(fc.p, fp.p)))
        if cut.type is JointType.UNIVERSAL:  # (p, a₁·(R a₂) − a₁·a₂)
            cosine = b.emit(dot(cut.axis, mat_vec(r, cut.axis2)) - dot(cut.axis, cut.axis2))
            out += _rows(b, k, [*p, cosine])
            continue
        if cut.type in TURNING:
            rotation = emit_vec(b, cross(cut.axis, mat_vec(r, cut.axis)))
        elif cut.type in RIGID:
            rotation = emit_vec(b, scale(0.5, (r[2][1] - r[1][2], r[0][2] - r[2][0],
                                               r[1][0] - r[0][1])))
        else:  # spherical
            rotation = (ZERO, ZERO, ZERO)
        out += _rows(b, k, [*rotation, *p])
    return out


def jacobian(b: ProgramBuilder, tree: SymbolicTree, rows: Sequence[np.ndarray]
             ) -> list[list[Expr]]:
    """G(q) (Σ r_α × nv): K_α Ad⁻¹_{F_P}(±J_j) for the hinges j on the two chains, the
    columns taken about F_P's origin and K_α diag(Rᵀ, Rᵀ) formed once per loop."""
    out: list[list[Expr]] = []
    for cut, k in zip(tree.cuts, rows, strict=True):
        _check(cut)
        poses = loop_poses(b, tree, cut)
        fp = _frame(b, poses, cut.parent)
        n = _universal_normal(b, poses, cut) if cut.type is JointType.UNIVERSAL else None
        g = [[ZERO] * tree.nv for _ in range(len(k))]
        up_p = tree.ancestors(cut.parent.hinge) if cut.parent.hinge >= 0 else []
        up_c = tree.ancestors(cut.child.hinge) if cut.child.hinge >= 0 else []
        # K_α Ad⁻¹_{F_P} = K_α diag(Rᵀ, Rᵀ) once, for columns taken about F_P's origin
        turned = None if n is not None else _rows_turned(b, k, fp.R)
        for sign, chain in ((-1.0, [h for h in up_p if h not in up_c]),
                            (1.0, [h for h in up_c if h not in up_p])):
            for d, w, lin in jacobian_columns(b, tree, poses, chain, fp.p):
                if turned is not None:
                    values = [b.emit(sign * esum([x * c for x, c in zip(row, (*w, *lin),
                                                                         strict=True)]))
                              for row in turned]
                else:  # W = [[0, I], [nᵀ, 0]] after the rotation into F_P
                    column = [*mat_t_vec(fp.R, w), *mat_t_vec(fp.R, lin)]
                    column = [*column[3:], b.emit(dot(n, column[:3]))]
                    values = _rows(b, sign * k, column)
                for i, value in enumerate(values):
                    g[i][d] = accumulate(b, g[i][d], value)  # coupled joints share d
        out += g
    return out


def _in_base(b: ProgramBuilder, poses: dict[int, Pose], values: list[Motion], hinge: int,
             root_value: Motion) -> Motion:
    """A hinge's motion vector (in hinge coordinates; ``root_value`` for the root) in the
    loop's base frame."""
    local = root_value if hinge < 0 else values[hinge]
    return (poses[hinge].transform().inv @ local).emit(b)


def bias(b: ProgramBuilder, tree: SymbolicTree, v: Sequence[Expr],
         rows: Sequence[np.ndarray]) -> list[Expr]:
    """Ġ q̇: K_α [X(A_C − A_P) − (X V_P) × X(V_C − V_P)], X = Ad⁻¹_{F_P}, A at q̈ = 0,
    taken as K_α X [A_C − A_P − V_P × (V_C − V_P)] in the loop's base frame (a rigid
    transform preserves the spatial cross product, Featherstone 2008, §2.9: one
    transform instead of four). The accelerations include gravity (the root's [0; −g], as
    the Newton-Euler pass of the dynamics kernels has them, which the program then shares):
    a uniform field, it cancels in A_C − A_P."""
    vel = motion_pass(b, tree, v)
    a_root = root_acceleration(tree, gravity=True)
    acc = acceleration_pass(b, tree, vel, None, a_root)
    out: list[Expr] = []
    for cut, k in zip(tree.cuts, rows, strict=True):
        _check(cut)
        poses = loop_poses(b, tree, cut)
        to_cut = _frame(b, poses, cut.parent).transform()
        # in the loop's base frame, then into F_P once: X(a × b) = (Xa) × (Xb)
        v_p, v_c = (_in_base(b, poses, vel.V, cut.parent.hinge, Motion()),
                    _in_base(b, poses, vel.V, cut.child.hinge, Motion()))
        a_p, a_c = (_in_base(b, poses, acc, cut.parent.hinge, a_root),
                    _in_base(b, poses, acc, cut.child.hinge, a_root))
        relative_base = (v_c - v_p).emit(b)
        raw = (to_cut @ (a_c - a_p - v_p.cross(relative_base)).emit(b)).emit(b)
        relative = (to_cut @ relative_base).emit(b)
        if cut.type is JointType.UNIVERSAL:  # W·raw + Ẇ·twist, Ẇ's row ṅ = (ω × R a₂) × a₁
            r_a2 = _turned_axis(b, poses, cut)
            omega = relative.angular
            n = emit_vec(b, cross(r_a2, cut.axis))
            n_dot = emit_vec(b, cross(cross(omega, r_a2), cut.axis))
            out += _rows(b, k, [*raw.linear, b.emit(dot(n, raw.angular) + dot(n_dot, omega))])
            continue
        out += _rows(b, k, list(raw))
    return out


def stabilised_bias(b: ProgramBuilder, tree: SymbolicTree, v: Sequence[Expr],
                    rows: Sequence[np.ndarray], g: Sequence[Sequence[Expr]],
                    gamma: Sequence[Expr], indices: Sequence[int],
                    baumgarte: tuple[float, float] | None) -> list[Expr]:
    """The right-hand side of the acceleration constraint G q̈ = −γ in the stacked rows
    ``indices``: γ = Ġ q̇ (``gamma``, every stacked row, as :func:`bias` gives it) or, with
    ``baumgarte`` = (α, β) in 1/s, Ġ q̇ + 2α G q̇ + β² Φ (Baumgarte 1972, *Stabilization of
    constraints and integrals of motion in dynamical systems*, Comput. Methods Appl. Mech.
    Eng. 1: the residual then obeys ë + 2α ė + β² e = 0 to first order); ``g`` the stacked
    rows of G."""
    if baumgarte is None:
        return [gamma[i] for i in indices]
    alpha, beta = (float(x) for x in baumgarte)
    phi = constraints(b, tree, rows)
    return [b.emit(gamma[i] + 2.0 * alpha * esum([x * vj for x, vj in zip(g[i], v, strict=True)])
                   + beta * beta * phi[i]) for i in indices]


def _turned_axis(b: ProgramBuilder, poses: dict[int, Pose], cut: CutFrames) -> Vec3:
    """R a₂: a universal cut joint's second axis (in F_C) in F_P."""
    fp, fc = _frame(b, poses, cut.parent), _frame(b, poses, cut.child)
    return emit_vec(b, mat_t_vec(fp.R, mat_vec(fc.R, cut.axis2)))


def _universal_normal(b: ProgramBuilder, poses: dict[int, Pose], cut: CutFrames) -> Vec3:
    """n = (R a₂) × a₁, the row of W that a universal cut's turning part takes."""
    return emit_vec(b, cross(_turned_axis(b, poses, cut), cut.axis))


#: Gauss-Newton iterations of ``loop_assemble`` (quadratic convergence from a guess within
#: its basin: 8 take an error of 0.1 rad to rounding).
ASSEMBLY_ITERATIONS = 8
#: Levenberg damping of the normal equations, relative to their trace.
ASSEMBLY_DAMPING = 1e-12


def assemble(b: ProgramBuilder, model: Model, q: Sequence[Expr], params: Sequence[Expr],
             rows: Sequence[np.ndarray], keep: Sequence[int], snap: float,
             iterations: int = ASSEMBLY_ITERATIONS,
             columns: Sequence[int] | None = None,
             status: list[Expr] | None = None) -> list[Expr]:
    """Close the loops from the guess q: ``iterations`` damped Gauss-Newton steps on the
    independent rows, Δq = −Gᵀ(G Gᵀ + δI)⁻¹ Φ (the least-norm correction), applied on the
    configuration manifold (q ⊕ Δq: quaternion joints stay unit). With ``columns`` (velocity
    coordinates covering whole joints) only those move, G restricted to them; the other
    joints keep their q exactly."""
    start = list(q)
    for _ in range(iterations):
        tree = build_tree(model, b, q, params, snap=snap)
        phi_all = constraints(b, tree, rows)
        g_all = jacobian(b, tree, rows)
        phi = [phi_all[i] for i in keep]
        g = [g_all[i] for i in keep]
        if columns is not None:
            g = [[row[d] for d in columns] for row in g]
        m = len(g)
        normal = [[b.emit(esum([x * y for x, y in zip(g[i], g[j], strict=True)]))
                   for j in range(m)] for i in range(m)]
        damp = b.emit(ASSEMBLY_DAMPING * esum([normal[i][i] for i in range(m)]))
        normal = [[b.emit(normal[i][j] + damp) if i == j else normal[i][j] for j in range(m)]
                  for i in range(m)]
        factor = dense.ldlt(b, normal)
        normal_pivots = list(factor.inv_d)
        w = dense.solve(b, factor, phi)
        n = model.nv if columns is None else len(columns)
        step = [b.emit(-esum([g[i][k] * w[i] for i in range(m)])) for k in range(n)]
        if columns is not None:
            full: list[Expr] = [ZERO] * model.nv
            for k, d in enumerate(columns):
                full[d] = step[k]
            step = full
        q = integrate(b, model, q, step, ONE)
        if columns is not None:
            moving = set(columns)
            for name, vs in model.v_slices.items():  # the joints with coordinates
                if not moving & set(range(model.nv)[vs]):
                    q[model.q_slices[name]] = start[model.q_slices[name]]
    if status is not None:
        tree = build_tree(model, b, q, params, snap=snap)
        phi_all = constraints(b, tree, rows)
        status.append(_largest(b, [_magnitude(b, phi_all[i]) for i in keep]))
        # pivots d_i = 1/inv_d_i: min d / max d = min(1/inv_d) · min(inv_d)
        status.append(b.emit(_smallest(b, [ONE / x for x in normal_pivots])
                             * _smallest(b, normal_pivots)) if normal_pivots else ONE)
    return list(q)


def _magnitude(b: ProgramBuilder, x: Expr) -> Expr:
    return b.emit(select(Less(x, ZERO), -x, x))


def _largest(b: ProgramBuilder, xs: Sequence[Expr]) -> Expr:
    out = xs[0] if xs else ZERO
    for x in xs[1:]:
        out = b.emit(select(Less(out, x), x, out))
    return out


def _smallest(b: ProgramBuilder, xs: Sequence[Expr]) -> Expr:
    out = xs[0]
    for x in xs[1:]:
        out = b.emit(select(Less(x, out), x, out))
    return out


def dependent_coordinates(b: ProgramBuilder, model: Model, q: Sequence[Expr],
                          params: Sequence[Expr], rows: Sequence[np.ndarray],
                          keep: Sequence[int], dependent: Sequence[int], snap: float,
                          iterations: int = ASSEMBLY_ITERATIONS) -> dict[str, list[Expr]]:
    """The dependent coordinates from the independent ones: q with its joints of the velocity
    coordinates ``dependent`` solved to close the loops (from their values in q as the
    guess), the other joints held: :func:`assemble` on the columns G_D of the dependent
    coordinates, Δq_D = −G_Dᵀ(G_D G_Dᵀ + δI)⁻¹Φ, which is Newton's step −G_D⁻¹Φ (damped by
    δ) when G_D is square and regular (Options.independent, docs/loops.md). Outputs
    ``q_closed`` and ``status``: [largest |Φ| left, smallest pivot of G_D G_Dᵀ relative to
    the largest] (the second near 0: the independent coordinates no longer determine the
    motion, a singular configuration)."""
    status: list[Expr] = []
    q_closed = assemble(b, model, q, params, rows, keep, snap, iterations, columns=dependent,
                        status=status)
    return {"q_closed": q_closed, "status": status}


__all__ = ["ASSEMBLY_DAMPING", "ASSEMBLY_ITERATIONS", "assemble", "bias", "constraints",
           "dependent_coordinates", "jacobian", "stabilised_bias"]
