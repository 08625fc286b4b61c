"""Natural coordinates for closed-loop mechanisms, from the user's side: the natural model of
a symgen model and its kernels (``symgen.generate`` with :class:`NaturalOptions`; the
formulation itself is :mod:`symgen.formulations.natural`, see docs/natural.md)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from symgen.errors import SymgenError
from symgen.formulations.natural.kernels import (
    NaturalOptions,
    describe_natural,
    natural_model,
)
from symgen.formulations.natural.model import NaturalModel
from symgen.formulations.natural.registration import NaturalContext
from symgen.generate import generate
from symgen.reference.natural import assemble


def natural_kernels(model, opts: NaturalOptions | None = None, nm: NaturalModel | None = None):
    """(NaturalModel, KernelSet) with every natural-coordinate kernel of ``model``,
    optimised, ready for :meth:`KernelSet.write` / :meth:`KernelSet.compile`: the same as
    ``symgen.generate(model, options=opts or NaturalOptions())``. ``nm``: a natural model of
    ``model`` built beforehand (e.g. :func:`natural_model` with springs).

    The header describes these kernels only: its size macros are
    :func:`symgen.formulations.natural.registration.natural_sizes` (``<PREFIX>_N``, ``_M``,
    ...), its default prefix is ``<model>_natural`` (so it can be included next to the tree
    kernels' ``<model>.h``)."""
    opts = opts or NaturalOptions()
    context = None if nm is None else NaturalContext(model.resolve(), nm, opts)
    ks = generate(model, options=opts, context=context)
    return ks.context.nm, ks


def natural_state(model, q: Sequence[float], v: Sequence[float] | None = None,
                  nm: NaturalModel | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The natural coordinates and velocities (q_nat, q̇_nat) of the joint state (``q``,
    ``v``) of ``model``'s spanning tree (``v`` None: at rest); ``nm``: its natural model
    built beforehand (:func:`natural_model`).

    Positions: each natural point and unit vector placed by the tree's forward kinematics
    (García de Jalón & Bayo 1994, §2.1.3 planar, §2.2.3 spatial), then closed on Φ(q) = 0 by
    Newton-Raphson in least-squares form (eq. 3.15; redundant constraints are fine) — a
    no-op when ``q`` closes the loops. Velocities: ṙ = v_b + ω_b × (r − p_b) and
    u̇ = ω_b × u from each body's twist, then projected onto Φ_q q̇ = 0 in the metric of the
    kinetic energy (min (q̇ − q̇*)ᵀM(q̇ − q̇*); the same projection as the joint-coordinate
    one, the kinetic energy being the same form in either coordinates) — a no-op when
    ``v`` satisfies the loop constraints."""
    nm = nm if nm is not None else natural_model(model)
    tree = nm.modeller.model
    q = np.asarray(q, dtype=float).reshape(-1)
    v = np.zeros(tree.nv) if v is None else np.asarray(v, dtype=float).reshape(-1)
    if q.shape != (tree.nq,) or v.shape != (tree.nv,):
        raise SymgenError(f"natural_state: q needs nq = {tree.nq} values and v nv = "
                          f"{tree.nv} (got {q.size} and {v.size})")
    try:
        q_nat = assemble(nm, nm.modeller.coordinates_at(q))
    except RuntimeError as error:
        raise SymgenError(f"natural_state: the loops of {tree.name!r} do not close near the "
                          f"given q ({error})") from None
    qd = nm.modeller.velocities_at(q, v)
    pq = nm.phi_q(q_nat)
    weight = np.asarray(nm.mass_matrix, dtype=float)
    if not nm.mass_matrix_regular and pq.size:  # M + γΦ_qᵀΦ_q: the same minimiser on Φ_q q̇ = 0
        weight = weight + (np.linalg.eigvalsh(weight)[-1]
                           / max(np.linalg.norm(pq, 2) ** 2, 1e-300)) * pq.T @ pq
    if pq.size:
        reach = np.linalg.solve(weight, pq.T)  # W⁻¹Φ_qᵀ
        qd = qd - reach @ np.linalg.lstsq(pq @ reach, pq @ qd, rcond=None)[0]
    return q_nat, qd


__all__ = ["NaturalModel", "NaturalOptions", "describe_natural", "natural_kernels",
           "natural_model", "natural_state"]
