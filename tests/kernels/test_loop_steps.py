"""The generated closed-loop steps in joint coordinates (``loop_step``, ``loop_step_rk4``,
``loop_project``; symgen/formulations/loop_step.py):

- ``symgen verify`` compares them with the numpy steps of symgen/reference/loop_step.py
  (dense solves, the reference dynamics and the numeric loop closure) on a mechanism with a
  redundant constraint (Bricard's linkage: multipliers compared by their force Gᵀλ) and a
  plain four-bar;
- ``loop_project`` is the kinetic-metric projection: q closed to rounding, v the solution
  of min ½(v' − v)ᵀM(v' − v) subject to G v' = 0 and a that of G a' + Ġ v' = 0, solved here
  as dense KKT systems with the reference mass matrix and the numeric loop closure
  (independent of the augmented-Lagrangian iteration the kernel runs);
- the steps through the 40-loop IFToMM chain and Andrews' squeezer are in
  tests/kernels/test_simulate.py (against published solutions).
"""

from __future__ import annotations

import numpy as np
import pytest
from cli_runner import run
from paths import EXAMPLES

import symgen
import symgen.reference as ref
from symgen.loops import LoopClosure

STEPS = "loop_step,loop_step_rk4,loop_project"


@pytest.mark.parametrize("model", ["bricard", pytest.param("five_bar", marks=pytest.mark.slow)])
def test_verify_passes_on_the_steps(model):
    result = run("verify", str(EXAMPLES / f"{model}.yaml"), "--kernels", STEPS)
    assert result.exit_code == 0, result.output
    assert result.output.count(" ok") >= 3


def test_loop_project_is_the_kinetic_metric_projection():
    """From an assembled configuration of the five-bar moved by 1e-3 rad per joint and a
    random velocity and acceleration (seed 7): |Φ| ≤ 1e-12 after the projection, and v', a'
    equal the dense KKT solutions at the projected q to 1e-10 (relative)."""
    model = symgen.load(EXAMPLES / "five_bar.yaml")
    lib = symgen.compile_kernels(symgen.generate(model, ["loop_project", "loop_constraints"]))
    rng = np.random.default_rng(7)
    analysis = symgen.loops.analyse_loops(model)
    q0 = np.asarray(analysis.reference, float) + 1e-3 * rng.normal(size=model.nq)
    v0 = rng.normal(size=model.nv)
    a0 = rng.normal(size=model.nv)
    q, v, a = (np.asarray(x) for x in lib.loop_project(q0, v0, a0))
    assert np.max(np.abs(lib.loop_constraints(q))) <= 1e-12
    closure = LoopClosure(model)
    rows = list(analysis.rows)
    g = np.vstack([loop.selection @ h for loop, h in zip(
        analysis.loops, closure.jacobians(q), strict=True)])[rows]
    m = ref.mass_matrix(model, q)
    kkt = np.block([[m, g.T], [g, np.zeros((len(g), len(g)))]])
    expected = np.linalg.solve(kkt, np.concatenate([m @ v0, np.zeros(len(g))]))[:model.nv]
    assert np.max(np.abs(v - expected)) <= 1e-10 * max(1.0, np.max(np.abs(expected)))
    gamma = np.concatenate([loop.selection @ b for loop, b in zip(
        analysis.loops, closure.biases(q, v), strict=True)])[rows]
    expected = np.linalg.solve(kkt, np.concatenate([m @ a0, -gamma]))[:model.nv]
    assert np.max(np.abs(a - expected)) <= 1e-10 * max(1.0, np.max(np.abs(expected)))
