"""Force elements (springs, dampers, actuators) in the closed-loop kernels of joint
coordinates (``constrained_forward_dynamics``, ``constrained_inverse_dynamics``): they
enter as in the natural-coordinate formulation (symgen.formulations.element_forces).

- Andrews' squeezing mechanism (spring and motor; examples/models/andrews_squeezer.yaml)
  against the benchmark's published equations in its seven angles (Hairer & Wanner 1996,
  §VII.7; tests/benchmark_mechanisms.py, numpy only): the published consistent initial
  accelerations, the equations at random assembled states, and the published reference
  solution at t = 0.03 (integrated with the compiled kernel);
- loaded variants of the four-bar (a point spring with its rest length at the zero
  configuration, a spring-damper and a motor on the loop joint, a motor and a spring on
  tree joints), of a slider-crank cut at its prismatic slide (a spring-damper and a motor
  on the prismatic loop joint) and of the RSSR linkage (a spatial point spring-damper):
  the accelerations equal those of the natural-coordinate kernels, which take the same
  force elements, mapped onto the natural coordinates (tests/loop_mapping.py);
- a joint actuator on a coupled joint (the geared four-bar's rotor, q_rotor = 12 q_j1 +
  0.3) reaches its master as 12 F (virtual work);
- actuated inverse dynamics fed back into forward dynamics returns the acceleration.

Tolerances: 1e-9 relative to max(1, |x|∞), as tests/kernels/test_loops_vs_natural.py
(both formulations solve the same index-1 equations with backward-stable factorizations;
κ ε ≤ 2e-10 at condition numbers up to 1e6, asserted there for the same kind of states).
States: seed 0, perturbation 0.2 rad from the zero configuration, assembled.
"""

from __future__ import annotations

import dataclasses
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from benchmark_mechanisms import (
    ANDREWS_JOINTS,
    ANDREWS_T_REF,
    ANDREWS_Y0,
    ANDREWS_Y_REF,
    ANDREWS_YAML,
    ANDREWS_YDD0,
    andrews_accelerations,
    extrapolation_integrate,
)
from cli_runner import run
from loop_mapping import natural_map, relative_error
from loop_mechanisms import geared_four_bar
from paths import EXAMPLES

import symgen
from symgen import reference as ref
from symgen.loops import LoopClosure
from symgen.model.elements import JointActuator
from symgen.natural import NaturalOptions
from symgen.reference.forces import element_forces

TOLERANCE = 1e-9
SEED, PERTURBATION, SAMPLES = 0, 0.2, 4

FOUR_BAR_FORCES = """
forces:
  - {name: pull, type: spring, body_a: ground, point_a: [0.2, 0.3], body_b: coupler,
     point_b: [0.25, 0.05], stiffness: 40, damping: 0.5}
  - {name: pin_spring, type: joint_spring, joint: coupler_rocker, stiffness: 2,
     damping: 0.05, rest: 0.3}
  - {name: pin_motor, type: actuator, joint: coupler_rocker, force: 0.4}
  - {name: crank_motor, type: actuator, joint: crank_joint, force: 0.7}
  - {name: rocker_spring, type: joint_spring, joint: rocker_joint, stiffness: 1.5,
     damping: 0.02, rest: -0.2}
"""

SLIDER_CUT = """
name: slider_cut
plane: xy
bodies:
  - {name: crank, mass: 0.3, com: [0.025, 0], inertia: 6.25e-5}
  - {name: rod, mass: 0.15, com: [0.1, 0], inertia: 5e-4}
  - {name: slider, mass: 0.3, inertia: 6.25e-5}
joints:
  - {name: crank_joint, type: revolute, parent: ground, child: crank, origin: {angle: pi/2}}
  - {name: rod_joint, type: revolute, parent: crank, child: rod,
     origin: {xy: [0.05, 0], angle: -pi/2 - asin(0.25)}}
  - {name: wrist, type: revolute, parent: rod, child: slider,
     origin: {xy: [0.2, 0], angle: asin(0.25)}}
loops:
  - {name: slide, type: prismatic, parent: ground, child: slider, axis: [1, 0],
     origin: {xy: ["sqrt(0.2**2 - 0.05**2)", 0]}}
forces:
  - {name: return_spring, type: joint_spring, joint: slide, stiffness: 300, damping: 2,
     rest: 0.01}
  - {name: piston_force, type: actuator, joint: slide, force: 5}
  - {name: tie, type: spring, body_a: crank, point_a: [0.05, 0], body_b: ground,
     point_b: [0.1, 0.2], stiffness: 80, damping: 0.3, rest_length: 0.1}
  - {name: wrist_spring, type: joint_spring, joint: wrist, stiffness: 0.5}
"""

RSSR_FORCES = """
forces:
  - {name: pull, type: spring, body_a: ground, point_a: [0.1, 0.2, 0.3], body_b: coupler,
     point_b: [0.05, 0.02, 0.01], stiffness: 60, damping: 0.4}
"""


@pytest.fixture(scope="module")
def loaded(tmp_path_factory) -> Path:
    """The directory of the loaded models' YAML files."""
    directory = tmp_path_factory.mktemp("loop_forces")
    (directory / "four_bar_loaded.yaml").write_text(
        (EXAMPLES / "four_bar.yaml").read_text().replace("name: four_bar", "name: four_bar_loaded")
        + FOUR_BAR_FORCES)
    (directory / "slider_cut.yaml").write_text(SLIDER_CUT)
    (directory / "rssr_loaded.yaml").write_text(
        (EXAMPLES / "rssr.yaml").read_text().replace("name: rssr", "name: rssr_loaded")
        + RSSR_FORCES)
    return directory


LOADED = ["four_bar_loaded", "slider_cut", "rssr_loaded"]


@cache
def built(path: Path):
    """(model, natural model, joint kernels, compiled joint and natural kernels)."""
    model = symgen.load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        joint = symgen.generate(model, ["constrained_forward_dynamics", "loop_jacobian"])
    natural = symgen.generate(model, ["nc_accelerations"],
                              options=NaturalOptions(baumgarte=0.0))
    return (model, natural.context.nm, joint, symgen.compile_kernels(joint, vectorize=None),
            symgen.compile_kernels(natural, vectorize=None))


def assembled_states(model, lib, keep, seed: int = SEED, samples: int = SAMPLES, speed=1.0):
    """Assembled q and v in the null space of G (the kept rows ``keep``)."""
    closure = LoopClosure(model)
    rng = np.random.default_rng(seed)
    q0 = ref.neutral_configuration(model)
    out = []
    for _ in range(samples):
        q = closure.assemble(ref.integrate(model, q0, PERTURBATION * rng.normal(size=model.nv),
                                           1.0), tolerance=1e-15)
        _, sigma, vt = np.linalg.svd(lib.loop_jacobian(q)[keep])
        tangent = vt[int(np.sum(sigma > 1e-8 * sigma[0])):].T
        out.append((q, speed * tangent @ rng.normal(size=tangent.shape[1])))
    return out


@pytest.mark.parametrize("name", LOADED)
def test_force_elements_enter_as_in_natural_coordinates(loaded, name):
    model, nm, ks, lib, nlib = built(loaded / f"{name}.yaml")
    keep = list(ks.context.loops.rows)
    assert len(model.force_elements) >= 1
    for q, v in assembled_states(model, lib, keep, speed=3.0):
        r, rd = nm.modeller.coordinates_at(q), nm.modeller.velocities_at(q, v)
        assert np.max(np.abs(nm.phi(r))) <= 1e-12
        b_mat, b = natural_map(model, nm, q, v)
        a, _ = lib.constrained_forward_dynamics(q, v, np.zeros(model.nv))
        natural, _ = nlib.nc_accelerations(r, rd, np.zeros(len(nm.actuated)))
        assert relative_error(b_mat @ a + b, natural) <= TOLERANCE
        # the elements matter at these states (else the comparison would not test them)
        assert np.max(np.abs(element_forces(model, q, v))) > 1e-2


@pytest.mark.parametrize("name", LOADED)
def test_verify_compares_the_elements_with_the_numpy_reference(loaded, name):
    # symgen.reference.forces (numpy, from the reference kinematics) on verify's random,
    # unassembled states, in the saddle-point system of constrained forward dynamics
    result = run("verify", str(loaded / f"{name}.yaml"), "--kernels",
                 "constrained_forward_dynamics")
    assert result.exit_code == 0, result.output
    assert "constrained_forward_dynamics  reference" in result.output


def test_actuator_on_a_coupled_joint_reaches_its_master_by_the_ratio():
    bare = geared_four_bar()
    model = dataclasses.replace(bare, force_elements=(JointActuator("drive", "motor", 0.25),))
    q = LoopClosure(model).assemble(ref.neutral_configuration(model))
    forces = element_forces(model, q, np.zeros(model.nv))
    expected = np.zeros(model.nv)
    expected[model.v_slices["j1"]] = 12.0 * 0.25
    assert np.max(np.abs(forces - expected)) <= 1e-15
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ks = symgen.generate(model, ["constrained_forward_dynamics"])
    lib = symgen.compile_kernels(ks, vectorize=None)
    # the kernel's Q: the same acceleration as τ = Q applied to the model without the element
    bare_ks = symgen.generate(bare, ["constrained_forward_dynamics"])
    bare_lib = symgen.compile_kernels(bare_ks, vectorize=None)
    a, _ = lib.constrained_forward_dynamics(q, np.zeros(model.nv), np.zeros(model.nv))
    a_bare, _ = bare_lib.constrained_forward_dynamics(q, np.zeros(model.nv), expected)
    assert relative_error(a, a_bare) <= 1e-12


# ----------------------------------------------------------------------- Andrews' squeezer


@cache
def andrews():
    model = symgen.load(ANDREWS_YAML)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ks = symgen.generate(model, ["constrained_forward_dynamics",
                                     "constrained_inverse_dynamics", "loop_jacobian"])
    order = [list(model.joint_names).index(n) for n in ANDREWS_JOINTS]
    return model, ks, symgen.compile_kernels(ks, vectorize=None), order


def test_andrews_published_initial_accelerations():
    # at rest in the test set's initial configuration (the YAML's zero) only the spring
    # and the motor act: ÿ0 = (14222.44..., −10666.83..., 0, ...) as published
    model, _, lib, order = andrews()
    a, _ = lib.constrained_forward_dynamics(np.zeros(7), np.zeros(7), np.zeros(7))
    assert relative_error(a[order], ANDREWS_YDD0) <= TOLERANCE


def test_andrews_equations_at_random_assembled_states():
    model, ks, lib, order = andrews()
    for q, v in assembled_states(model, lib, list(ks.context.loops.rows), speed=50.0):
        ydd, _ = andrews_accelerations(ANDREWS_Y0 + q[order], v[order])
        a, _ = lib.constrained_forward_dynamics(q, v, np.zeros(7))
        assert relative_error(a[order], ydd) <= TOLERANCE


def test_andrews_actuated_inverse_dynamics_round_trip():
    # the motor joint beta is the actuated one (the model's actuator element): the torque
    # beyond the declared 0.033 N m that produces a consistent acceleration, fed back
    model, ks, lib, order = andrews()
    for q, v in assembled_states(model, lib, list(ks.context.loops.rows), speed=50.0):
        a, _ = lib.constrained_forward_dynamics(q, v, np.zeros(7))
        tau_act, _ = lib.constrained_inverse_dynamics(q, v, a)
        assert abs(float(tau_act[0])) <= 1e-9 * 0.033
        tau = np.zeros(7)  # 0.01 N m more at the motor than its declared 0.033
        tau[model.v_slices["beta"]] = 0.01
        nudged, _ = lib.constrained_forward_dynamics(q, v, tau)
        tau_act, _ = lib.constrained_inverse_dynamics(q, v, nudged)
        assert abs(float(tau_act[0]) - 0.01) <= 1e-9


def test_andrews_reference_solution_at_t_003():
    # the published solution at t = 0.03 (PSIDE, tolerance 1e-14), integrated with the
    # compiled constrained_forward_dynamics (GBS extrapolation, tolerance 1e-12, the loops
    # closed and the velocities projected onto G v = 0 after each step): positions to 1e-9
    # relative, as the numpy integration of the published equations meets them
    model, ks, lib, order = andrews()
    keep = list(ks.context.loops.rows)
    closure = LoopClosure(model)
    selections = [loop.selection for loop in ks.context.loops.loops]
    zero = np.zeros(7)

    def rhs(_t, x):
        return np.concatenate([x[7:], lib.constrained_forward_dynamics(x[:7], x[7:], zero)[0]])

    def project(_t, x):
        q = closure.least_norm_steps(x[:7], selections, keep, 2, 0.0)
        g = lib.loop_jacobian(q)[keep]
        v = x[7:] - g.T @ np.linalg.solve(g @ g.T, g @ x[7:])
        return np.concatenate([q, v])

    x, _ = extrapolation_integrate(rhs, 0.0, np.zeros(14), ANDREWS_T_REF, after_step=project)
    y = ANDREWS_Y0 + x[:7][order]
    assert np.all(np.abs(y - ANDREWS_Y_REF) <= 1e-9 * np.abs(ANDREWS_Y_REF))
