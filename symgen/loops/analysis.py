"""Loop analysis at generation: Müller's geometric constraint regularisation per loop and a
global numerical rank check (Müller 2014, "Implementation of a geometric constraint
regularization for multibody system models", §5-§7).

Per loop joint α (the cut), with K_k' and K_l'' the tree chains from the loop's common
ancestor to the cut's two bodies:

- the motion algebras D̄₁ = Lie(Y_j, j ∈ K_k'), D̄₂ = Lie(Y_j, j ∈ K_l'') of their joint
  screws (eq. 25, closed to a fixed point);
- the basis matrix B_α = [Ad⁻¹_{F_P}(D̄₁ ∪ D̄₂), Z_α] of the conservative motion space Δ_α at
  the cut (eq. 27), and the SVD W_α B_α = U Σ Vᵀ: r_α = rank, the number of independent
  constraints kept, and the constant selection Ū_α = the first r_α columns of U, transposed
  (eq. 28), so that the loop's constraints are Ū_α H_α(q) q̇ = 0 (eq. 29);
- r for every other joint of the loop taken as the cut (the choice by minimal r_α, §6).

Per-loop analysis cannot see redundancy between loops (two loops sharing links, the
double four-bar, the 3-PRRR manipulator of §7.2) nor in paradoxical linkages (Bricard's):
the stacked kept rows G(q) are therefore ranked at several assembled configurations
reached along the motion from the model's own. When the rank is the same everywhere and
below the number of kept rows the redundancy is permanent, and a constant subset of rows
of that rank is chosen (greedy pivoting at the reference configuration, checked at every
sample); when the rank varies, the configurations sampled include singular ones and all
rows are kept, with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from symgen.errors import SymgenError
from symgen.loops.closure import CutJoint, LoopClosure
from symgen.loops.screws import RANK_TOLERANCE, lie_closure, rank
from symgen.model import JointType, Model
from symgen.pivoting import pivot_rows
from symgen.reference.integrate import integrate, neutral_configuration
from symgen.reference.spatial import pose_to_inverse_motion_transform, pose_to_motion_transform

Array = np.ndarray

#: Assembled configurations sampled along the motion for the global rank check.
SAMPLES = 8
#: Size of each random move along the motion (rad or m, per unit of the tangent basis).
MOVE = 0.4
#: Relative tolerance of the global rank (the stacked rows mix angles and lengths).
GLOBAL_RANK_TOLERANCE = 1e-8


@dataclass(frozen=True)
class LoopReport:
    """Müller's analysis of one loop."""

    name: str
    type: str
    nu: int
    chain_parent: tuple[str, ...]
    chain_child: tuple[str, ...]
    motion_dims: tuple[int, int]
    delta_dim: int
    raw: int
    kept: int
    selection: Array
    cuts: dict[str, int]
    #: K_α = Ū_α W_α (r_α × 6): the kept rows over the relative twist at the cut (None for a
    #: universal cut joint, whose W_α turns with the joint).
    constraint_rows: Array | None = None
    #: The loop joint's ``cut``: "declared", or "minimal" (the model chose it, and may
    #: have moved it: :func:`symgen.loops.minimal_cuts`).
    cut_choice: str = "declared"

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "nu": self.nu,
                "chains": [list(self.chain_parent), list(self.chain_child)],
                "motion_dims": list(self.motion_dims), "delta_dim": self.delta_dim,
                "constraints_raw": self.raw, "constraints_kept": self.kept,
                "selection": self.selection.tolist(), "cuts": dict(self.cuts),
                "cut": self.cut_choice}


@dataclass(frozen=True)
class LoopAnalysis:
    """The loops of a model and their counts (see the module documentation)."""

    model: str
    coordinates: int
    loops: tuple[LoopReport, ...]
    rank: int
    ranks: tuple[int, ...]
    rows: tuple[int, ...]
    reference: Array
    warnings: tuple[str, ...] = field(default=())

    @property
    def constraints_raw(self) -> int:
        return sum(loop.raw for loop in self.loops)

    @property
    def constraints_kept(self) -> int:
        return sum(loop.kept for loop in self.loops)

    @property
    def permanent(self) -> bool:
        """Whether every sampled configuration has the same rank."""
        return len(set(self.ranks)) <= 1

    @property
    def dof(self) -> int:
        return self.coordinates - self.rank

    def as_dict(self) -> dict[str, Any]:
        """The ``symgen info --loops --json`` object."""
        return {"model": self.model, "coordinates": self.coordinates,
                "constraints_raw": self.constraints_raw,
                "constraints_kept": self.constraints_kept,
                "constraints_independent": self.rank,
                "redundant": self.constraints_raw - self.rank,
                "residual_redundant": self.constraints_kept - self.rank,
                "dof": self.dof, "sampled_ranks": list(self.ranks),
                "rows": list(self.rows), "loops": [loop.as_dict() for loop in self.loops],
                "warnings": list(self.warnings)}

    def text(self) -> str:
        """The ``symgen info --loops`` report."""
        if not self.loops:
            return (f"{self.model} has no loop joint: {self.coordinates} joint coordinates, "
                    f"no constraint, DOF {self.coordinates}")
        lines = [f"Loops of {self.model} (joint coordinates: {self.coordinates}):"]
        for loop in self.loops:
            lines.append(f"  loop {loop.name!r} ({loop.type}, {loop.nu} DOF): chains "
                         f"[{', '.join(loop.chain_parent)}] | [{', '.join(loop.chain_child)}]")
            lines.append(f"    motion algebras dim {loop.motion_dims[0]} | "
                         f"{loop.motion_dims[1]}, motion space at the cut dim "
                         f"{loop.delta_dim}: {loop.raw} raw constraints, {loop.kept} kept")
            for row in loop.selection:
                lines.append("    U: [" + ", ".join(f"{x:+.6f}" for x in row) + "]")
            others = ", ".join(f"{k} r = {v}" for k, v in loop.cuts.items())
            best = min(loop.cuts.values(), default=loop.kept)
            minimal = "chosen with cut: minimal" if loop.cut_choice == "minimal" else \
                "the declared cut is minimal"
            verdict = (minimal if loop.kept <= best
                       else f"a cut with r = {best} would keep fewer: cut: minimal moves it")
            lines.append(f"    cuts: {others} ({verdict})")
        lines.append(
            f"Total: {self.constraints_raw} raw constraints, {self.constraints_kept} kept by "
            f"the per-loop selection, rank {self.rank} at {len(self.ranks)} assembled "
            f"configurations: {self.constraints_kept - self.rank} residual redundant, "
            f"{self.constraints_raw - self.rank} redundant of the raw ones; DOF "
            f"{self.coordinates} - {self.rank} = {self.dof}")
        if self.constraints_kept > self.rank and self.permanent:
            lines.append(f"Rows kept (constant selection, of the stacked kept rows): "
                         f"{', '.join(str(r) for r in self.rows)}")
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


#: Entries of an aligned basis (:func:`aligned_basis`) this close to 0 or ±1 are made exact.
ALIGN_TOLERANCE = 1e-12


def aligned_basis(u: Array) -> Array:
    """An orthonormal basis (rows) of the row space of the orthonormal rows ``u``, chosen to
    be as sparse as that space allows: the rows reduced to the identity on the columns
    :func:`~symgen.pivoting.pivot_rows` picks (the raw constraints best represented), then
    orthonormalised in that order (Gram-Schmidt by QR), entries within
    :data:`ALIGN_TOLERANCE` of 0 or ±1 made exact. A space spanned by raw constraint rows
    (a planar revolute loop keeps the two in-plane forces) gets exactly those rows: the
    kernels read the constraint's components instead of combining them (the SVD's basis
    is any rotation of them), and λ are the forces along the cut frame's axes."""
    if u.shape[0] == 0:
        return u
    pivots = pivot_rows(u.T, u.shape[0])
    reduced = np.linalg.solve(u[:, pivots], u)
    q, r = np.linalg.qr(reduced.T)
    basis = (q * np.sign(np.diag(r))).T
    for target in (0.0, 1.0, -1.0):
        basis[np.abs(basis - target) <= ALIGN_TOLERANCE] = target
    return basis


def _loop_report(closure: LoopClosure, cut: CutJoint, q: Array) -> LoopReport:
    tk = closure.kinematics(q)
    chain_p, chain_c = closure.chains(cut)
    (rp, pp), (rc, _) = closure.cut_frames(cut, tk)
    d1 = lie_closure(closure.world_screws(tk, chain_p))
    d2 = lie_closure(closure.world_screws(tk, chain_c))
    z = cut.free_motion(rp.T @ rc)
    basis = np.column_stack([pose_to_motion_transform(rp, pp) @ np.column_stack([d1, d2]), z])
    w = cut.constraint_basis(rp.T @ rc)
    u, sigma, _ = np.linalg.svd(w @ basis, full_matrices=True)
    kept = int(np.sum(sigma > RANK_TOLERANCE * max(1.0, float(sigma[0])))) if sigma.size else 0
    u = np.column_stack([aligned_basis(u[:, :kept].T).T, u[:, kept:]])
    z_world = pose_to_inverse_motion_transform(rp, pp) @ z
    cuts: dict[str, int] = {}
    names = closure.nm.joints
    for side, other in ((chain_p, chain_c), (chain_c, chain_p)):
        for k, b in enumerate(side):
            before = closure.world_screws(tk, side[:k])
            after = np.column_stack([closure.world_screws(tk, other), z_world,
                                     closure.world_screws(tk, side[k + 1:])])
            stacked = np.column_stack([lie_closure(before), lie_closure(after),
                                       closure.world_screws(tk, [b])])
            cuts[names[b].name] = rank(stacked) - names[b].type.nv
    return LoopReport(
        cut.name, cut.type.value, cut.nv, tuple(names[b].name for b in chain_p),
        tuple(names[b].name for b in chain_c), (d1.shape[1], d2.shape[1]), rank(basis),
        6 - cut.nv, kept, u[:, :kept].T.copy(), cuts,
        None if cut.type is JointType.UNIVERSAL else u[:, :kept].T @ w,
        next(j.cut for j in closure.model.loop_joints if j.name == cut.name))


def kept_rows(closure: LoopClosure, loops: tuple[LoopReport, ...], q: Array) -> Array:
    """G(q): the stacked kept rows Ū_α H_α(q) of every loop (Σ r_α × nv)."""
    rows = [loop.selection @ h for loop, h in zip(loops, closure.jacobians(q), strict=True)]
    return np.vstack(rows) if rows else np.zeros((0, closure.nv))


def _rank(g: Array) -> int:
    if g.size == 0:
        return 0
    sigma = np.linalg.svd(g, compute_uv=False)
    return int(np.sum(sigma > GLOBAL_RANK_TOLERANCE * max(1.0, float(sigma[0]))))


def _samples(closure: LoopClosure, loops: tuple[LoopReport, ...], q0: Array,
             rng: np.random.Generator) -> list[Array]:
    """Assembled configurations reached from ``q0`` by random moves along the motion (the
    null space of G), each re-assembled."""
    out = [q0]
    q = q0
    for _ in range(SAMPLES - 1):
        g = kept_rows(closure, loops, q)
        _, sigma, vt = (np.linalg.svd(g) if g.size
                        else (None, np.zeros(0), np.eye(closure.nv)))
        r = int(np.sum(sigma > GLOBAL_RANK_TOLERANCE * max(1.0, float(sigma[0])))) \
            if sigma.size else 0
        tangent = vt[r:].T
        if tangent.shape[1] == 0:
            break
        move = tangent @ rng.normal(size=tangent.shape[1])
        move *= MOVE / max(np.linalg.norm(move), 1e-300)
        try:
            q = closure.assemble(integrate(closure.model, q, move, 1.0))
        except (SymgenError, np.linalg.LinAlgError):  # past an assembly limit: skip it
            continue
        out.append(q)
    return out


def analyse_loops(model: Model, params: dict[str, float] | None = None,
                  seed: int = 0) -> LoopAnalysis:
    """Müller's per-loop analysis and the global rank check of ``model``'s loops (module
    documentation). ``seed`` drives the random moves between sampled configurations."""
    closure = LoopClosure(model, params)
    nv = closure.nv
    if not closure.cuts:
        return LoopAnalysis(model.name, nv, (), 0, (), (), np.zeros(closure.nm.model_nq))
    q_ref = closure.assemble(neutral_configuration(closure.model))
    loops = tuple(_loop_report(closure, cut, q_ref) for cut in closure.cuts)
    samples = _samples(closure, loops, q_ref, np.random.default_rng(seed))
    ranks = tuple(_rank(kept_rows(closure, loops, q)) for q in samples)
    generic = max(ranks)
    kept = sum(loop.kept for loop in loops)
    warnings: list[str] = []
    rows: tuple[int, ...] = tuple(range(kept))
    if len(set(ranks)) > 1:
        warnings.append(
            f"the rank of the loop constraints varies along the motion ({min(ranks)} to "
            f"{generic} at {len(ranks)} sampled configurations): the mechanism passes "
            "singular configurations; every kept row stays")
    elif generic < kept:
        choice = pivot_rows(kept_rows(closure, loops, q_ref), generic)
        if all(_rank(kept_rows(closure, loops, q)[choice]) == generic for q in samples):
            rows = tuple(choice)
        else:
            warnings.append(
                f"no constant choice of {generic} of the {kept} kept rows has full rank at "
                "every sampled configuration; every kept row stays")
    return LoopAnalysis(model.name, nv, loops, generic, ranks, rows, q_ref, tuple(warnings))


__all__ = ["LoopAnalysis", "LoopReport", "analyse_loops", "kept_rows"]
