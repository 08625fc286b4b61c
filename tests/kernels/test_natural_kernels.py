"""Generated natural-coordinate kernels: the programs reproduce the numpy reference solvers,
the C compiles without warnings (host and Cortex-M4), and the compiled step simulates the
open planar double pendulum like the spatial-operator dynamics."""

from __future__ import annotations

import shutil
import subprocess
from functools import cache

import numpy as np
import pytest
from paths import ROOT
from test_natural_planar import double_pendulum, rk4_trajectory
from test_natural_spatial import chain

import symgen
from symgen.build.compiler import compile_kernels
from symgen.natural import NaturalOptions, natural_kernels, natural_model
from symgen.reference.natural import (
    StepSettings,
    consistent_velocities,
    lagrange_accelerations,
    trapezoidal_step,
)

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Werror"]
MODELS = ["four_bar", "slider_crank", "double_pendulum", "chain"]


@cache
def model(name: str) -> symgen.Model:
    if name == "double_pendulum":
        return double_pendulum()
    if name == "chain":
        return chain()
    return symgen.load(f"examples/models/{name}.yaml")


@cache
def kernels(name: str, step: float = 1e-3):
    return natural_kernels(model(name), NaturalOptions(step=step))


def state(nm, seed: int):
    rng = np.random.default_rng(seed)
    mod = nm.modeller
    if mod.model.loop_joints:
        q = nm.q0
        qd = consistent_velocities(nm, q, {0: 0.7})
    else:
        jq = symgen.reference.random_configuration(mod.model, rng)
        q = mod.coordinates_at(jq)
        qd = mod.velocities_at(jq, rng.normal(size=mod.model.nv))
    return q, qd


@pytest.mark.parametrize("name", MODELS)
def test_programs_reproduce_the_reference_solvers(name):
    nm, ks = kernels(name)
    q, qd = state(nm, 1)
    np.testing.assert_array_equal(ks.evaluate("nc_mass_matrix")["M"], nm.mass_matrix)
    np.testing.assert_allclose(ks.evaluate("nc_constraints", q=q)["phi"], nm.phi(q), atol=1e-15)
    np.testing.assert_allclose(ks.evaluate("nc_jacobian", q=q)["Phi_q"], nm.phi_q(q), atol=1e-15)
    np.testing.assert_allclose(ks.evaluate("nc_jacobian_dot_qdot", q=q, qd=qd)["phi_q_dot_qd"],
                               nm.phi_q_dot_qdot(q, qd), atol=1e-13)
    tau = np.linspace(-0.5, 0.7, len(nm.actuated))  # joint torques/forces exercised too
    extra = {"tau": tau} if nm.actuated else {}
    np.testing.assert_allclose(ks.evaluate("nc_forces", q=q, qd=qd, **extra)["Q"],
                               nm.generalized_forces(q, qd, tau), atol=1e-13)
    acc = ks.evaluate("nc_accelerations", q=q, qd=qd, **extra)
    expected, lam = lagrange_accelerations(nm, q, qd, 10.0, 10.0, tau)
    np.testing.assert_allclose(acc["qdd"], expected, rtol=1e-11, atol=1e-11)
    step = ks.evaluate("nc_step", q=q, qd=qd, qdd=expected, lam=np.zeros(nm.m), **extra)
    ref = trapezoidal_step(nm, q, qd, expected, StepSettings(h=1e-3), np.zeros(nm.m), tau)
    for got, want in zip(("q_next", "qd_next", "qdd_next"), ref[:3], strict=True):
        np.testing.assert_allclose(step[got], want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
    guess = q + 0.01 * np.random.default_rng(2).normal(size=nm.n)
    assembled = ks.evaluate("nc_assemble", q=guess)["q_assembled"]
    assert np.max(np.abs(nm.phi(assembled))) < 1e-12


@pytest.mark.parametrize("name", ["slider_crank", pytest.param("chain", marks=pytest.mark.slow)])
def test_generated_c_compiles_without_warnings(name, tmp_path):
    _, ks = kernels(name)
    for real in ("double", "float"):
        source = symgen.write_c(ks, tmp_path / real, real=real)[1]
        run = subprocess.run(["gcc", *STRICT, "-O0", "-c", str(source), "-o",
                              str(tmp_path / "k.o")], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[:2000]
        if shutil.which("arm-none-eabi-gcc") and real == "float":
            run = subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb",
                                  "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-Os", *STRICT,
                                  "-c", str(source), "-o", str(tmp_path / "arm.o")],
                                 capture_output=True, text=True)
            assert run.returncode == 0, run.stderr[:2000]


def test_compiled_step_simulates_the_open_double_pendulum(monkeypatch, tmp_path):
    """The generated C step (h = 50 µs baked in) over 2 s: joint angles within 1e-6 rad of
    RK4 on the generated spatial-operator forward dynamics."""
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path / "cache"))
    dp = double_pendulum()
    nm = natural_model(dp)
    _, ks = natural_kernels(dp, NaturalOptions(step=5e-5), nm)
    lib = compile_kernels(ks, flags=("-O1", "-std=c99"))
    jq, jv = np.array([0.3, -0.5]), np.array([0.5, -1.0])
    reference, _ = rk4_trajectory(dp, jq, jv, 2.0, 1e-3, 0.25)
    q, qd = nm.modeller.coordinates_at(jq), nm.modeller.velocities_at(jq, jv)
    tau = np.zeros(len(nm.actuated))
    qdd, _ = lib.nc_accelerations(q, qd, tau)
    lam = np.zeros(nm.m)
    worst = 0.0
    readers = [nm.joint_values[n] for n in dp.joint_names]
    for k in range(40000):
        q, qd, qdd, lam = lib.nc_step(q, qd, qdd, lam, tau)
        if (k + 1) % 20 == 0 and (k + 1) // 20 in reference:
            angles = np.array([read(q) for read in readers])
            diff = (angles - reference[(k + 1) // 20] + np.pi) % (2 * np.pi) - np.pi
            worst = max(worst, float(np.max(np.abs(diff))))
    assert worst <= 1e-6, worst


def test_documentation_example_runs(monkeypatch, tmp_path):
    import re

    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path / "cache"))
    root = ROOT
    monkeypatch.chdir(root)
    text = (root / "docs" / "natural.md").read_text()
    snippet = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    namespace: dict = {}
    exec(compile(snippet, "docs/natural.md", "exec"), namespace)
    assert namespace["nm"].dof == 1


@pytest.mark.parametrize("name", ["double_pendulum", "chain"])
def test_joint_torques_poses_joint_values_and_velocities(name):
    """Joint torques enter by virtual power (accelerations equal the spatial-operator forward
    dynamics with the same torques); poses, joint values and rates, and consistent
    velocities come back exactly."""
    m = model(name)
    nm, ks = kernels(name)
    mod = nm.modeller
    rng = np.random.default_rng(4)
    jq, jv = symgen.reference.random_configuration(m, rng), rng.normal(size=m.nv)
    q, qd = mod.coordinates_at(jq), mod.velocities_at(jq, jv)
    tau = np.array([0.7, -0.4])
    full = np.zeros(m.nv)
    for t, joint in zip(tau, nm.actuated, strict=True):
        full[m.v_slices[joint]] = t
    a = symgen.reference.forward_dynamics(m, jq, jv, full)

    def velocities(dt):
        return mod.velocities_at(symgen.reference.integrate(m, jq, jv + 0.5 * dt * a, dt),
                                 jv + dt * a)

    expected = (velocities(1e-6) - velocities(-1e-6)) / 2e-6
    qdd = ks.evaluate("nc_accelerations", q=q, qd=qd, tau=tau)["qdd"]
    assert np.max(np.abs(qdd - expected)) < 1e-7 * np.max(np.abs(expected))
    poses = ks.evaluate("nc_body_poses", q=q)["poses"]
    fk = symgen.reference.forward_kinematics(m, jq)
    for i, body in enumerate(m.body_names):
        np.testing.assert_allclose(poses[i], fk[body][:3], atol=1e-13)
    joint = np.array([jq[m.q_slices[j]][0] for j in nm.actuated])
    values = ks.evaluate("nc_joint_values", q=q, qd=qd, near=np.zeros(len(joint)))
    wrap = (values["values"] - joint + np.pi) % (2 * np.pi)
    np.testing.assert_allclose(wrap - np.pi, 0, atol=1e-12)
    continued = ks.evaluate("nc_joint_values", q=q, qd=qd, near=joint + 0.5)["values"]
    np.testing.assert_allclose(continued, joint, atol=1e-12)  # within π of near: exact
    np.testing.assert_allclose(values["rates"], [jv[m.v_slices[j]][0] for j in nm.actuated],
                               atol=1e-12)
    if "nc_velocities" in ks.programs:
        zd = [jv[m.v_slices[j]][0] for j in nm.actuated]
        np.testing.assert_allclose(ks.evaluate("nc_velocities", q=q, zd=zd)["qd"], qd,
                                   atol=1e-12)


def test_springs_and_dampers():
    """A spring from the ground to the lower link of the double pendulum: with no damper the
    total energy (kinetic + gravity + ½k(L − L₀)²) is conserved by the step; with a damper
    it decreases."""
    from symgen.formulations.natural.model import Spring

    m = double_pendulum()
    anchor = np.array([0.3, 0.2])

    def run(damping):
        spring = Spring("ground", (0.3, 0.2, 0.0), "lower", (0.3, 0.0, 0.0), 50.0, damping, 0.2)
        nm = natural_model(m, springs=[spring])
        point = nm.modeller.point_expr("lower", (0.3, 0.0, 0.0))[0]
        where = __import__("sympy").lambdify([nm.symbols], point, "numpy")

        def energy(q, qd):
            length = np.linalg.norm(np.asarray(where(q), float).reshape(2) - anchor)
            return 0.5 * qd @ nm.mass_matrix @ qd - nm.forces @ q + 25.0 * (length - 0.2) ** 2

        q, qd, tau = nm.q0, np.zeros(nm.n), np.zeros(2)
        qdd, _ = lagrange_accelerations(nm, q, qd, tau=tau)
        e0, worst, lam = energy(q, qd), 0.0, None
        for _ in range(2000):
            q, qd, qdd, lam = trapezoidal_step(nm, q, qd, qdd, StepSettings(h=5e-4), lam, tau)
            worst = max(worst, abs(energy(q, qd) - e0))
        return e0, energy(q, qd), worst

    e0, _, drift = run(0.0)
    assert drift < 1e-4 * e0
    e0, end, _ = run(2.0)
    assert end < e0 - 0.1
