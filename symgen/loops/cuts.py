"""The choice of cut joint by the fewest independent constraints (Müller 2014, §6: "choose
α with minimal r_α"). A loop joint declared with ``cut: minimal`` may move: the loop is
re-cut (:func:`symgen.model.recut.recut`) at the joint of its two chains whose r, computed
by the loop analysis for every joint of the loop taken as the cut, is smallest, when that
is fewer rows than the declared cut keeps and the joints between can be reversed. Fewer
rows make the loop kernels and the multiplier dynamics cheaper; the mechanism, its DOF and
the coordinates of the joints that stay tree joints do not change (the new cut joint's
coordinate gives way to the old loop joint's).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from symgen.errors import ModelError
from symgen.loops.analysis import analyse_loops
from symgen.model import Model
from symgen.model.recut import recut


def _candidates(cuts: dict[str, int], kept: int) -> list[str]:
    """The joints whose r is below ``kept``, fewest rows first (ties: chain order)."""
    better = [(r, k, name) for k, (name, r) in enumerate(cuts.items()) if r < kept]
    return [name for _, _, name in sorted(better)]


def minimal_cuts(model: Model, loops: Iterable[str] | None = None) -> Model:
    """``model`` with every loop joint named in ``loops`` (default: those declared with
    ``cut="minimal"``) moved to the joint of its loop with the fewest independent
    constraints r (module documentation); the moved cut keeps ``cut="minimal"``. Loops are
    taken one after the other, each analysed on the model the previous ones left."""
    names = [j.name for j in model.loop_joints if j.cut == "minimal"] if loops is None \
        else list(loops)
    for name in names:
        analysis = analyse_loops(model)
        report = next((r for r in analysis.loops if r.name == name), None)
        if report is None:
            raise ModelError(f"model {model.name!r} has no loop joint {name!r}")
        for joint in _candidates(report.cuts, report.kept):
            try:
                moved = recut(model, name, joint)
            except ModelError:  # not reversible this way: the next best
                continue
            loops_after = tuple(replace(j, cut="minimal") if j.name == joint else j
                                for j in moved.loop_joints)
            model = replace(moved, loop_joints=loops_after)
            break
    return model


__all__ = ["minimal_cuts"]
