"""Dynamics of a tree closed by loop joints, with Lagrange multipliers:

    M q̈ + C = τ + Gᵀλ,    G q̈ + Ġ q̇ = 0

(the index-reduced saddle-point system of Müller 2014, eq. 4, with the loop constraints of
:mod:`.loop_constraints` in the independent rows the loop analysis keeps).

**Forward dynamics** (:func:`forward_dynamics`) uses the tree's own sparse factorization
M = LᵀDL (Featherstone 2008, Tables 6.3-6.4) and the Schur complement of the constraint
rows (the range-space method):

    q̈₀ = M⁻¹(τ − C),   Y = M⁻¹Gᵀ,   S = G Y,   S λ = −(Ġ q̇ + G q̈₀),   q̈ = q̈₀ + Y λ,

S (m × m, m the independent rows) by a dense LDLᵀ: no factorization of the (nv + m)
saddle-point matrix. With ``baumgarte`` = (α, β) the acceleration constraint becomes
G q̈ = −Ġ q̇ − 2α G q̇ − β² Φ (Baumgarte 1972, *Stabilization of constraints and integrals
of motion in dynamical systems*, Comput. Methods Appl. Mech. Eng. 1): the constraint error
then obeys ë + 2α ė + β² e = 0 to first order and a drifting state returns to the
constraint manifold (critically damped for α = β).

**Actuated inverse dynamics** (:func:`inverse_dynamics`): at a consistent state
(G q̈ + Ġ q̇ = 0) the tree's inverse dynamics give τ = M q̈ + C, which the actuators u (one
per actuated coordinate A, the selection B) and the constraint forces must supply:
τ = B u + Gᵀλ. Split into the actuated rows A and the passive rows P (the other
coordinates):

    G_Pᵀ λ = τ_P,    u = τ_A − G_Aᵀ λ,

G_P the m × m columns of G of the passive coordinates (m = nv − |A|: as many actuated
coordinates as the mechanism has DOF). G_P is regular exactly when the actuators determine
the motion (|A| = DOF and no singularity of the actuation), which :func:`actuation` checks
at the analysis' sampled configurations; a pivot-free LU of G_Pᵀ cannot be guaranteed
(its leading minors vanish at regular configurations), so λ solves the normal equations

    (G_P G_Pᵀ) λ = G_P τ_P

by a dense LDLᵀ (symmetric positive definite iff G_P is regular), with one step of
iterative refinement in working precision on the residual τ_P − G_Pᵀλ (Higham, *Accuracy
and Stability of Numerical Algorithms*, 2002, ch. 12): the normal equations alone have an
error of cond(G_P)²·ε, which each step contracts by about that factor (Bricard's linkage
on random states: backward error 4e-10 without, 6e-12 with; docs/loops.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..expr import Expr, esum
from ..model import Model, SymgenError
from ..model.elements import JointActuator
from ..program import ProgramBuilder
from . import dense
from .loop_constraints import bias, constraints, jacobian
from .ltdl import factored_forward_dynamics, ltdl_solve
from .recursions import inverse_dynamics as tree_inverse_dynamics
from .tree import SymbolicTree


def forward_dynamics(b: ProgramBuilder, tree: SymbolicTree, v: Sequence[Expr],
                     tau: Sequence[Expr], rows: Sequence[np.ndarray], keep: Sequence[int],
                     f_ext: Sequence[Expr] | None = None,
                     baumgarte: tuple[float, float] | None = None
                     ) -> tuple[list[Expr], list[Expr]]:
    """(q̈, λ): ``rows`` the loops' K_α, ``keep`` the independent rows of the stacked ones
    (:attr:`symgen.loops.LoopAnalysis.rows`), ``baumgarte`` (α, β) in 1/s or None."""
    a0, factors, parent = factored_forward_dynamics(b, tree, v, tau, f_ext)  # M⁻¹(τ − C)
    g_all = jacobian(b, tree, rows)
    gamma_all = bias(b, tree, v, rows)
    g = [g_all[i] for i in keep]
    gamma = [gamma_all[i] for i in keep]
    if baumgarte is not None:  # Ġq̇ + 2α G q̇ + β² Φ
        alpha, beta = (float(x) for x in baumgarte)
        phi_all = constraints(b, tree, rows)
        gamma = [b.emit(gi + 2.0 * alpha * esum([x * vj for x, vj in zip(row, v, strict=True)])
                        + beta * beta * phi_all[i])
                 for gi, row, i in zip(gamma, g, keep, strict=True)]
    y = [ltdl_solve(b, factors, parent, row) for row in g]  # columns of M⁻¹Gᵀ
    m = len(g)
    s = [[b.emit(esum([x * yj for x, yj in zip(g[i], y[j], strict=True)])) for j in range(i + 1)]
         for i in range(m)]  # lower triangle of S = G M⁻¹Gᵀ, which dense.ldlt reads
    rhs = [b.emit(-(gamma[i] + esum([x * aj for x, aj in zip(g[i], a0, strict=True)])))
           for i in range(m)]
    lam = dense.solve(b, dense.ldlt(b, s), rhs) if m else []
    a = [b.emit(a0[d] + esum([y[k][d] * lam[k] for k in range(m)])) for d in range(tree.nv)]
    return a, lam


def inverse_dynamics(b: ProgramBuilder, tree: SymbolicTree, v: Sequence[Expr],
                     a: Sequence[Expr], rows: Sequence[np.ndarray], keep: Sequence[int],
                     split: Split, f_ext: Sequence[Expr] | None = None
                     ) -> tuple[list[Expr], list[Expr]]:
    """(u, λ): the actuator forces of the actuated coordinates ``split.active`` (in that
    order) and the multipliers of the independent rows ``keep`` with M a + C = B u + Gᵀλ
    (module documentation)."""
    tau = tree_inverse_dynamics(b, tree, v, a, f_ext)  # M a + C (− Σ Jᵀ f_ext)
    g_all = jacobian(b, tree, rows)
    g = [g_all[i] for i in keep]
    m = len(g)
    if m != len(split.passive):
        raise SymgenError(f"{m} independent loop rows for {len(split.passive)} passive "
                          "coordinates: the actuated inverse dynamics needs as many")
    gp = [[g[i][d] for d in split.passive] for i in range(m)]  # G_P (m × m)

    def gp_t(x: Sequence[Expr]) -> list[Expr]:  # G_Pᵀ x
        return [b.emit(esum([gp[i][k] * x[i] for i in range(m)])) for k in range(m)]

    def gp_(x: Sequence[Expr]) -> list[Expr]:  # G_P x
        return [b.emit(esum([gp[i][k] * x[k] for k in range(m)])) for i in range(m)]

    normal = dense.ldlt(b, [[b.emit(esum([gp[i][k] * gp[j][k] for k in range(m)]))
                             for j in range(i + 1)] for i in range(m)])
    tau_p = [tau[d] for d in split.passive]
    lam = dense.solve(b, normal, gp_(tau_p))
    residual = [b.emit(t - x) for t, x in zip(tau_p, gp_t(lam), strict=True)]
    correction = dense.solve(b, normal, gp_(residual))  # one step of iterative refinement
    lam = [b.emit(x + dx) for x, dx in zip(lam, correction, strict=True)]
    u = [b.emit(tau[d] - esum([g[i][d] * lam[i] for i in range(m)])) for d in split.active]
    return u, lam


# ------------------------------------------------------------------ actuated coordinates
@dataclass(frozen=True)
class Split:
    """Actuated (independent) and passive (dependent) coordinates of a closed-loop model:
    ``joints`` the actuated joints, ``active`` their velocity coordinates (in that order),
    ``passive`` the others (ascending), ``source`` where the choice comes from."""

    joints: tuple[str, ...]
    active: tuple[int, ...]
    passive: tuple[int, ...]
    source: str


#: Splits already checked, by the identity of the loop analysis (its samples cost ~0.1 s).
_SPLITS: dict[tuple[int, str, tuple[str, ...] | None], tuple[Any, Split]] = {}
_SAMPLED: dict[int, tuple[Any, list[np.ndarray]]] = {}


def _sampled_jacobians(model: Model, analysis: Any) -> list[np.ndarray]:
    """G (independent rows) at the analysis' sampled assembled configurations (the same
    random moves, seed 0, as :func:`symgen.loops.analyse_loops`), the reference first."""
    hit = _SAMPLED.get(id(analysis))
    if hit is not None and hit[0] is analysis:
        return hit[1]
    from ..loops import LoopClosure
    from ..loops.analysis import _samples, kept_rows

    closure = LoopClosure(model)
    samples = _samples(closure, analysis.loops, analysis.reference, np.random.default_rng(0))
    out = [kept_rows(closure, analysis.loops, q)[list(analysis.rows)] for q in samples]
    if len(_SAMPLED) > 32:
        _SAMPLED.clear()
    _SAMPLED[id(analysis)] = (analysis, out)
    return out


def _names(names: Sequence[str]) -> str:
    return ", ".join(names)


def _regular_rows(model: Model, analysis: Any, what: str) -> None:
    if len(analysis.rows) != analysis.rank:
        raise SymgenError(
            f"model {model.name!r}: {what} needs independent loop rows, and the analysis "
            f"keeps {len(analysis.rows)} rows of rank {analysis.rank} (the rank varies along "
            "the motion: symgen info --loops)")


def _split(model: Model, analysis: Any, joints: Sequence[str], source: str,
           what: str) -> Split:
    """The split of ``joints`` (tree joints, as many DOF as the mechanism), checked: G_P
    regular at every sampled configuration; else a one-line error."""
    loop_names = {j.name for j in model.loop_joints}
    coupled = getattr(model, "coupled", {})
    for name in joints:
        if name in coupled:
            raise SymgenError(f"model {model.name!r}: actuated joint {name!r} ({source}) is "
                              "coupled to another joint and has no coordinate of its own: "
                              "name its master with Options(actuated=...)")
        if name in loop_names:
            raise SymgenError(f"model {model.name!r}: actuated joint {name!r} ({source}) is a "
                              "loop joint, whose coordinates are not in q: name tree joints "
                              "with Options(actuated=...)")
        if name not in model.v_slices:
            raise SymgenError(f"model {model.name!r} has no joint named {name!r} ({source}; "
                              f"joints: {_names(model.joint_names)})")
    active = tuple(d for name in joints for d in range(model.nv)[model.v_slices[name]])
    if len(active) != analysis.dof:
        raise SymgenError(
            f"model {model.name!r}: the actuated joints {_names(joints)} ({source}) have "
            f"{len(active)} DOF and the mechanism {analysis.dof}: {what} needs actuated joints "
            f"with {analysis.dof} DOF (Options(actuated=...))")
    passive = tuple(d for d in range(model.nv) if d not in active)
    from ..loops.analysis import _rank

    for k, g in enumerate(_sampled_jacobians(model, analysis)):
        r = _rank(g[:, list(passive)])
        if r < len(passive):
            where = "the reference configuration" if k == 0 else f"sampled configuration {k}"
            raise SymgenError(
                f"model {model.name!r}: the actuated joints {_names(joints)} ({source}) do "
                f"not determine the motion: the loop Jacobian's columns of the other joints "
                f"have rank {r} < {len(passive)} at {where} (symgen info --loops); choose "
                "others with Options(actuated=...)")
    return Split(tuple(joints), active, passive, source)


def _declared(model: Model, analysis: Any, option: tuple[str, ...] | None
              ) -> tuple[tuple[str, ...], str] | None:
    """The declared actuated joints and where they come from: ``Options.actuated``, else
    the joints of the model's actuator force elements (model order), else its ground joints
    (those moving a body off the root) when they have as many DOF as the mechanism; None
    when there is no such declaration."""
    if option is not None:
        return tuple(option), "Options.actuated"
    driven = {e.joint for e in model.force_elements if isinstance(e, JointActuator)}
    if driven:
        order = [*model.joint_names, *(j.name for j in model.loop_joints)]
        return tuple(n for n in order if n in driven), "the model's actuators"
    ground = _ground_joints(model)
    if sum(_dofs(model, n) for n in ground) == analysis.dof:
        return ground, "the ground joints"
    return None


def _dofs(model: Model, joint: str) -> int:
    return len(range(model.nv)[model.v_slices[joint]])


def _ground_joints(model: Model) -> tuple[str, ...]:
    """The joints with coordinates that move a body off the root."""
    return tuple(j.name for i, j in enumerate(model.joints)
                 if model.parents[i] < 0 and j.name in model.v_slices)


def _cached(key: tuple, analysis: Any, make) -> Split:
    hit = _SPLITS.get(key)
    if hit is not None and hit[0] is analysis:
        return hit[1]
    split = make()
    if len(_SPLITS) > 64:
        _SPLITS.clear()
    _SPLITS[key] = (analysis, split)
    return split


def actuation(model: Model, analysis: Any, option: tuple[str, ...] | None = None) -> Split:
    """The actuated coordinates of ``constrained_inverse_dynamics`` (:func:`_declared`),
    checked; a one-line error naming ``Options.actuated`` when there are none or they do not
    determine the motion."""
    what = "constrained_inverse_dynamics"

    def make() -> Split:
        _regular_rows(model, analysis, what)
        declared = _declared(model, analysis, option)
        if declared is None:
            raise SymgenError(
                f"model {model.name!r} declares no actuated joints and its ground joints "
                f"({_names(_ground_joints(model))}) do not have its {analysis.dof} DOF: "
                "name them with Options(actuated=(...)) for constrained_inverse_dynamics")
        return _split(model, analysis, declared[0], declared[1], what)

    return _cached((id(analysis), "actuated", option), analysis, make)


def independent_coordinates(model: Model, analysis: Any,
                            option: tuple[str, ...] | None = None) -> Split:
    """The independent coordinates of ``loop_dependent_coordinates``: the actuated joints
    of :func:`actuation` when they are valid (``Options.actuated`` must be), else the joints
    left when the dependent coordinates are chosen by greedy column pivoting of G at the
    reference configuration (each the column farthest from the span of those chosen
    before, multi-DOF joints always dependent), checked at every sampled configuration like
    the actuated ones."""
    what = "loop_dependent_coordinates"

    def make() -> Split:
        _regular_rows(model, analysis, what)
        declared = _declared(model, analysis, option)
        if declared is not None:
            try:
                return _split(model, analysis, declared[0], declared[1], what)
            except SymgenError:
                if option is not None:
                    raise
        g = _sampled_jacobians(model, analysis)[0]
        residual = g.T.copy()  # row d: column d of G, less its part in the chosen span
        scale = max(float(np.linalg.norm(g, 2)), 1e-300)
        chosen: list[int] = []

        def take(d: int) -> None:
            norm = float(np.linalg.norm(residual[d]))
            if norm <= 1e-8 * scale:
                raise SymgenError(
                    f"model {model.name!r}: no choice of dependent coordinates with regular "
                    "columns of G at the reference configuration: name the independent "
                    "joints with Options(actuated=...)")
            e = residual[d] / norm
            residual[:] -= np.outer(residual @ e, e)
            chosen.append(d)

        for vs in model.v_slices.values():
            if len(range(model.nv)[vs]) > 1:
                for d in range(model.nv)[vs]:
                    take(d)
        if len(chosen) > len(analysis.rows):
            raise SymgenError(f"model {model.name!r}: more multi-DOF joint coordinates than "
                              "loop constraints: name the independent joints with "
                              "Options(actuated=...)")
        while len(chosen) < len(analysis.rows):
            norms = np.linalg.norm(residual, axis=1)
            norms[chosen] = -1.0
            take(int(np.argmax(norms)))
        joints = tuple(name for name, vs in model.v_slices.items()
                       if not set(range(model.nv)[vs]) & set(chosen))
        return _split(model, analysis, joints, "chosen by pivoting G", what)

    return _cached((id(analysis), "independent", option), analysis, make)


__all__ = ["Split", "actuation", "forward_dynamics", "independent_coordinates",
           "inverse_dynamics"]
