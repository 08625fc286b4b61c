"""``symgen.simulate(..., method="natural" | "natural_rk4")``: the compiled natural-coordinate
steps (García de Jalón & Bayo 1994) read back in joint coordinates, against independent
references (tests/benchmark_mechanisms.py, tests/natural_runs.py) and against the
joint-coordinate method. Measured on the 2-core test machine (figures in the tests):

- Andrews' squeezer to t = 0.03 s against the published solution: ``natural_rk4`` at 1e-5 s
  2.7e-9 rad (0.6 s); ``natural`` (the trapezoidal nc_step, second order) 3.0e-4 rad at
  1e-5 s, 3.0e-6 at 1e-6 s and 2.7e-7 at 3e-7 s (7 s, slow tier: the issue's 1e-6 rad);
- the IFToMM double four-bar (N = 2) from its benchmark start over 20 s, the first crank's
  tip against the exact 1-DOF reduction: ``natural`` 4.7e-4 m at 1 ms (the trapezoidal
  rule's error at that step: 1e-4 m is out of its reach there) and 3.0e-5 m at 0.25 ms
  (slow tier); ``natural_rk4`` 5.8e-9 m at 1 ms;
- the heavy top: its spherical joint has no natural joint coordinate to read back: a
  one-line error; the joint → natural map itself (``natural_state``) is checked on it;
- Bricard's redundant linkage over 10 s (slow tier): energy balance 3.4e-4 J with ``natural``
  at the default 1 ms, 5.9e-12 J with ``natural_rk4`` at 0.25 ms;
- a slider-crank with a joint spring-damper, a point spring-damper and an actuator, under
  constant joint forces and a controller: the same motion, work and energy as the
  joint-coordinate method.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from benchmark_mechanisms import (
    ANDREWS_JOINTS,
    ANDREWS_T_REF,
    ANDREWS_Y0,
    ANDREWS_Y_REF,
    ANDREWS_YAML,
    BRICARD_YAML,
    TOP_YAML,
    top_initial_state,
)
from natural_runs import ChainReference
from paths import EXAMPLES
from test_simulate import chain_start

import symgen
from symgen.errors import SymgenError
from symgen.natural import NaturalOptions, natural_model, natural_state
from symgen.reference.energy import kinetic_energy
from symgen.simulation.natural_run import natural_kernel_names


def andrews_error(dt: float, method: str) -> tuple[float, symgen.Trajectory]:
    model = symgen.load(ANDREWS_YAML)
    trajectory = symgen.simulate(model, ANDREWS_T_REF, dt, method=method, progress=False,
                                 record_every=100)
    order = [model.joint_names.index(name) for name in ANDREWS_JOINTS]
    return float(np.max(np.abs(ANDREWS_Y0 + trajectory.q[-1][order] - ANDREWS_Y_REF))), \
        trajectory


def test_andrews_squeezer_natural_coordinates():
    error, trajectory = andrews_error(1e-5, "natural_rk4")
    assert error < 1e-6  # measured 2.7e-9
    assert trajectory.method.startswith("natural_rk4 (nc_step_rk4")
    assert np.max(np.abs(trajectory.energy_balance)) < 1e-8  # the motor's work: 2.6e-10 J
    error, trajectory = andrews_error(1e-5, "natural")
    assert error < 1e-3  # measured 3.0e-4: second order, 1e-6 needs 3e-7 s (below)
    assert trajectory.position_residual.max() < 1e-10


@pytest.mark.slow  # about 7 s: 100,000 steps
def test_andrews_squeezer_trapezoidal_step_to_the_published_bound():
    error, _ = andrews_error(3e-7, "natural")
    assert error < 1e-6  # measured 2.7e-7


def chain_tip_error(trajectory: symgen.Trajectory) -> float:
    reference = ChainReference(2, 20.0, theta0=math.pi / 2, rate0=-1.0)
    theta = math.pi / 2 + trajectory.joint("pivot_0")[:, 0]
    expected = reference.angle(trajectory.t)
    return float(np.max(np.hypot(np.cos(theta) - np.cos(expected),
                                 np.sin(theta) - np.sin(expected))))


def test_double_four_bar_benchmark_natural_coordinates():
    """20 singular passages in 20 s (cranks horizontal)."""
    model, v0 = chain_start(2)
    trapezoidal = symgen.simulate(model, 20.0, method="natural", v0=v0, progress=False,
                                  record_every=10)
    assert "fixed step 0.001 s (the default step)" in trapezoidal.method
    assert chain_tip_error(trapezoidal) < 1e-3  # measured 4.7e-4
    rk4 = symgen.simulate(model, 20.0, 1e-3, method="natural_rk4", v0=v0, progress=False,
                          record_every=10)
    assert chain_tip_error(rk4) < 1e-4  # measured 5.8e-9
    assert rk4.position_residual.max() < 1e-12
    assert np.max(np.abs(rk4.energy_balance)) < 1e-6


@pytest.mark.slow  # about 5 s
def test_double_four_bar_trapezoidal_step_at_a_quarter_millisecond():
    model, v0 = chain_start(2)
    trajectory = symgen.simulate(model, 20.0, 2.5e-4, method="natural", v0=v0,
                                 progress=False, record_every=4)
    assert chain_tip_error(trajectory) < 1e-4  # measured 3.0e-5


def test_heavy_top_spherical_joint_is_refused():
    quat0, omega0 = top_initial_state()
    with pytest.raises(SymgenError, match="1-DOF joints only; joint 'pivot' is spherical"):
        symgen.simulate(TOP_YAML, 2.0, q0=quat0, v0=omega0, method="natural", progress=False)


def test_natural_state_of_a_spherical_joint():
    """The joint → natural map on the top at a tilted, spinning state: on the constraints,
    and the kinetic energy of the joint-coordinate reference."""
    model = symgen.load(TOP_YAML)
    nm = natural_model(model)
    quat = np.array([0.3, -0.2, 0.1, 0.9])
    quat /= np.linalg.norm(quat)
    omega = np.array([1.5, -0.7, 30.0])
    q, qd = natural_state(model, quat, omega, nm)
    assert np.max(np.abs(nm.phi(q))) < 1e-12
    assert np.max(np.abs(nm.phi_q(q) @ qd)) < 1e-10
    assert 0.5 * qd @ nm.mass_matrix @ qd == pytest.approx(
        kinetic_energy(model, quat, omega), rel=1e-12)


@pytest.mark.slow  # about 20 s: two generations of the 24-coordinate model, 50,000 steps
def test_bricard_energy_balance_natural_coordinates():
    trapezoidal = symgen.simulate(BRICARD_YAML, 10.0, method="natural", progress=False,
                                  record_every=10)
    assert np.max(np.abs(trapezoidal.v)) > 1.0  # it moves
    assert np.max(np.abs(trapezoidal.energy_balance)) < 1e-3  # measured 3.4e-4 J
    rk4 = symgen.simulate(BRICARD_YAML, 10.0, 2.5e-4, method="natural_rk4", progress=False,
                          record_every=40)
    assert np.max(np.abs(rk4.energy_balance)) < 1e-9  # measured 5.9e-12 J
    assert rk4.position_residual.max() < 1e-12 and not rk4.notes[1:]


SPRINGS = """
forces:
  - {name: crank_spring, type: joint_spring, joint: crank_joint, stiffness: 0.5,
     damping: 0.02, rest: 0.3}
  - {name: piston_spring, type: spring, body_a: ground, point_a: [0.4, 0.0], body_b: slider,
     point_b: [0, 0], stiffness: 40.0, damping: 0.5}
  - {name: push, type: actuator, joint: slider_joint, force: 2.0}
"""


def test_forces_match_the_joint_coordinate_method(tmp_path):
    """A slider-crank (revolute and prismatic joints) with dampers, springs, an actuator,
    constant joint forces and a controller, started with an inconsistent v0 (projected
    mass-orthogonally by both methods: the same velocities): the natural run's motion,
    work and energy are the joint-coordinate run's (adaptive, 1e-10)."""
    path = tmp_path / "slider_crank_springs.yaml"
    path.write_text((EXAMPLES / "slider_crank.yaml").read_text() + SPRINGS)
    model = symgen.load(path)

    def controller(t, q, v):
        return np.array([0.2 * math.sin(30 * t) - 0.05 * v[0], 0.0, 0.1 * math.cos(2 * t)])

    for tau, bound in ((np.array([0.1, 0.0, -0.3]), 1e-10), (controller, 1e-6)):
        reference = symgen.simulate(model, 0.5, v0=[5.0, 0.0, 0.0], tau=tau, progress=False)
        run = symgen.simulate(model, 0.5, 1e-4, v0=[5.0, 0.0, 0.0], tau=tau,
                              method="natural_rk4", progress=False, record_every=50)
        assert np.max(np.abs(run.v[0] - reference.v[0])) < 1e-10  # measured 4.8e-12
        assert np.max(np.abs(run.q[-1] - reference.q[-1])) < bound  # 1.2e-12, 1.3e-7
        assert abs(reference.work[-1]) > 5e-4  # 1.1e-2 J, -7.0e-4 J
        # the dampers' power by the trapezoidal rule: 5.4e-9 J, 3.9e-8 J
        assert run.work[-1] == pytest.approx(reference.work[-1], abs=1e-7)
        assert np.max(np.abs(run.energy_balance)) < 1e-7  # 1e-8, 4.2e-9
    run = symgen.simulate(model, 0.5, 1e-4, v0=[5.0, 0.0, 0.0], method="natural",
                          progress=False, record_every=50)
    reference = symgen.simulate(model, 0.5, v0=[5.0, 0.0, 0.0], progress=False)
    assert np.max(np.abs(run.q[-1] - reference.q[-1])) < 1e-7  # measured 3.1e-9
    assert reference.work[-1] < -1e-3  # the dampers dissipate
    assert run.work[-1] == pytest.approx(reference.work[-1], rel=1e-6)


def test_given_kernels_and_bad_arguments():
    model, v0 = chain_start(2)
    kernels = symgen.compile_kernels(
        symgen.generate(model, natural_kernel_names(model, "natural"),
                        NaturalOptions(step=5e-3)), vectorize=None)
    run = symgen.simulate(model, 0.1, method="natural", v0=v0, kernels=kernels,
                          progress=False)
    assert len(run.t) == 21 and "fixed step 0.005 s" in run.method
    for kwargs, message in (({"dt": 1e-3, "kernels": kernels}, "baked in"),
                            ({"dt": 0.03}, "whole number of steps"),
                            ({"tau": [1.0, 2.0]}, "expected nv"),
                            ({"method": "natural_euler"}, "natural_rk4")):
        with pytest.raises(SymgenError, match=message):
            symgen.simulate(model, 0.1, **{"method": "natural", **kwargs})
    slider = symgen.load(EXAMPLES / "slider_crank.yaml")
    with pytest.raises(SymgenError, match="bake parameter 'm_piston'"):
        symgen.simulate(slider, 0.01, method="natural", params=[0.5])
