"""The force elements' generalized forces and potential as kernels (issue 29):

- ``element_forces`` (joint coordinates) against the numpy reference
  (symgen.reference.forces.element_forces) on Andrews' squeezer, the loaded four-bar,
  slider-crank (prismatic loop joint) and RSSR of tests/kernels/test_loop_forces.py, the
  geared four-bar with an actuator on its coupled rotor, and the MJCF gripper arm (joint
  springs, a free tool, couplings); zeros for a model without elements;
- ``energy``'s third entry (the elements' potential) against
  symgen.reference.energy.element_energy (½k(L − L₀)², ½k(θ − rest)², −F θ, written from the
  formulas), and its gradient: Q(q, 0) = −∂V/∂q by central differences (the dampers vanish
  at rest), on tree and loop joints;
- ``nc_energy`` against the joint-coordinate references at the natural coordinates of
  assembled joint states (the natural modeller's conversion), and −∂(V_g + V)/∂q =
  ``nc_forces`` at rest with no joint forces;
- ``nc_joint_values`` continued from ``near`` across two full turns both ways (planar, with
  a joint whose axis is −z, and spatial).

Tolerances: 1e-12 relative to max(1, |x|∞) for values computed by two implementations of
the same closed formulas (rounding of a few hundred operations); 1e-6 for central
differences with h = 1e-6 (truncation h²·V''' ≈ 1e-10 relative, rounding ε|V|/h ≈ 1e-9).
"""

from __future__ import annotations

import dataclasses
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from loop_mapping import relative_error
from loop_mechanisms import geared_four_bar
from paths import EXAMPLES
from test_loop_forces import FOUR_BAR_FORCES, RSSR_FORCES, SLIDER_CUT
from test_natural_planar import double_pendulum
from test_natural_spatial import chain

import symgen
from symgen import reference as ref
from symgen.loops import LoopClosure
from symgen.model.elements import JointActuator, JointSpring
from symgen.natural import NaturalOptions
from symgen.reference.forces import element_forces

TOLERANCE = 1e-12
SEED = 0

LOADED = ["andrews_squeezer", "four_bar_loaded", "slider_cut", "rssr_loaded", "geared_driven"]


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict[str, Path]:
    """Model files by name (the loaded variants written to a temporary directory)."""
    directory = tmp_path_factory.mktemp("element_energy")
    texts = {
        "four_bar_loaded": (EXAMPLES / "four_bar.yaml").read_text().replace(
            "name: four_bar", "name: four_bar_loaded") + FOUR_BAR_FORCES,
        "slider_cut": SLIDER_CUT,
        "rssr_loaded": (EXAMPLES / "rssr.yaml").read_text().replace(
            "name: rssr", "name: rssr_loaded") + RSSR_FORCES,
    }
    out = {"andrews_squeezer": EXAMPLES / "andrews_squeezer.yaml",
           "gripper_arm": EXAMPLES / "gripper_arm.xml"}
    for name, text in texts.items():
        (directory / f"{name}.yaml").write_text(text)
        out[name] = directory / f"{name}.yaml"
    return out


def load(paths: dict[str, Path], name: str) -> symgen.Model:
    if name == "geared_driven":  # an actuator and a spring on the coupled rotor
        return dataclasses.replace(geared_four_bar(), force_elements=(
            JointActuator("drive", "motor", 0.25), JointSpring("twist", "motor", 0.02, 0.0, 0.4)))
    return symgen.load(paths[name])


@cache
def compiled(model: symgen.Model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ks = symgen.generate(model, ["element_forces", "energy"])
    return symgen.compile_kernels(ks, vectorize=None)


def states(model: symgen.Model, count: int = 4, scale: float = 0.3):
    """Random (q, v) near the zero configuration; the loops need not close (Q and V are
    functions of the tree's coordinates)."""
    rng = np.random.default_rng(SEED)
    q0 = ref.neutral_configuration(model)
    return [(ref.integrate(model, q0, scale * rng.normal(size=model.nv), 1.0),
             3.0 * rng.normal(size=model.nv)) for _ in range(count)]


def params_of(model: symgen.Model) -> dict:
    return {"params": [p.default for p in model.parameters]} if model.parameters else {}


@pytest.mark.parametrize("name", [*LOADED, "gripper_arm"])
def test_element_forces_and_energy_match_the_references(paths, name):
    if name == "gripper_arm":
        pytest.importorskip("mujoco")  # the MJCF reader compiles the file with MuJoCo
    model = load(paths, name)
    lib = compiled(model)
    extra = params_of(model)
    assert model.force_elements
    for q, v in states(model):
        got = lib.element_forces(q, v, **extra)
        expected = element_forces(model, q, v)
        assert np.max(np.abs(expected)) > 1e-3  # the elements act at these states
        assert relative_error(got, expected) <= TOLERANCE
        energy = lib.energy(q, v, **extra)
        assert energy.shape == (3,)
        assert relative_error(energy, [ref.kinetic_energy(model, q, v),
                                       ref.potential_energy(model, q),
                                       ref.element_energy(model, q)]) <= TOLERANCE


def test_model_without_elements_gives_zeros():
    model = symgen.load(EXAMPLES / "double_pendulum.yaml")
    lib = compiled(model)
    q, v = np.array([0.3, -0.2]), np.array([1.0, 2.0])
    extra = params_of(model)
    assert np.all(lib.element_forces(q, v, **extra) == 0.0)
    energy = lib.energy(q, v, **extra)
    assert energy[2] == 0.0 and ref.element_energy(model, q) == 0.0
    assert relative_error(energy[:2], [ref.kinetic_energy(model, q, v),
                                       ref.potential_energy(model, q)]) <= TOLERANCE


@pytest.mark.parametrize("name", ["andrews_squeezer", "four_bar_loaded", "slider_cut",
                                  "geared_driven"])
def test_static_element_forces_are_minus_the_potential_gradient(paths, name):
    # models whose joints all have nq = nv = 1, so that ∂/∂q is taken coordinate-wise
    model = load(paths, name)
    lib = compiled(model)
    extra = params_of(model)
    zero, h = np.zeros(model.nv), 1e-6
    for q, _ in states(model, count=3):
        gradient = np.array([
            (lib.energy(q + h * e, zero, **extra)[2] - lib.energy(q - h * e, zero, **extra)[2])
            / (2 * h) for e in np.eye(model.nq)])
        forces = lib.element_forces(q, zero, **extra)
        assert relative_error(-gradient, forces) <= 1e-6, (gradient, forces)


# ------------------------------------------------------------------ natural coordinates
@cache
def natural(model: symgen.Model):
    ks = symgen.generate(model, ["nc_energy", "nc_forces", "nc_joint_values"],
                         options=NaturalOptions())
    return ks.context.nm, symgen.compile_kernels(ks, vectorize=None)


def natural_params(nm) -> dict:
    return {"params": nm.force_parameter_defaults} if nm.force_parameters else {}


def assembled(model: symgen.Model, count: int = 3):
    """Assembled joint states (a model with loop joints) with velocities along the motion
    (G v = 0)."""
    closure = LoopClosure(model)
    out = []
    for q, v in states(model, count, scale=0.2):
        q = closure.assemble(q, tolerance=1e-15)
        _, sigma, vt = np.linalg.svd(np.vstack(closure.jacobians(q)))
        tangent = vt[int(np.sum(sigma > 1e-8 * sigma[0])):].T
        out.append((q, tangent @ (tangent.T @ v)))
    return out


@pytest.mark.parametrize("name", ["andrews_squeezer", "four_bar_loaded", "slider_cut",
                                  "rssr_loaded"])
def test_natural_energy_equals_the_joint_coordinate_energy(paths, name):
    model = load(paths, name)
    nm, lib = natural(model)
    mod = nm.modeller
    for q, v in assembled(model):
        r, rd = mod.coordinates_at(q), mod.velocities_at(q, v)
        assert np.max(np.abs(nm.phi(r))) <= 1e-12
        got = lib.nc_energy(r, rd, **natural_params(nm))
        expected = [ref.kinetic_energy(model, q, v), ref.potential_energy(model, q),
                    ref.element_energy(model, q)]
        assert abs(expected[2]) > 1e-4  # the elements hold energy at these states
        assert relative_error(got, expected) <= 1e-11, (got, expected)


@pytest.mark.parametrize("name", ["four_bar_loaded", "slider_cut", "rssr_loaded"])
def test_natural_static_forces_are_minus_the_potential_gradient(paths, name):
    model = load(paths, name)
    nm, lib = natural(model)
    extra = natural_params(nm)
    zero, h = np.zeros(nm.n), 1e-6
    tau = np.zeros(len(nm.actuated))
    for q, _ in assembled(model, count=2):
        r = nm.modeller.coordinates_at(q)

        def potential(x: np.ndarray) -> float:
            e = lib.nc_energy(x, zero, **extra)
            return float(e[1] + e[2])

        gradient = np.array([(potential(r + h * e) - potential(r - h * e)) / (2 * h)
                             for e in np.eye(nm.n)])
        assert relative_error(-gradient, lib.nc_forces(r, zero, tau, **extra)) <= 1e-6


def turned_axis(model: symgen.Model, joint: str) -> symgen.Model:
    """``model`` with ``joint``'s axis reversed (its angle read with sign −1)."""
    joints = tuple(dataclasses.replace(j, axis=tuple(-x for x in j.axis)) if j.name == joint
                   else j for j in model.joints)
    return dataclasses.replace(model, joints=joints)


@pytest.mark.parametrize("which", ["planar", "planar_reversed", "spatial"])
def test_joint_values_continue_across_full_turns(which):
    model = {"planar": double_pendulum, "planar_reversed": lambda: turned_axis(
        double_pendulum(), "elbow"), "spatial": chain}[which]()
    nm, lib = natural(model)
    mod = nm.modeller
    angles = list(nm.actuated)
    rng = np.random.default_rng(SEED)
    base = ref.random_configuration(model, rng)
    speeds = {name: (1.0 if k % 2 == 0 else -1.5) for k, name in enumerate(angles)}
    near = np.zeros(len(angles))
    # two turns forward (and 3 back for every other joint) in steps of 0.3 rad
    for t in np.arange(0.0, 4 * np.pi + 1e-9, 0.3):
        jq = base.copy()
        for name in angles:
            jq[model.q_slices[name]] += speeds[name] * t
        r, rd = mod.coordinates_at(jq), mod.velocities_at(jq, np.zeros(model.nv))
        values, _ = lib.nc_joint_values(r, rd, near)
        expected = [jq[model.q_slices[name]][0] for name in angles]
        assert relative_error(values, expected) <= TOLERANCE, (t, values, expected)
        near = values
    assert max(abs(float(x)) for x in near) > 4 * np.pi  # the angles left (−π, π]
