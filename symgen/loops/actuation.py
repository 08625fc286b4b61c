"""Actuated and independent coordinates of a closed-loop model, chosen and checked at
generation: the actuated joints of ``constrained_inverse_dynamics`` (declared by
``Options.actuated``, the model's actuators or its ground joints) and the independent
coordinates of ``dependent_coordinates`` and of the constraint embedding
(``Options.independent``, else the actuated joints when valid, else greedy pivoting). The
two are separate choices: the joints a motor drives need not be good coordinates to
integrate in. A choice is valid when the columns G_P of the other (passive, dependent)
coordinates of the independent loop rows are regular: then the chosen coordinates
determine the motion (|A| = DOF, no singularity; Müller 2014, §5, the loop analysis'
rank). It is checked at the loop analysis' sampled assembled configurations; every failure
is a one-line error naming the option (``Options.actuated`` or ``Options.independent``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from symgen.errors import SymgenError
from symgen.loops.analysis import LoopAnalysis, _rank, _samples, kept_rows
from symgen.loops.closure import LoopClosure
from symgen.model import Model
from symgen.model.elements import JointActuator


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
_SPLITS: dict[tuple, tuple[LoopAnalysis, Split]] = {}
_SAMPLED: dict[int, tuple[LoopAnalysis, list[np.ndarray]]] = {}


def _sampled_jacobians(model: Model, analysis: LoopAnalysis) -> list[np.ndarray]:
    """G (independent rows) at the analysis' sampled assembled configurations (the same
    random moves, seed 0, as :func:`symgen.loops.analyse_loops`), the reference first."""
    hit = _SAMPLED.get(id(analysis))
    if hit is not None and hit[0] is analysis:
        return hit[1]
    closure = LoopClosure(model)
    samples = _samples(closure, analysis.loops, analysis.reference, np.random.default_rng(0))
    out = [kept_rows(closure, analysis.loops, q)[list(analysis.rows)] for q in samples]
    if len(_SAMPLED) > 32:
        _SAMPLED.clear()
    _SAMPLED[id(analysis)] = (analysis, out)
    return out


def _names(names: Sequence[str]) -> str:
    return ", ".join(names)


def _regular_rows(model: Model, analysis: LoopAnalysis, what: str) -> None:
    if len(analysis.rows) != analysis.rank:
        raise SymgenError(
            f"model {model.name!r}: {what} needs independent loop rows, and the analysis "
            f"keeps {len(analysis.rows)} rows of rank {analysis.rank} (the rank varies along "
            "the motion: symgen info --loops)")


def _check_names(model: Model, joints: Sequence[str], source: str, role: str) -> None:
    """Every name of ``joints`` is a tree joint with coordinates of its own (not coupled,
    not a loop joint); else a one-line error naming ``Options.<role>``."""
    loop_names = {j.name for j in model.loop_joints}
    coupled = getattr(model, "coupled", {})
    for name in joints:
        if name in coupled:
            raise SymgenError(f"model {model.name!r}: {role} joint {name!r} ({source}) is "
                              "coupled to another joint and has no coordinate of its own: "
                              f"name its master with Options({role}=...)")
        if name in loop_names:
            raise SymgenError(f"model {model.name!r}: {role} joint {name!r} ({source}) is a "
                              "loop joint, whose coordinates are not in q: name tree joints "
                              f"with Options({role}=...)")
        if name not in model.v_slices:
            raise SymgenError(f"model {model.name!r} has no joint named {name!r} ({source}; "
                              f"joints: {_names(model.joint_names)})")


def _split(model: Model, analysis: LoopAnalysis, joints: Sequence[str], source: str,
           what: str, role: str = "actuated") -> Split:
    """The split of ``joints`` (tree joints, as many DOF as the mechanism), checked: G_P
    regular at every sampled configuration; else a one-line error naming
    ``Options.<role>`` (``actuated`` or ``independent``)."""
    _check_names(model, joints, source, role)
    active = tuple(d for name in joints for d in range(model.nv)[model.v_slices[name]])
    if len(active) != analysis.dof:
        raise SymgenError(
            f"model {model.name!r}: the {role} joints {_names(joints)} ({source}) have "
            f"{len(active)} DOF and the mechanism {analysis.dof}: {what} needs {role} joints "
            f"with {analysis.dof} DOF (Options({role}=...))")
    passive = tuple(d for d in range(model.nv) if d not in active)
    for k, g in enumerate(_sampled_jacobians(model, analysis)):
        r = _rank(g[:, list(passive)])
        if r < len(passive):
            where = "the reference configuration" if k == 0 else f"sampled configuration {k}"
            raise SymgenError(
                f"model {model.name!r}: the {role} joints {_names(joints)} ({source}) do "
                f"not determine the motion: the loop Jacobian's columns of the other joints "
                f"have rank {r} < {len(passive)} at {where} (symgen info --loops); choose "
                f"others with Options({role}=...)")
    return Split(tuple(joints), active, passive, source)


def _declared(model: Model, analysis: LoopAnalysis, option: tuple[str, ...] | None
              ) -> tuple[tuple[str, ...], str] | None:
    """The declared actuated joints and where they come from: ``Options.actuated``, else
    the joints of the model's motors (MJCF ``<motor>``, model order), else those of its
    actuator force elements, else its ground joints (those moving a body off the root) when
    they have as many DOF as the mechanism; None when there is no such declaration."""
    if option is not None:
        return tuple(option), "Options.actuated"
    motored = {m.joint for m in model.motors}
    if motored:
        order = [*model.joint_names, *(j.name for j in model.loop_joints)]
        return tuple(n for n in order if n in motored), "the model's motors"
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


def _cached(key: tuple, analysis: LoopAnalysis, make) -> Split:
    hit = _SPLITS.get(key)
    if hit is not None and hit[0] is analysis:
        return hit[1]
    split = make()
    if len(_SPLITS) > 64:
        _SPLITS.clear()
    _SPLITS[key] = (analysis, split)
    return split


def actuation(model: Model, analysis: LoopAnalysis, option: tuple[str, ...] | None = None) -> Split:
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


def independent_coordinates(model: Model, analysis: LoopAnalysis,
                            option: tuple[str, ...] | None = None,
                            independent: tuple[str, ...] | None = None) -> Split:
    """The independent coordinates of ``dependent_coordinates`` and of the constraint
    embedding: the joints ``independent`` names (``Options.independent``, in that order;
    it must be valid), else the actuated joints of :func:`actuation` when they are valid
    (``option``, ``Options.actuated``, must be), else the joints left when the dependent
    coordinates are chosen by greedy column pivoting of G at the reference configuration
    (each the column farthest from the span of those chosen before, the multi-DOF joints
    of the loops always dependent), checked at every sampled configuration like the
    actuated ones."""
    what = "dependent_coordinates and the constraint embedding"

    def make() -> Split:
        _regular_rows(model, analysis, what)
        if independent is not None:
            return _split(model, analysis, tuple(independent), "Options.independent", what,
                          "independent")
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
                    "joints with Options(independent=...)")
            e = residual[d] / norm
            residual[:] -= np.outer(residual @ e, e)
            chosen.append(d)

        for vs in model.v_slices.values():  # multi-DOF joints in a loop: dependent
            dofs = range(model.nv)[vs]
            if len(dofs) > 1 and np.any(g[:, list(dofs)]):
                for d in dofs:
                    take(d)
        if len(chosen) > len(analysis.rows):
            raise SymgenError(f"model {model.name!r}: more multi-DOF joint coordinates than "
                              "loop constraints: name the independent joints with "
                              "Options(independent=...)")
        while len(chosen) < len(analysis.rows):
            norms = np.linalg.norm(residual, axis=1)
            norms[chosen] = -1.0
            take(int(np.argmax(norms)))
        joints = tuple(name for name, vs in model.v_slices.items()
                       if not set(range(model.nv)[vs]) & set(chosen))
        return _split(model, analysis, joints, "chosen by pivoting G", what,
                      "independent")

    return _cached((id(analysis), "independent", option, independent), analysis, make)


__all__ = ["Split", "actuation", "independent_coordinates"]
