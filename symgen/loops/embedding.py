"""Constraint embedding at generation (Jain 2009, "Recursive algorithms using local
constraint embedding", §4-5; Jain 2012, "Multibody graph transformations", §6): the
aggregates of the hinge tree and the embedding map of each.

**Aggregation.** Every loop joint ties the bodies of its two chains, every coupling the
coupled joint's body to its master's. An aggregate S is the smallest subtree that contains
such a group with its root deleted (Jain 2012, Lemma 6: the aggregation condition, ℘(S) a
single node that is an ancestor of all of S): with r the groups' lowest common ancestor, the
bodies on the paths from r to the group, r itself only when it belongs to the group (then S
hangs from r's parent, else from r). Aggregates that share a body are merged, until none
does; the tree of aggregates and single bodies is then a tree again (Lemma 5), each
aggregate a node with several bodies.

**Embedding map.** In an aggregate, the independent loop rows Y = Ū·G (the loop analysis'
constant row selection, restricted to its loops) tie its velocity coordinates θ̇_S. Split
into dependent ones (Y₁ = Y's columns of them, square) and independent ones θ̇_R (Y₂):
θ̇_S = X_S θ̇_R, X_S = [−Y₁⁻¹Y₂; I] (Jain 2009, eq. 35-36). The split is
:func:`symgen.loops.actuation.independent_coordinates` (``Options.independent``; else
``Options.actuated`` when valid, else greedy column pivoting of G at the reference
configuration), checked here to give
every aggregate a square Y₁, regular at the configurations the loop analysis sampled. The
rows of Y₁'s LU factorization are pivoted once, at the reference configuration (partial
pivoting), and that order is baked into the kernels. A coupling needs no row: its ratio is
in the hinge's joint map, and X_S = I over the shared coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symgen.errors import SymgenError
from symgen.loops.actuation import (
    Split,
    _check_names,
    _sampled_jacobians,
    independent_coordinates,
)
from symgen.model import Model


@dataclass(frozen=True)
class Aggregate:
    """One aggregate: its tree joints (model order), the body it hangs from (a body or the
    root), the loop joints and coupled joints it closes, its rows of the independent loop
    rows (positions in :attr:`symgen.loops.LoopAnalysis.rows`), its velocity coordinates
    and their split, and the LU row order of Y₁ (positions in ``rows``)."""

    joints: tuple[str, ...]
    parent: str
    loops: tuple[str, ...]
    coupled: tuple[str, ...]
    rows: tuple[int, ...]
    dofs: tuple[int, ...]
    independent: tuple[int, ...]
    dependent: tuple[int, ...]
    pivots: tuple[int, ...]

    def as_dict(self) -> dict:
        return {"joints": list(self.joints), "parent": self.parent, "loops": list(self.loops),
                "coupled": list(self.coupled), "independent": list(self.independent),
                "dependent": list(self.dependent)}


@dataclass(frozen=True)
class Embedding:
    """The aggregates of a model and its split into independent and dependent coordinates."""

    aggregates: tuple[Aggregate, ...]
    split: Split

    @property
    def independent(self) -> tuple[int, ...]:
        """The independent velocity coordinates (ascending)."""
        return tuple(sorted(self.split.active))


def _paths(model: Model) -> dict[str, list[str]]:
    """Every body's path from itself up to (not including) the root."""
    parent = {j.child: j.parent for j in model.joints}
    out = {}
    for body in model.body_names:
        path, b = [], body
        while b != model.root:
            path.append(b)
            b = parent[b]
        out[body] = path
    return out


def _subtree(group: set[str], paths: dict[str, list[str]], root: str) -> tuple[set[str], str]:
    """(S_A, the body it hangs from) for a group of bodies (module documentation)."""
    common = set.intersection(*(set(paths[b]) for b in group))
    # the lowest common ancestor: the common body farthest from the root
    lca = max(common, key=lambda b: len(paths[b]), default=None)
    bodies: set[str] = set()
    for b in group:
        for x in paths[b]:
            if x == lca:
                break
            bodies.add(x)
    if lca is None:
        return bodies, root
    if lca in group:
        bodies.add(lca)
        up = paths[lca]
        return bodies, up[1] if len(up) > 1 else root
    return bodies, lca


def _groups(model: Model, analysis) -> list[tuple[set[str], set[str], set[str]]]:
    """(bodies, loop joints, coupled joints) that each need one aggregate."""
    joint_body = {j.name: j.child for j in model.joints}
    out = []
    paths = _paths(model)
    for loop in (analysis.loops if analysis is not None else ()):
        bodies = {joint_body[j] for j in (*loop.chain_parent, *loop.chain_child)}
        if not bodies:
            continue
        out.append((bodies, {loop.name}, set()))
    for c in model.coupled.values():
        out.append(({joint_body[c.joint], joint_body[c.master]}, set(), {c.joint}))
    merged: list[tuple[set[str], set[str], set[str], str]] = []
    for bodies, loops, coupled in out:
        span, parent = _subtree(bodies, paths, model.root)
        merged.append((span, loops, coupled, parent))
    changed = True
    while changed:  # merge aggregates sharing a body, then close the union again
        changed = False
        for i in range(len(merged)):
            for j in range(i + 1, len(merged)):
                if merged[i][0] & merged[j][0]:
                    a, b = merged[i], merged[j]
                    span, parent = _subtree(a[0] | b[0], paths, model.root)
                    merged[i] = (span, a[1] | b[1], a[2] | b[2], parent)
                    del merged[j]
                    changed = True
                    break
            if changed:
                break
    return [(span, loops, coupled) for span, loops, coupled, _ in merged]


def _lu_pivots(y1: np.ndarray) -> tuple[int, ...]:
    """The row order of Gaussian elimination with partial pivoting on ``y1``."""
    a = np.array(y1, float)
    n = len(a)
    order = list(range(n))
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if p != k:
            a[[k, p]] = a[[p, k]]
            order[k], order[p] = order[p], order[k]
        if a[k, k] != 0.0:
            a[k + 1:, k:] -= np.outer(a[k + 1:, k] / a[k, k], a[k, k:])
    return tuple(order)


def embedding(model: Model, analysis, actuated: tuple[str, ...] | None = None,
              independent: tuple[str, ...] | None = None) -> Embedding:
    """The aggregates and the embedding split of ``model`` (module documentation);
    ``analysis`` its loop analysis (None without loop joints); ``independent`` the
    ``Options.independent`` choice of the independent coordinates, else ``actuated``
    (``Options.actuated``) when valid, else greedy pivoting. Without loop joints every
    coordinate is independent, and ``independent`` must name every joint."""
    if analysis is not None and len(analysis.rows) != analysis.rank:
        raise SymgenError(
            f"model {model.name!r}: the embedding needs independent loop rows, and the "
            f"analysis keeps {len(analysis.rows)} rows of rank {analysis.rank} (the rank "
            "varies along the motion: symgen info --loops)")
    if analysis is not None:
        split = independent_coordinates(model, analysis, actuated, independent)
    else:
        if independent is not None:
            _check_names(model, independent, "Options.independent", "independent")
            left = [j.name for j in model.independent_joints if j.name not in independent]
            if left:
                raise SymgenError(
                    f"model {model.name!r} has no loop joints: every coordinate is "
                    f"independent, and Options.independent leaves out {', '.join(left)}")
        everything = tuple(range(model.nv))
        split = Split(tuple(j.name for j in model.independent_joints), everything, (),
                      "no loop joints")
    loop_rows: dict[str, range] = {}
    start = 0
    for loop in (analysis.loops if analysis is not None else ()):
        loop_rows[loop.name] = range(start, start + loop.kept)
        start += loop.kept
    kept = list(analysis.rows) if analysis is not None else []
    g_ref = _sampled_jacobians(model, analysis)[0] if analysis is not None else None
    passive = set(split.passive)
    aggregates = []
    order = {b: i for i, b in enumerate(model.body_names)}
    for bodies, loops, coupled in _groups(model, analysis):
        joints = tuple(model.joints[order[b]].name for b in sorted(bodies, key=order.get))
        owners = [model.coupled[j].master if j in model.coupled else j for j in joints]
        dofs = tuple(sorted({d for name in owners
                             for d in range(model.nv)[model.v_slices[name]]}))
        rows = tuple(i for i, row in enumerate(kept)
                     if any(row in loop_rows[name] for name in loops))
        dependent = tuple(d for d in dofs if d in passive)
        independent = tuple(d for d in dofs if d not in passive)
        if len(dependent) != len(rows):
            raise SymgenError(
                f"model {model.name!r}: the aggregate of {', '.join(sorted(loops))} has "
                f"{len(rows)} independent loop rows and {len(dependent)} dependent "
                "coordinates: the embedding needs as many (name the independent joints "
                "with Options(independent=...))")
        pivots: tuple[int, ...] = ()
        if rows:
            y1 = g_ref[np.ix_(list(rows), list(dependent))]
            pivots = _lu_pivots(y1)
        parent = _subtree(set(bodies), _paths(model), model.root)[1]
        aggregates.append(Aggregate(joints, parent, tuple(sorted(loops)),
                                    tuple(sorted(coupled)), rows, dofs, independent,
                                    dependent, pivots))
    index = {j.name: i for i, j in enumerate(model.joints)}
    aggregates.sort(key=lambda a: min(index[n] for n in a.joints))
    return Embedding(tuple(aggregates), split)


def describe_embedding(model: Model, analysis) -> tuple[dict, list[str]]:
    """The constraint embedding of ``model`` for ``symgen info --loops``: (its JSON object,
    its text lines). When the embedding is not available, the reason instead."""
    try:
        emb = embedding(model, analysis if model.loop_joints else None)
    except SymgenError as exc:
        return ({"available": False, "reason": str(exc)},
                [f"Constraint embedding: not available ({exc})"])
    names = [f"{j.name}" + (f"[{k}]" if j.nv > 1 else "")
             for j in model.independent_joints for k in range(j.nv)]
    lines = [f"Constraint embedding: {len(emb.aggregates)} aggregate(s), independent "
             f"coordinates {', '.join(names[d] for d in emb.independent) or 'none'} "
             f"({emb.split.source})"]
    for agg in emb.aggregates:
        closes = ", ".join([*(f"loop {n}" for n in agg.loops),
                            *(f"coupling of {n}" for n in agg.coupled)])
        lines.append(f"  [{', '.join(agg.joints)}] from {agg.parent}: {closes}; independent "
                     f"{', '.join(names[d] for d in agg.independent) or 'none'}, dependent "
                     f"{', '.join(names[d] for d in agg.dependent) or 'none'}")
    report = {"available": True, "independent": [names[d] for d in emb.independent],
              "aggregates": [a.as_dict() | {
                  "independent": [names[d] for d in a.independent],
                  "dependent": [names[d] for d in a.dependent]} for a in emb.aggregates]}
    return report, lines


__all__ = ["Aggregate", "Embedding", "describe_embedding", "embedding"]
