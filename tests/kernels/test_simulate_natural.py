"""``symgen.simulate(..., method="natural" | "natural_rk4" | "natural_trapezoidal")``: the
compiled natural-coordinate steps (García de Jalón & Bayo 1994) read back in joint
coordinates, against independent references (tests/benchmark_mechanisms.py,
tests/natural_runs.py) and against the joint-coordinate method. ``"natural"`` is
``nc_step_rk4`` (by step doubling without ``dt``), ``"natural_trapezoidal"`` ``nc_step``.
Measured on the 2-core test machine (figures in the tests):

- Andrews' squeezer to t = 0.03 s against the published solution: ``natural`` at its
  defaults 2.1e-7 rad (421 steps); ``natural_trapezoidal`` (second order) 3.0e-4 rad at
  1e-5 s, 3.0e-6 at 1e-6 s and 2.7e-7 at 3e-7 s (7 s, slow tier: the issue's 1e-6 rad);
- the IFToMM double four-bar (N = 2) from its benchmark start over 20 s, the first crank's
  tip against the exact 1-DOF reduction: ``natural_trapezoidal`` 4.7e-4 m at 1 ms (the
  trapezoidal rule's error at that step: 1e-4 m is out of its reach there) and 3.0e-5 m at
  0.25 ms (slow tier); ``natural`` (augmented-Lagrangian stages, through the 20 singular
  positions) 5.9e-6 m at 1 ms and 9.6e-7 m at 0.25 ms; the 40-loop chain (slow tier)
  1.1e-5 m at 1 ms and 1.1e-7 m at 0.25 ms;
- the heavy top (a spherical joint, read back from the bodies' poses) over 2 s against
  Euler's equations: ``natural`` at its defaults 1.2e-7 in the quaternion, 1.7e-7 rad/s in
  ω, at 0.5 ms 3.3e-7 and 4.7e-7; ``natural_trapezoidal`` at 1 ms 1.0e-2, the trapezoidal
  rule's phase lag; a free base with a revolute arm and a spherical wrist: read back
  exactly, and ``natural_trapezoidal`` at 1 ms within 1.6e-5 of the tree forward dynamics
  over 1 s; a universal joint is refused with a one-line error;
- Bricard's redundant linkage over 10 s (slow tier): energy balance 4.3e-7 J with
  ``natural`` at its defaults, 4.0e-7 J at 1 ms and 1.3e-8 J at 0.5 ms, 3.4e-4 J with
  ``natural_trapezoidal`` at 1 ms;
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
    top_reference,
)
from natural_runs import ChainReference
from paths import EXAMPLES
from test_simulate import chain_error, chain_start

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
    """At the defaults (the RK4 step by step doubling, tolerance 1e-10) within the issue's
    1e-6 rad; the trapezoidal step at 1e-5 s second order, far from it."""
    error, trajectory = andrews_error(None, "natural")
    assert error < 1e-6  # measured 2.1e-7
    assert trajectory.method.startswith("natural (nc_step_rk4")
    assert "step doubling" in trajectory.method
    assert np.max(np.abs(trajectory.energy_balance)) < 1e-7  # the motor's work: 1.6e-8 J
    error, trajectory = andrews_error(1e-5, "natural_trapezoidal")
    assert error < 1e-3  # measured 3.0e-4: second order, 1e-6 needs 3e-7 s (below)
    assert trajectory.position_residual.max() < 1e-10


@pytest.mark.slow  # about 7 s: 100,000 steps
def test_andrews_squeezer_trapezoidal_step_to_the_published_bound():
    error, _ = andrews_error(3e-7, "natural_trapezoidal")
    assert error < 1e-6  # measured 2.7e-7


def chain_tip_error(trajectory: symgen.Trajectory) -> float:
    reference = ChainReference(2, 20.0, theta0=math.pi / 2, rate0=-1.0)
    theta = math.pi / 2 + trajectory.joint("pivot_0")[:, 0]
    expected = reference.angle(trajectory.t)
    return float(np.max(np.hypot(np.cos(theta) - np.cos(expected),
                                 np.sin(theta) - np.sin(expected))))


def test_double_four_bar_benchmark_natural_coordinates():
    """20 singular passages in 20 s (cranks horizontal): the trapezoidal step at its default
    1 ms; the default natural method (the RK4 step) at 1 ms within the benchmark's 1e-4 m
    and closer at 0.25 ms (with exact saddle-point stages it did not converge: 5.7e-9,
    6.4e-7 and 4.8e-7 m at 1, 0.5 and 0.25 ms)."""
    model, v0 = chain_start(2)
    trapezoidal = symgen.simulate(model, 20.0, method="natural_trapezoidal", v0=v0,
                                  progress=False, record_every=10)
    assert "fixed step 0.001 s (the default step)" in trapezoidal.method
    assert chain_tip_error(trapezoidal) < 1e-3  # measured 4.7e-4
    rk4 = symgen.simulate(model, 20.0, 1e-3, method="natural", v0=v0, progress=False,
                          record_every=10)
    coarse = chain_tip_error(rk4)
    assert coarse < 1e-4  # measured 5.9e-6
    assert rk4.position_residual.max() < 1e-12  # measured 2.8e-16
    assert np.max(np.abs(rk4.energy_balance)) < 5e-5  # measured 5.2e-6 J
    fine = symgen.simulate(model, 20.0, 2.5e-4, method="natural", v0=v0, progress=False,
                           record_every=40)
    assert chain_tip_error(fine) < coarse / 3  # measured 9.6e-7: 6.1 times less


@pytest.mark.slow  # about 35 s; 3 minutes with a cold kernel cache (a minute per h to compile)
def test_forty_loop_chain_benchmark_natural_coordinates():
    """The IFToMM benchmark itself (N = 40, 20 s): within its 1e-4 m at 1 ms and converging
    (the exact saddle-point stages: 1.4e-6, 3.4e-7, 1.6e-8 m from this start, but 5.1e-5,
    1.2e-5, 8.3e-6, 2.2e-6, 2.1e-5 m from the docs' start at h = 1 ms ... 62.5 µs)."""
    coarse = chain_error(40, 1e-3, "natural")
    assert coarse < 1e-4  # measured 1.1e-5
    assert chain_error(40, 2.5e-4, "natural") < coarse / 10  # measured 1.1e-7


@pytest.mark.slow  # about 5 s
def test_double_four_bar_trapezoidal_step_at_a_quarter_millisecond():
    model, v0 = chain_start(2)
    trajectory = symgen.simulate(model, 20.0, 2.5e-4, method="natural_trapezoidal", v0=v0,
                                 progress=False, record_every=4)
    assert chain_tip_error(trajectory) < 1e-4  # measured 3.0e-5


UNIVERSAL_YAML = """
name: universal_pendulum
bodies:
  - {name: bob, mass: 1.0, com: [0, 0, -0.3], inertia: [0.01, 0.01, 0.002]}
joints:
  - {name: cardan, type: universal, parent: ground, child: bob, axis: [1, 0, 0],
     axis2: [0, 1, 0]}
"""


def test_joints_without_read_back_are_refused(tmp_path):
    """A universal joint has no read-back from natural coordinates (1-DOF, spherical and
    free joints have); a joint force on a spherical joint has no natural-coordinate input.
    Both one-line errors, before any kernel is generated."""
    path = tmp_path / "universal.yaml"
    path.write_text(UNIVERSAL_YAML)
    with pytest.raises(SymgenError, match="1-DOF, spherical and free joints only; joint "
                                          "'cardan' is universal"):
        symgen.simulate(path, 0.1, method="natural", progress=False)
    quat0, omega0 = top_initial_state()
    with pytest.raises(SymgenError, match="tau on joint 'pivot' is not zero"):
        symgen.simulate(TOP_YAML, 0.1, q0=quat0, v0=omega0, tau=[0.0, 0.0, 0.1],
                        method="natural", progress=False)


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


@pytest.mark.slow  # about 15 s; 90 s with a cold kernel cache (three 24-coordinate builds)
def test_bricard_energy_balance_natural_coordinates():
    """A redundant constraint: the default natural method (the RK4 step by step doubling)
    within the issue's 1e-6 J; the RK4 step within it at 1 ms too (with exact saddle-point
    stages it left the constraints at 0.55 s there), and its error falls at least as fast
    as fourth order (∝ h⁵ measured: the force the augmented-Lagrangian iteration lets
    through along the nearly dependent constraint at the stage states, ∝ ρh⁵)."""
    default = symgen.simulate(BRICARD_YAML, 10.0, method="natural", progress=False,
                              record_every=10)
    assert "step doubling" in default.method
    assert default.position_residual.max() < 1e-12  # measured 2.2e-16
    assert np.max(np.abs(default.energy_balance)) < 1e-6  # measured 4.3e-7 J
    trapezoidal = symgen.simulate(BRICARD_YAML, 10.0, method="natural_trapezoidal",
                                  progress=False, record_every=10)
    assert np.max(np.abs(trapezoidal.v)) > 1.0  # it moves
    assert np.max(np.abs(trapezoidal.energy_balance)) < 1e-3  # measured 3.4e-4 J
    errors = []
    for dt in (1e-3, 5e-4):
        rk4 = symgen.simulate(BRICARD_YAML, 10.0, dt, method="natural", progress=False,
                              record_every=10)
        assert rk4.position_residual.max() < 1e-12 and not rk4.notes[1:]  # 2.2e-16
        errors.append(float(np.max(np.abs(rk4.energy_balance))))
    assert errors[0] < 1e-6  # measured 4.0e-7 J
    assert errors[1] < errors[0] / 16  # measured 1.3e-8 J: 32 times less


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
    work and energy are the joint-coordinate run's ("projected": adaptive Dormand-Prince,
    tolerance 1e-10; the default "loop_rk4" by step doubling is 4e-10 off here)."""
    path = tmp_path / "slider_crank_springs.yaml"
    path.write_text((EXAMPLES / "slider_crank.yaml").read_text() + SPRINGS)
    model = symgen.load(path)

    def controller(t, q, v):
        return np.array([0.2 * math.sin(30 * t) - 0.05 * v[0], 0.0, 0.1 * math.cos(2 * t)])

    # bounds at 0.1 ms and by step doubling (tolerance 1e-10 per step, ~10³ steps)
    for tau, bound, adaptive_bound in ((np.array([0.1, 0.0, -0.3]), 1e-10, 1e-7),
                                       (controller, 1e-6, 1e-6)):
        reference = symgen.simulate(model, 0.5, v0=[5.0, 0.0, 0.0], tau=tau, progress=False,
                                    method="projected")
        run = symgen.simulate(model, 0.5, 1e-4, v0=[5.0, 0.0, 0.0], tau=tau,
                              method="natural_rk4", progress=False, record_every=50)
        assert np.max(np.abs(run.v[0] - reference.v[0])) < 1e-10  # measured 4.8e-12
        assert np.max(np.abs(run.q[-1] - reference.q[-1])) < bound  # 1.2e-12, 1.3e-7
        assert abs(reference.work[-1]) > 5e-4  # 1.1e-2 J, -7.0e-4 J
        # the dampers' power by the trapezoidal rule: 5.4e-9 J, 3.9e-8 J
        assert run.work[-1] == pytest.approx(reference.work[-1], abs=1e-7)
        assert np.max(np.abs(run.energy_balance)) < 1e-7  # 1e-8, 4.2e-9
        # the default: step doubling (the work over two halves, the dampers' by Simpson)
        adaptive = symgen.simulate(model, 0.5, v0=[5.0, 0.0, 0.0], tau=tau, progress=False,
                                   method="natural")
        assert "step doubling" in adaptive.method
        assert np.max(np.abs(adaptive.q[-1] - reference.q[-1])) < adaptive_bound  # 4.0e-9, 7e-8
        assert np.max(np.abs(adaptive.energy_balance)) < 1e-7  # 2.0e-9, 1.6e-8
    run = symgen.simulate(model, 0.5, 1e-4, v0=[5.0, 0.0, 0.0], method="natural_trapezoidal",
                          progress=False, record_every=50)
    reference = symgen.simulate(model, 0.5, v0=[5.0, 0.0, 0.0], progress=False,
                                method="projected")
    assert np.max(np.abs(run.q[-1] - reference.q[-1])) < 1e-7  # measured 3.1e-9
    assert reference.work[-1] < -1e-3  # the dampers dissipate
    assert run.work[-1] == pytest.approx(reference.work[-1], rel=1e-6)


def test_given_kernels_and_bad_arguments():
    model, v0 = chain_start(2)
    kernels = symgen.compile_kernels(
        symgen.generate(model, natural_kernel_names(model, "natural_trapezoidal"),
                        NaturalOptions(step=5e-3)), vectorize=None)
    run = symgen.simulate(model, 0.1, method="natural_trapezoidal", v0=v0, kernels=kernels,
                          progress=False)
    assert len(run.t) == 21 and "fixed step 0.005 s" in run.method
    rk4 = symgen.compile_kernels(  # the RK4 step takes dt: any step, or step doubling
        symgen.generate(model, natural_kernel_names(model, "natural"), NaturalOptions()),
        vectorize=None)
    run = symgen.simulate(model, 0.1, 2e-3, method="natural", v0=v0, kernels=rk4,
                          progress=False)
    assert len(run.t) == 51 and "fixed step 0.002 s" in run.method
    with pytest.raises(SymgenError, match="lack nc_step_rk4"):
        symgen.simulate(model, 0.1, method="natural", v0=v0, kernels=kernels)
    for kwargs, message in (({"dt": 1e-3, "kernels": kernels,
                              "method": "natural_trapezoidal"}, "baked in"),
                            ({"dt": 0.03, "method": "natural_trapezoidal"},
                             "whole number of steps"),
                            ({"dt": 0.03}, "whole number of steps"),
                            ({"tau": [1.0, 2.0]}, "expected nv"),
                            ({"method": "natural_euler"}, "natural_rk4")):
        with pytest.raises(SymgenError, match=message):
            symgen.simulate(model, 0.1, **{"method": "natural", **kwargs})
    slider = symgen.load(EXAMPLES / "slider_crank.yaml")
    with pytest.raises(SymgenError, match="bake parameter 'm_piston'"):
        symgen.simulate(slider, 0.01, method="natural", params=[0.5])


# ---------------------------------------------------------------------------------------------
# spherical and free joints: read back from the bodies' poses (symgen.simulation.natural_readback)


def test_heavy_top_natural_coordinates():
    """The heavy top (a spherical joint) over 2 s against Euler's equations about the pivot
    (``top_reference``, 1e-12): the joint quaternion (sign-aligned) and the body angular
    velocity (|ω| ≈ 50 rad/s). ``natural_rk4`` is fourth order: 7.9e-6 / 1.1e-5 rad/s at
    1 ms, 3.3e-7 / 4.7e-7 at 0.5 ms, 1.5e-8 / 2.3e-8 at 0.25 ms. ``natural`` (nc_step) is
    second order, its error the trapezoidal rule's phase lag (ωh)²/12 per radian of spin
    (docs/natural.md), over ωT = 100 rad a turn of (ωh)²ωT/12 about the spin axis, i.e. half
    that in the quaternion: 1.04e-2 predicted at 1 ms; measured 1.04e-2 (ω: 1.1e-2 rad/s),
    2.6e-3 at 0.5 ms, 6.5e-4 at 0.25 ms, 1.0e-4 at 0.1 ms."""
    quat_ref, omega_ref, _ = top_reference(2.0)
    quat0, omega0 = top_initial_state()

    def errors(trajectory: symgen.Trajectory) -> tuple[float, float]:
        quat = trajectory.q[-1] * np.sign(trajectory.q[-1] @ quat_ref)
        return (float(np.max(np.abs(quat - quat_ref))),
                float(np.max(np.abs(trajectory.v[-1] - omega_ref))))

    default = symgen.simulate(TOP_YAML, 2.0, q0=quat0, v0=omega0, method="natural",
                              progress=False)
    assert "step doubling" in default.method
    quat_error, omega_error = errors(default)
    assert quat_error < 1e-6 and omega_error < 1e-6  # measured 1.2e-7 and 1.7e-7 rad/s
    rk4 = symgen.simulate(TOP_YAML, 2.0, 5e-4, q0=quat0, v0=omega0, method="natural_rk4",
                          progress=False, record_every=20)
    quat_error, omega_error = errors(rk4)
    assert quat_error < 1e-6 and omega_error < 1e-6  # measured 3.3e-7 and 4.7e-7 rad/s
    assert np.max(np.abs(rk4.q[0] - quat0)) < 1e-14  # the start read back
    assert np.max(np.abs(rk4.v[0] - omega0)) < 1e-12
    assert np.all(np.sum(rk4.q[1:] * rk4.q[:-1], axis=1) > 0)  # the sign continued
    assert np.max(np.abs(rk4.energy_balance)) < 1e-6  # measured 1.4e-7 J
    assert rk4.position_residual.max() < 1e-12
    assert "read back by nc_body_poses" in rk4.notes[0]
    trapezoidal = symgen.simulate(TOP_YAML, 2.0, q0=quat0, v0=omega0,
                                  method="natural_trapezoidal", progress=False,
                                  record_every=20)
    assert "fixed step 0.001 s" in trapezoidal.method
    h, spin = 1e-3, omega0[2]
    phase = (spin * h) ** 2 / 12 * spin * 2.0 / 2  # 1.04e-2
    quat_error, omega_error = errors(trapezoidal)
    assert 0.5 * phase < quat_error < 1.5 * phase  # measured 1.04e-2
    assert omega_error < 2e-2  # measured 1.1e-2 rad/s
    assert np.max(np.abs(trapezoidal.energy_balance)) < 1e-4  # measured 2.7e-5 J


FLOATING_YAML = """
name: floating_chain
gravity: [0, 0, -9.81]
bodies:
  - {name: base, mass: 2.0, com: [0.05, -0.02, 0.01], inertia: [0.02, 0.05, 0.04]}
  - {name: arm, mass: 0.7, com: [0.15, 0, 0], inertia: [0.001, 0.006, 0.006]}
  - {name: ball, mass: 0.4, com: [0, 0.02, 0.08], inertia: [0.002, 0.003, 0.0015]}
joints:
  - {name: root, type: free, parent: ground, child: base,
     origin: {xyz: [0.1, 0.2, 1.0], rpy: [0.2, -0.1, 0.4]}}
  - {name: elbow, type: revolute, parent: base, child: arm, axis: [0, 1, 0],
     origin: {xyz: [0.1, 0, 0.05], rpy: [0, 0, 0.3]}}
  - {name: wrist, type: spherical, parent: arm, child: ball,
     origin: {xyz: [0.3, 0, 0], rpy: [0.5, 0.2, 0]}}
"""


def floating_chain(tmp_path) -> symgen.Model:
    """A free body carrying a revolute arm and a spherical wrist, every joint placed off
    the identity (q: root 0:7, elbow 7, wrist 8:12)."""
    path = tmp_path / "floating_chain.yaml"
    path.write_text(FLOATING_YAML)
    return symgen.load(path)


def test_free_and_spherical_joints_read_back_exactly(tmp_path):
    """A joint state mapped to natural coordinates (``natural_state``) and read back by the
    compiled ``nc_body_poses`` and ``nc_joint_values``: q and v again to rounding, with
    quaternions that take each branch of Shepperd's extraction (each of x, y, z, w the
    largest) and either sign (the read continues the start's)."""
    from symgen.formulations.natural.registration import NaturalContext
    from symgen.simulation.natural_readback import JointReadback, rotation_quaternion

    model = floating_chain(tmp_path)
    nm = natural_model(model)
    opts = NaturalOptions()
    lib = symgen.compile_kernels(
        symgen.generate(model, ["nc_joint_values", "nc_body_poses"], opts,
                        context=NaturalContext(model.resolve(), nm, opts)), vectorize=None)
    readback = JointReadback(model, nm, "natural")
    rng = np.random.default_rng(29)
    for k in range(8):
        quats = []
        for _ in range(2):
            quat = 0.3 * rng.normal(size=4)
            quat[k % 4] += 1.0
            quats.append((-1) ** (k // 4) * quat / np.linalg.norm(quat))
        q = np.concatenate([rng.normal(size=3), quats[0], [rng.normal()], quats[1]])
        v = rng.normal(size=model.nv) * 3
        readback.bind(lib, q)
        q_back, v_back = readback.read(*natural_state(model, q, v, nm))
        assert np.max(np.abs(q_back - q)) < 1e-13
        assert np.max(np.abs(v_back - v)) < 1e-13
    half_turn = rotation_quaternion(np.diag([-1.0, 1.0, -1.0]))  # w = 0: the y branch
    assert np.max(np.abs(half_turn - [0.0, 1.0, 0.0, 0.0])) == 0.0


def test_floating_chain_natural_coordinates(tmp_path):
    """Free, revolute and spherical joints in one run: ``natural_trapezoidal`` (nc_step) at
    1 ms over 1 s against the tree forward dynamics (adaptive, 1e-12). Second order: q
    within 1.6e-5 (4.0e-6 at 0.5 ms), v within 2.6e-4 (6.5e-5); ``natural`` (the RK4 step;
    not run here: its 27-coordinate step compiles in about 35 s) 6.9e-11 and 1.5e-9 at
    1 ms."""
    model = floating_chain(tmp_path)

    def unit(x):
        return np.asarray(x, dtype=float) / np.linalg.norm(x)

    q0 = np.concatenate([[0.05, -0.1, 0.2], unit([0.1, -0.2, 0.3, 0.9]), [0.4],
                         unit([-0.3, 0.1, 0.2, 0.8])])
    v0 = np.array([1.0, -2.0, 3.0, 0.5, 0.2, -0.3, 2.0, 4.0, -1.0, 2.5])
    reference = symgen.simulate(model, 1.0, q0=q0, v0=v0, method="tree", tolerance=1e-12,
                                progress=False)
    run = symgen.simulate(model, 1.0, 1e-3, q0=q0, v0=v0, method="natural_trapezoidal",
                          progress=False, record_every=10)
    assert "read back by nc_joint_values and nc_body_poses" in run.notes[0]
    assert np.max(np.abs(run.q[0] - q0)) < 1e-13 and np.max(np.abs(run.v[0] - v0)) < 1e-13
    q = run.q[-1].copy()
    for quat in (slice(3, 7), slice(8, 12)):
        q[quat] *= np.sign(q[quat] @ reference.q[-1][quat])
    assert np.max(np.abs(q - reference.q[-1])) < 5e-5  # measured 1.6e-5
    assert np.max(np.abs(run.v[-1] - reference.v[-1])) < 1e-3  # measured 2.6e-4
    assert np.max(np.abs(run.energy_balance)) < 1e-5  # measured 3.4e-6 J
