"""Analytical derivatives of inverse dynamics: ∂τ/∂q (tangent space) and ∂τ/∂v by the
recursions of Carpentier & Mansard, "Analytical derivatives of rigid body dynamics
algorithms" (RSS 2018), instead of by differentiating the Newton-Euler program.

**Reference frame.** Every quantity is expressed in one frame 0: the frame of the tree's
only root hinge when there is one (a floating base's body frame, an arm's first link: its
joint map is then constant there, and its configuration enters only through gravity), else
the root's. Dot products of motions and forces do not depend on the frame, and nothing is
differentiated symbolically, so a configuration-dependent frame 0 is as good as the world's.

**Forward pass** (per hinge k with parent p, Featherstone 2008, §2.9-2.11 in frame 0):
``S_k`` the joint map, ``v_k = v_p + S_k θ̇_k``, ``a_k = a_p + S_k θ̈_k + v_p × S_k θ̇_k``
(gravity as the root's acceleration −g), the inertia ``I_k``, momentum ``h_k = I_k v_k``
and force ``f_k = I_k a_k + v_k ×* h_k − f_ext``.

**The perturbation of a joint.** Moving DOF c of joint k (column ``s = S_k e_c``) turns the
subtree of k rigidly about ``s``, which carries every frame-0 quantity of the subtree with it
(``s ×`` on motions, ``s ×*`` on forces), and in addition changes every velocity of the
subtree by the same ``w = v_p × s`` and every acceleration by ``u = a_p × s + v_p × w`` plus
``w × v_b`` (C&M 2018, ∂v/∂q and ∂a/∂q of the forward pass; Pinocchio's ``dVdq``, ``dAdq``).
A body's force then moves by ``I u + Ḃ w`` with ``Ḃ = (v×*)I − I(v×) + h̄``, ``h̄ w = w ×* h``
(Pinocchio's ``doYcrb``), whose blocks reduce to (derivation in docs/derivatives.md)

    Ḃ = [[A, 0], [−2 [f]×, 0]],   A = [ω]×J − J[ω]× − (h ν̂ᵀ + ν̂ hᵀ − 2 (ν̂·h) 1) − [n]×,

for a body with rotational inertia J and first moment h about the frame-0 origin, velocity
(ω, ν̂) and momentum (n, f); it acts on the angular part of w alone. The subtree sums
(composite inertia ``Ic``, ``Ḃc``, force ``Fc``) are plain sums in frame 0.

**The entries** (rows j, column c of joint k; C&M 2018's ∂τ/∂q and ∂τ/∂v; τ_j = S_jᵀ F_j):

- j = k or j an ancestor of k: ``S_jᵀ (Ic_k u + Ḃc_k w [+ s ×* Fc_k when j ≠ k])``: F_j
  changes only through the subtree of k, and on the diagonal the rigid part cancels against
  the change of S_k (``(s' × s)ᵀF + sᵀ(s' ×* F) = 0``);
- j a descendant of k: ``(Ic_j S_j)ᵀ u + (Ḃc_jᵀ S_j)ᵀ w``: τ_j is invariant under the rigid
  part;
- ∂/∂θ̇: the same with ``w = s`` and ``u = (v_k + v_p) × s`` (the uniform part of ∂a/∂θ̇).

Every joint type is covered: hinges with constant joint maps (revolute, prismatic, helical,
cylindrical, spherical, free), and universal and planar joints split into such hinges
(:func:`hinge_tree`); a coupled joint's hinge adds its entries to its master's DOF.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from symgen.errors import SymgenError
from symgen.formulations.recursions import accumulate, root_acceleration
from symgen.formulations.tree.hinges import SymbolicTree, build_tree
from symgen.ir.expr import Expr
from symgen.ir.program import ProgramBuilder
from symgen.model import Model
from symgen.spatial import (
    ZERO,
    Force,
    Inertia,
    Motion,
    Pose,
    add,
    cross,
    dot,
    emit_vec,
    mat_mul,
    scale,
    skew,
    vec3,
)

Vec = Sequence[Expr]


@dataclass
class Body:
    """A hinge's quantities in frame 0 (forward pass)."""

    S: list[Motion]
    v: Motion
    a: Motion
    inertia: Inertia | None
    momentum: Force
    force: Force


@dataclass
class Composite:
    """Sums over a hinge's subtree in frame 0: inertia ``Ic``, force ``Fc``, and the blocks
    of ``Ḃc``: the symmetric part of A, the momentum (n, f)."""

    inertia: Inertia | None
    force: Force
    sym: list[list[Expr]]
    momentum: Force


def hinge_tree(model: Model, b: ProgramBuilder, q: Vec, params: Vec, snap: float
               ) -> SymbolicTree:
    """The hinge tree the recursions work on: every hinge with a joint map constant in its
    frame. A joint whose map varies with its own coordinates (it has a bias c_J = S̊ θ̇,
    Featherstone 2008, eq. 4.35: universal, planar) is split into 1-DOF hinges joined by
    mass-less bodies (Jain, *Partitioning*, Lemma 2.1), which are; spherical and free joints
    stay whole (their maps are constant in the body frame, and their δ is the body-frame
    increment)."""
    tree = build_tree(model, ProgramBuilder(f"{b.name}__probe"), q, params, snap=snap)
    varying = {model.joints[h.joint].type for h in tree.hinges if h.bias is not None}
    tree = build_tree(model, b, q, params, partition=varying, snap=snap)
    check_applicable(tree)
    return tree


def check_applicable(tree: SymbolicTree) -> None:
    """Decline (SymgenError) a tree the recursions below do not cover: a hinge with a bias
    or one whose Coriolis term is taken with another hinge's velocity (sub-hinges of a split
    spherical or free joint)."""
    for h, hinge in enumerate(tree.hinges):
        if hinge.bias is not None or hinge.coriolis_from != h:
            raise SymgenError(f"joint of hinge {hinge.name!r}: its joint map is not constant "
                              "in its frame (analytical derivatives not derived for it)")


def reference_hinge(tree: SymbolicTree) -> int | None:
    """The hinge whose frame is frame 0: the only root hinge, if there is one."""
    roots = [h for h, hinge in enumerate(tree.hinges) if hinge.parent < 0]
    return roots[0] if len(roots) == 1 else None


def poses(b: ProgramBuilder, tree: SymbolicTree, reference: int | None) -> list[Pose | None]:
    """Each hinge frame's pose in frame 0 (None: frame 0 itself)."""
    out: list[Pose | None] = []
    for h, hinge in enumerate(tree.hinges):
        if h == reference:
            out.append(None)
            continue
        local = Pose.of(hinge.X)
        parent = out[hinge.parent] if hinge.parent >= 0 else None
        out.append((local if parent is None else parent * local).emit(b))
    return out


def forward_pass(b: ProgramBuilder, tree: SymbolicTree, v: Vec, a: Vec,
                 f_ext: Vec | None, gravity: bool = True) -> tuple[list[Body], Motion]:
    """Per hinge, S, v, a, I, h = I v and f = I a + v ×* h − f_ext in frame 0; and the
    acceleration of the root in frame 0 (−g)."""
    reference = reference_hinge(tree)
    placed = poses(b, tree, reference)
    a_root = root_acceleration(tree, gravity)
    if reference is not None:
        a_root = (tree.hinges[reference].X @ a_root).emit(b)
    bodies: list[Body] = []
    for h, hinge in enumerate(tree.hinges):
        pose = placed[h]
        X = None if pose is None else pose.transform()
        S = [Motion(s) if X is None else (X.inv @ Motion(s)).emit(b) for s in hinge.S]
        parent = bodies[hinge.parent] if hinge.parent >= 0 else None
        v_p = parent.v if parent else Motion()
        a_p = parent.a if parent else a_root
        vj = _combine(S, [v[d] for d in hinge.dofs]).emit(b)
        vel = (v_p + vj).emit(b)
        acc = (a_p + _combine(S, [a[d] for d in hinge.dofs]) + v_p.cross(vj)).emit(b)
        inertia = hinge.inertia
        if inertia is not None and X is not None:
            inertia = (X.T @ inertia @ X).realize(b)
        if inertia is None:
            bodies.append(Body(S, vel, acc, None, Force(), Force()))
            continue
        momentum = (inertia @ vel).emit(b)
        force = ((inertia @ acc) + vel.cross_star(momentum)).emit(b)
        if f_ext is not None and hinge.body is not None:
            f = Force(f_ext[6 * hinge.body:6 * hinge.body + 6])
            force = (force - (f if X is None else (X.T @ f).emit(b))).emit(b)
        bodies.append(Body(S, vel, acc, inertia, momentum, force))
    return bodies, a_root


def _combine(columns: Sequence[Motion], rates: Sequence[Expr]) -> Motion:
    """Σ columns[c] rates[c]."""
    out = Motion()
    for s, x in zip(columns, rates, strict=True):
        out = out + s * x
    return out


def inertia_variation(b: ProgramBuilder, body: Body) -> list[list[Expr]]:
    """The symmetric part of A for one body (module docs): ``[ω]×J − J[ω]× − (h ν̂ᵀ + ν̂ hᵀ −
    2 (ν̂·h) 1)``, as a 3×3 list (its skew part, −[n]×, is added from the composite
    momentum)."""
    inertia = body.inertia
    assert inertia is not None
    w, nu = body.v.angular, body.v.linear
    wj = mat_mul(skew(w), inertia.J)  # [ω]×J; J[ω]× = −([ω]×J)ᵀ for symmetric J
    nh = b.emit(dot(nu, inertia.h))
    return [[b.emit(wj[i][j] + wj[j][i] - inertia.h[i] * nu[j] - nu[i] * inertia.h[j]
                    + (2 * nh if i == j else ZERO)) if j >= i else ZERO
             for j in range(3)] for i in range(3)]


def _sym(m: list[list[Expr]]) -> list[list[Expr]]:
    return [[m[min(i, j)][max(i, j)] for j in range(3)] for i in range(3)]


def backward_composites(b: ProgramBuilder, tree: SymbolicTree, bodies: Sequence[Body]
                        ) -> list[Composite]:
    """Ic, Fc and Ḃc of every hinge's subtree, tip to base (plain sums in frame 0)."""
    out: list[Composite] = []
    for body in bodies:
        sym = inertia_variation(b, body) if body.inertia is not None else \
            [[ZERO] * 3 for _ in range(3)]
        out.append(Composite(body.inertia, body.force, sym, body.momentum))
    for h in reversed(range(len(tree.hinges))):
        p = tree.hinges[h].parent
        if p < 0:
            continue
        child, parent = out[h], out[p]
        inertia = child.inertia if parent.inertia is None else parent.inertia if \
            child.inertia is None else (parent.inertia + child.inertia).emit(b)
        out[p] = Composite(
            inertia, (parent.force + child.force).emit(b),
            [[b.emit(x + y) if j >= i else ZERO for j, (x, y) in
              enumerate(zip(rp, rc, strict=True))] for i, (rp, rc) in
             enumerate(zip(parent.sym, child.sym, strict=True))],
            (parent.momentum + child.momentum).emit(b))
    return out


def variation_times(c: Composite, w: Motion) -> Force:
    """``Ḃc w = [A ω_w; −2 f × ω_w]`` (A = sym − [n]×)."""
    ww = w.angular
    sym = _sym(c.sym)
    n, f = c.momentum.angular, c.momentum.linear
    top = add([dot(sym[i], ww) for i in range(3)], cross(ww, n))  # −[n]× ω = ω × n
    return Force(vec3(top) + vec3(scale(-2.0, cross(f, ww))))


def variation_transposed_times(b: ProgramBuilder, c: Composite, s: Motion) -> tuple[Expr, ...]:
    """The angular part of ``Ḃcᵀ s = [Aᵀ s_ω + 2 [f]× s_ν; 0]`` (Aᵀ = sym + [n]×)."""
    sym = _sym(c.sym)
    n, f = c.momentum.angular, c.momentum.linear
    return emit_vec(b, add(add([dot(sym[i], s.angular) for i in range(3)],
                               cross(n, s.angular)), scale(2.0, cross(f, s.linear))))


def _times(inertia: Inertia | None, m: Motion) -> Force:
    return Force() if inertia is None else inertia @ m


def inverse_dynamics_derivatives(b: ProgramBuilder, tree: SymbolicTree, v: Vec, a: Vec,
                                 f_ext: Vec | None = None
                                 ) -> tuple[list[list[Expr]], list[list[Expr]]]:
    """(∂τ/∂q, ∂τ/∂v), nv × nv, by the recursions of the module docs."""
    check_applicable(tree)
    bodies, a_root = forward_pass(b, tree, v, a, f_ext)
    composites = backward_composites(b, tree, bodies)
    nv = tree.nv
    d_q: list[list[Expr]] = [[ZERO] * nv for _ in range(nv)]
    d_v: list[list[Expr]] = [[ZERO] * nv for _ in range(nv)]

    def add_to(d: list[list[Expr]], r: int, c: int, value: Expr) -> None:
        # a coupled joint's hinge shares its master's DOF (its S carries the ratio):
        # D = Tᵀ D_tree T sums the entries of the hinges of each DOF
        d[r][c] = accumulate(b, d[r][c], b.emit(value))

    descendants: list[list[int]] = [[] for _ in tree.hinges]
    for h in reversed(range(len(tree.hinges))):
        p = tree.hinges[h].parent
        if p >= 0:
            descendants[p] = [h, *descendants[h], *descendants[p]]
    # per hinge j: Ic_j S_j and the angular part of Ḃc_jᵀ S_j, for the rows of descendants
    momenta = [[(_times(composites[j].inertia, s)).emit(b) for s in bodies[j].S]
               for j in range(len(tree.hinges))]
    varied = [[variation_transposed_times(b, composites[j], s) for s in bodies[j].S]
              for j in range(len(tree.hinges))]
    for k, hinge in enumerate(tree.hinges):
        body, comp = bodies[k], composites[k]
        parent = bodies[hinge.parent] if hinge.parent >= 0 else None
        v_p = parent.v if parent else Motion()
        a_p = parent.a if parent else a_root
        ancestors = tree.ancestors(k)[1:]
        for c, s in zip(hinge.dofs, body.S, strict=True):
            w = v_p.cross(s).emit(b)  # ∂v/∂θ (uniform part)
            u = (a_p.cross(s) + v_p.cross(w)).emit(b)  # ∂a/∂θ (uniform part)
            u_v = ((body.v + v_p).cross(s)).emit(b)  # ∂a/∂θ̇ (uniform part)
            g_q = (_times(comp.inertia, u) + variation_times(comp, w)).emit(b)
            g_v = (_times(comp.inertia, u_v) + variation_times(comp, s)).emit(b)
            for r, s_r in zip(hinge.dofs, body.S, strict=True):
                add_to(d_q, r, c, s_r.dot(g_q))
                add_to(d_v, r, c, s_r.dot(g_v))
            for j in descendants[k]:
                for r, m_r, t_r in zip(tree.hinges[j].dofs, momenta[j], varied[j],
                                       strict=True):
                    add_to(d_q, r, c, m_r.dot(u) + dot(t_r, w.angular))
                    add_to(d_v, r, c, m_r.dot(u_v) + dot(t_r, s.angular))
            if ancestors:
                g_q = (g_q + s.cross_star(comp.force)).emit(b)  # the rigid part
                for j in ancestors:
                    for r, s_r in zip(tree.hinges[j].dofs, bodies[j].S, strict=True):
                        add_to(d_q, r, c, s_r.dot(g_q))
                        add_to(d_v, r, c, s_r.dot(g_v))
    return d_q, d_v


__all__ = ["Body", "Composite", "backward_composites", "check_applicable", "forward_pass",
           "hinge_tree",
           "inverse_dynamics_derivatives", "reference_hinge"]
