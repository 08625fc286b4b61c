"""The tree catalogue, fourth family: identification, registered in :mod:`symgen.registry`
in catalogue order: the inertial-parameter regressor (:mod:`..regressor`; Atkeson, An &
Hollerbach, IJRR 1986) and the regressor of the base parameters, whose columns are found
numerically at generation (:mod:`symgen.reference.base_parameters`, Gautier 1991)."""

from __future__ import annotations

from collections.abc import Sequence

from symgen.formulations import regressor
from symgen.formulations.tree.context import FORMULATION, TreeContext
from symgen.formulations.tree.derivation import one, with_context
from symgen.ir.expr import Expr
from symgen.registry import Kernel, register


def _n_params(c: TreeContext) -> int:
    return regressor.PARAMETERS_PER_BODY * c.model.nbodies


def _rows(flat: Sequence[Expr], width: int) -> list[Sequence[Expr]]:
    return [flat[i:i + width] for i in range(0, len(flat), width)]


register(Kernel(
    "regressor", FORMULATION,
    "inertial-parameter regressor Y(q, v, a): τ = Y π (armature left out)", ("q", "v", "a"),
    one("Y", lambda c: (c.model.nv, _n_params(c)),
        "regressor (nv × 10·nbodies, row-major); per body m, m c, I about the body origin "
        "(xx, xy, yy, xz, yz, zz) (docs/identification.md)"),
    with_context(lambda d, c: regressor.regressor(d.b, c.model, d.inputs, c.snap)),
    uses_tree=False,
    default=False, on_request=True,
))

register(Kernel(
    "base_regressor", FORMULATION,
    "regressor of the base inertial parameters: τ = Y_base π_base", ("q", "v", "a"),
    one("Y_base", lambda c: (c.model.nv, c.base_parameters.count),
        "regressor of the base parameters (nv × base, row-major): the independent columns "
        "of Y, found at generation (symgen.identification.base_parameters)"),
    with_context(lambda d, c: [
        x for row in _rows(regressor.regressor(d.b, c.model, d.inputs, c.snap), _n_params(c))
        for x in (row[j] for j in c.base_parameters.columns)]),
    uses_tree=False, default=False, on_request=True,
))
