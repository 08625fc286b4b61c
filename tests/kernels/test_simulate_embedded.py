"""``simulate(..., method="embedded")``: closed loops in minimal coordinates with the
dependent coordinates closed from a predictor, the branch check and the re-selection of the
independent coordinates (symgen/simulation/embedded_run.py).

- The five-bar from its neutral configuration falls through configurations where each
  choice of two independent joints in turn stops determining the motion (the status pivot
  of G_D G_Dᵀ, relative, falls from 0.9 to 1e-2 within a few 1-ms steps): the run re-selects
  (measured: 5 times in 1 s) and its energy balance converges at fourth order (7.3e-5,
  4.4e-6, 2.7e-7 J at 1, 0.5, 0.25 ms); over its first 0.4 s (before the chaotic motion
  separates any two integrators) it follows the closed-loop RK4 step to 1e-5 rad.
- The four-bar knee (one loop, 3 DOF, no change needed) agrees with the closed-loop step to
  1e-9 over 1 s; Andrews' squeezer reaches the published solution within 1e-6 rad at
  dt = 1e-5 s (measured 1.7e-9).
"""

from __future__ import annotations

import numpy as np
import pytest
from benchmark_mechanisms import (
    ANDREWS_JOINTS,
    ANDREWS_T_REF,
    ANDREWS_Y0,
    ANDREWS_Y_REF,
    ANDREWS_YAML,
)
from paths import EXAMPLES

import symgen


def test_five_bar_reselects_its_independent_coordinates():
    model = symgen.load(EXAMPLES / "five_bar.yaml")
    embedded = symgen.simulate(model, 1.0, 2.5e-4, method="embedded", progress=False)
    assert len(embedded.notes) >= 2 and "independent coordinates" in embedded.notes[0]
    assert np.max(np.abs(embedded.energy_balance)) < 1e-6
    assert embedded.position_residual.max() < 1e-9
    steps = symgen.simulate(model, 0.4, 2.5e-4, method="loop_rk4", progress=False)
    assert np.max(np.abs(embedded.q[: len(steps.t)] - steps.q)) < 1e-5


def test_embedded_agrees_with_the_closed_loop_step_and_the_published_solution():
    knee = symgen.load(EXAMPLES / "four_bar_knee.yaml")
    a = symgen.simulate(knee, 1.0, 1e-3, method="embedded", progress=False)
    b = symgen.simulate(knee, 1.0, 1e-3, method="loop_rk4", progress=False)
    assert np.max(np.abs(a.q - b.q)) < 1e-9
    model = symgen.load(ANDREWS_YAML)
    run = symgen.simulate(model, ANDREWS_T_REF, 1e-5, method="embedded", progress=False,
                          record_every=100)
    order = [model.joint_names.index(name) for name in ANDREWS_JOINTS]
    assert np.max(np.abs(ANDREWS_Y0 + run.q[-1][order] - ANDREWS_Y_REF)) < 1e-6


def test_embedded_needs_a_step_and_loops():
    with pytest.raises(symgen.SymgenError, match="fixed step"):
        symgen.simulate(EXAMPLES / "four_bar.yaml", 0.1, method="embedded")
    with pytest.raises(symgen.SymgenError, match="has none"):
        symgen.simulate(EXAMPLES / "double_pendulum.yaml", 0.1, 1e-3, method="embedded")
