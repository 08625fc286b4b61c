"""Static equilibria (symgen.apps.equilibrium: Newton on the generated kernels) against known
ones:

- the double pendulum (examples/models/double_pendulum.yaml: links of 1 kg, 0.5 m, COM at
  mid-length, a 0.5 kg tip at the end, axes along y, hanging along −z at q = 0): the
  gravity torques are g₁ = g (c₁ sin θ₁ + c₂ sin(θ₁ + θ₂)), g₂ = g c₂ sin(θ₁ + θ₂) with
  c₁ = 1·0.25 + 1.5·0.5 = 1.0 and c₂ = 1·0.25 + 0.5·0.5 = 0.5 kg m, so the equilibrium under
  torques τ has sin(θ₁ + θ₂) = τ₂ / (g c₂), sin θ₁ = (τ₁ − τ₂) / (g c₁) (hand-derived); at
  rest it hangs (0, 0) or stands (π, 0);
- a four-bar under gravity in its plane (tests/loop_mechanisms.py, the example's geometry):
  at the solver's equilibrium the potential energy (symgen.reference) is stationary along the
  motion: central differences along the null space of the loop Jacobian, the loops closed by
  the numeric loop closure, no generated code.

Tolerances: residual 1e-10 N·m (the solver's), angles 1e-9 rad (Newton converges
quadratically), dV/ds 1e-8 J/rad (differences of step 1e-5).
"""

from __future__ import annotations

import numpy as np
from loop_mechanisms import four_bar_chain
from paths import EXAMPLES

import symgen
from symgen import reference as ref
from symgen.apps.equilibrium import static_equilibrium
from symgen.loops import LoopClosure

G = 9.81


def test_double_pendulum_equilibria():
    model = symgen.load(EXAMPLES / "double_pendulum.yaml")
    assert np.max(np.abs(static_equilibrium(model, [0.3, -0.2]).q)) <= 1e-9
    up = static_equilibrium(model, [3.0, 0.2]).q
    assert abs(abs(up[0]) - np.pi) <= 1e-9 and abs(up[1]) <= 1e-9
    for tau in ([1.0, 0.5], [-2.0, 0.3]):
        result = static_equilibrium(model, [0.1, 0.1], tau=tau)
        theta1 = np.arcsin((tau[0] - tau[1]) / (G * 1.0))
        theta12 = np.arcsin(tau[1] / (G * 0.5))
        assert result.residual <= 1e-10
        assert np.max(np.abs(result.q - [theta1, theta12 - theta1])) <= 1e-9


def test_four_bar_equilibrium_is_stationary_in_potential_energy():
    model = four_bar_chain(1)
    closure = LoopClosure(model)

    def slope(q: np.ndarray) -> float:
        """dV/ds along the motion (unit tangent of null(G)), by central differences."""
        tangent = np.linalg.svd(np.vstack(closure.jacobians(q)))[2][-1]
        h = 1e-5
        energy = [ref.potential_energy(model, closure.assemble(ref.integrate(model, q, tangent,
                                                                            s)))
                  for s in (h, -h)]
        return (energy[0] - energy[1]) / (2 * h)

    for start in (0.5, 1.5, 2.5):
        q0 = closure.assemble(np.array([start, 0.0, 0.0]))
        assert abs(slope(q0)) > 1e-2  # not an equilibrium to begin with
        result = static_equilibrium(model, q0)
        assert result.residual <= 1e-10
        assert np.max(np.abs(closure.residual(result.q))) <= 1e-10
        assert abs(slope(result.q)) <= 1e-8


def test_wrong_number_of_joint_forces_is_a_clear_error():
    import pytest

    from symgen.errors import SymgenError

    model = symgen.load(EXAMPLES / "double_pendulum.yaml")
    with pytest.raises(SymgenError, match="tau must have 2 entries"):
        static_equilibrium(model, [0.1, 0.1], tau=[1.0, 2.0, 3.0])
