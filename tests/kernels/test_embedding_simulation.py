"""Simulation in minimal coordinates with the embedded kernels, and the growth of their
cost with the number of loops.

**Energy** (marked slow): undamped (τ = 0), gravity on, 2 s, released at rest from the
starts of tests/kernels/test_loop_energy.py (the knee leg from hip 0.5 rad and anterior
link 0.3 rad; the Delta hanging from its unpowered motors near its rest configuration).
State: the independent coordinates and rates (q_R, θ̇_R) only. Classical RK4 on them with
θ̈_R from ``embedded_forward_dynamics``; at every stage the dependent coordinates are solved
from the independent ones by ``dependent_coordinates`` (8 Newton steps seeded by the
previous configuration), so the loops are closed by construction and no projection or
stabilisation is needed. RK4's error is O(h⁴): h = 1 ms, and the run at 2h must show
drift(2h)/drift(h) ≥ 10 (2⁴ = 16 asymptotically), so that drift(h) is the h⁴ term and not
luck. Drift = max_t |E(t) − E(0)| (``energy``, with the recovered full rates) relative to
the largest kinetic energy reached: ≤ 1e-6. Loops: |Φ| ≤ 1e-10 after every step;
``dependent_coordinates``' status reports a regular G_D (pivot ratio > 1e-8) throughout.

**Linear cost**: on a chain of n four-bars in series (tests/loop_mechanisms.py: one local
loop per stage), the embedded articulated-body recursion costs the same number of
operations for every stage after the first: (ops(2n) − ops(n)) / n is constant to 5 %,
for n = 2, 4 (8 and 16 in the slow tier), while the multiplier formulation grows faster
than linearly.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from loop_mechanisms import four_bar_chain
from paths import EXAMPLES
from test_loop_energy import delta_start, knee_start

import symgen
from symgen.ir.counts import op_counts
from symgen.loops import LoopClosure

KERNELS = ["embedded_forward_dynamics", "dependent_coordinates", "loop_constraints", "energy"]
DURATION, STEP = 2.0, 1e-3
DRIFT_MAX, PHI_MAX = 1e-6, 1e-10
STARTS = {"four_bar_knee": knee_start, "delta_robot": delta_start}


@cache
def built(name: str):
    model = symgen.load(EXAMPLES / f"{name}.yaml")
    ks = symgen.generate(model, KERNELS)
    return model, ks, symgen.compile_kernels(ks, vectorize=None)


def simulate(name: str, step: float) -> dict[str, float]:
    """Drift and the worst loop residual and pivot ratio of one run (module docs)."""
    model, ks, lib = built(name)
    ind = list(ks.context.embedding.independent)
    assert model.nq == model.nv  # revolute and prismatic joints: q̇ = v
    q = LoopClosure(model).assemble(STARTS[name](model))
    zero = np.zeros(model.nv)

    def close(q_guess, q_ind):
        q_new = q_guess.copy()
        q_new[ind] = q_ind
        q_new, status = lib.dependent_coordinates(q_new)
        return q_new, status

    def accel(q_full, v_ind):
        a_ind, v_full, _ = lib.embedded_forward_dynamics(q_full, v_ind, zero)
        return a_ind, v_full

    x, v = q[ind].copy(), np.zeros(len(ind))
    _, v_full = accel(q, v)
    energy0 = float(np.sum(lib.energy(q, v_full)))
    worst = {"drift": 0.0, "phi": 0.0, "pivot": 1.0, "kinetic": 0.0}
    for _ in range(int(round(DURATION / step))):
        k1v, _ = accel(q, v)
        k1x = v
        q2, _ = close(q, x + 0.5 * step * k1x)
        k2x = v + 0.5 * step * k1v
        k2v, _ = accel(q2, k2x)
        q3, _ = close(q2, x + 0.5 * step * k2x)
        k3x = v + 0.5 * step * k2v
        k3v, _ = accel(q3, k3x)
        q4, _ = close(q3, x + step * k3x)
        k4x = v + step * k3v
        k4v, _ = accel(q4, k4x)
        x = x + step / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
        v = v + step / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        q, status = close(q4, x)
        _, v_full = accel(q, v)
        energy = lib.energy(q, v_full)  # kinetic, potential, elements (none here)
        worst["kinetic"] = max(worst["kinetic"], float(energy[0]))
        worst["drift"] = max(worst["drift"], abs(float(np.sum(energy)) - energy0))
        worst["phi"] = max(worst["phi"], float(np.max(np.abs(lib.loop_constraints(q)))))
        worst["pivot"] = min(worst["pivot"], float(status[1]))
    worst["drift"] /= worst["kinetic"]
    return worst


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(STARTS))
def test_minimal_coordinate_simulation_conserves_energy(name):
    fine, coarse = simulate(name, STEP), simulate(name, 2 * STEP)
    assert fine["drift"] <= DRIFT_MAX, fine
    assert coarse["drift"] / fine["drift"] >= 10.0, (coarse, fine)
    assert fine["phi"] <= PHI_MAX and fine["pivot"] > 1e-8, fine


def chain_ops(n: int) -> tuple[int, int]:
    """(ops of the embedded articulated-body recursion, ops of the multipliers) of the
    forward dynamics of a chain of n four-bars."""
    ks = symgen.generate(four_bar_chain(n), ["embedded_forward_dynamics",
                                            "forward_dynamics_multipliers"])
    return (ks.alternatives["embedded_forward_dynamics"]["aba"],
            op_counts(ks["forward_dynamics_multipliers"])["total"])


@pytest.mark.parametrize("sizes", [(2, 4, 8), pytest.param((4, 8, 16), marks=pytest.mark.slow)],
                         ids=["2-8", "4-16"])
def test_embedded_cost_grows_linearly_with_the_loops(sizes):
    (small, small_m), (mid, mid_m), (large, large_m) = (chain_ops(n) for n in sizes)
    per_loop = [(mid - small) / (sizes[1] - sizes[0]), (large - mid) / (sizes[2] - sizes[1])]
    assert abs(per_loop[1] - per_loop[0]) <= 0.05 * per_loop[0], per_loop
    # the multipliers' Schur complement and dense LᵀDL of the chain's M grow faster
    assert (large_m - mid_m) / (sizes[2] - sizes[1]) > 1.5 * (mid_m - small_m) / (
        sizes[1] - sizes[0])
    assert large < large_m
