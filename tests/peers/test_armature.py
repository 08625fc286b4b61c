"""Joint armature (rotor inertia reflected on a joint, Pinocchio's ``model.armature``):
definition, reference vs Pinocchio, generated kernels vs reference, energy conservation,
validation, YAML and builder.

Definition (a rotor of inertia J_a spinning at the joint rate, its reaction on the parent):
τ = M(q) a + h(q, v) + J_a ∘ a, so M gains diag(J_a), the bias and gravity forces do not
change, and the kinetic energy gains ½ Σ J_a v² (= ½ vᵀ M v with the armature in M).
Pinocchio 4's computeKineticEnergy adds Σ_j J_a,j ∘ joint_v(j)², which is ½ Σ J_a v² for its
axis-aligned joints (checked on the Panda below) but not for its unaligned revolute and
helical joints (there joint_v is not the joint rate), so on random trees the kinetic energy
is compared with Pinocchio's ½ vᵀ M v, M from crba.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from kernel_checks import TOLERANCE, check_kernel_set
from random_models import build, pin_model_from_spec, random_spec, random_state

import symgen.reference as ref
from symgen import generate
from symgen.apps.verify import random_states, relative_error
from symgen.errors import ModelError
from symgen.generate import Options
from symgen.io import load
from symgen.io.builder import ModelBuilder
from symgen.io.robots import robot_urdf
from symgen.model import JointType
from symgen.peers.pinocchio import Bridge, pin_model_from_symgen

KERNELS = [
    "inverse_dynamics",
    "bias_forces",
    "gravity_forces",
    "mass_matrix",
    "forward_dynamics_aba",
    "forward_dynamics_ltdl",
    "mass_matrix_inverse",
    "energy",
]


def spec_with_armature(seed: int) -> dict:
    """A random tree (every joint type) where most moving joints get an armature: one value
    for every DOF or one per DOF."""
    spec = random_spec(seed)
    rng = np.random.default_rng(seed + 7919)
    for joint in spec["joints"]:
        nv = JointType(joint["type"]).nv
        if nv == 0 or rng.random() < 0.2:
            continue
        if nv > 1 and rng.random() < 0.5:
            joint["armature"] = rng.uniform(0.01, 0.5, nv).tolist()
        else:
            joint["armature"] = float(rng.uniform(0.01, 0.5))
    return spec


def without_armature(model):
    return dataclasses.replace(
        model, joints=tuple(dataclasses.replace(j, armature=()) for j in model.joints)
    )


def sym(m: np.ndarray) -> np.ndarray:
    return np.triu(m) + np.triu(m, 1).T  # Pinocchio fills the upper triangle only


# --------------------------------------------------------------------------- definition
@pytest.mark.parametrize("seed", range(4))
def test_reference_follows_the_definition(seed):
    """Against the same model without armature: M + diag(J_a), τ + J_a ∘ a, bias and gravity
    unchanged, ½ vᵀ M v and ID(FD(τ)) = τ, M symmetric positive definite."""
    model = build(spec_with_armature(seed))
    bare = without_armature(model)
    arm = np.array(model.armature, dtype=float)
    assert model.has_armature and np.all(arm >= 0) and np.any(arm > 0)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        q, v, a, tau = random_state(model, rng)
        m = ref.mass_matrix(model, q)
        assert relative_error(m, ref.mass_matrix(bare, q) + np.diag(arm)) < 1e-13
        assert relative_error(
            ref.inverse_dynamics(model, q, v, a), ref.inverse_dynamics(bare, q, v, a) + arm * a
        ) < 1e-13
        assert relative_error(ref.bias_forces(model, q, v), ref.bias_forces(bare, q, v)) < 1e-13
        assert relative_error(ref.gravity_forces(model, q), ref.gravity_forces(bare, q)) < 1e-13
        assert np.allclose(m, m.T, rtol=0, atol=1e-13)
        assert np.linalg.eigvalsh(m)[0] > 0
        kinetic = ref.kinetic_energy(model, q, v)
        assert abs(kinetic - 0.5 * v @ m @ v) <= 1e-12 * max(1.0, abs(kinetic))
        qdd = ref.forward_dynamics(model, q, v, tau)
        assert relative_error(ref.inverse_dynamics(model, q, v, qdd), tau) < 1e-11
        # the ABA with armature solves the armature-augmented M, not the bare one
        assert relative_error(qdd, np.linalg.solve(m, tau - ref.bias_forces(model, q, v))) < 1e-10
        assert relative_error(qdd, ref.forward_dynamics(bare, q, v, tau)) > 1e-6


# --------------------------------------------------------------------------- Pinocchio
@pytest.mark.parametrize("seed", range(6))
def test_reference_matches_pinocchio_armature(seed):
    """Reference vs Pinocchio (its model built from the raw description, armature set in
    ``model.armature``): rnea, crba, aba, computeMinverse, and ½ vᵀ M v with M from crba."""
    spec = spec_with_armature(seed)
    model = build(spec)
    br = Bridge(model, pin_model_from_spec(spec))
    pm, pd = br.pin_model, br.data
    pm.armature = br.v_to_pin(np.array(model.armature, dtype=float))
    rng = np.random.default_rng(100 + seed)
    worst: dict[str, float] = {}
    for _ in range(4):
        q, v, a, tau = random_state(model, rng)
        qp, vp = br.q_to_pin(q), br.v_to_pin(v)
        m_pin = br.matrix_from_pin(sym(pin.crba(pm, pd, qp)))
        errors = {
            "rnea": relative_error(
                ref.inverse_dynamics(model, q, v, a),
                br.v_from_pin(pin.rnea(pm, pd, qp, vp, br.v_to_pin(a))),
            ),
            "crba": relative_error(ref.mass_matrix(model, q), m_pin),
            "aba": relative_error(
                ref.forward_dynamics(model, q, v, tau),
                br.v_from_pin(pin.aba(pm, pd, qp, vp, br.v_to_pin(tau))),
            ),
            "minv": relative_error(
                np.linalg.inv(ref.mass_matrix(model, q)),
                br.matrix_from_pin(sym(pin.computeMinverse(pm, pd, qp))),
            ),
            "kinetic": relative_error(ref.kinetic_energy(model, q, v), 0.5 * v @ m_pin @ v),
        }
        for key, value in errors.items():
            worst[key] = max(worst.get(key, 0.0), value)
    assert max(worst.values()) < TOLERANCE, worst


def test_kinetic_energy_matches_pinocchio_on_the_panda():
    """Pinocchio's own Panda (axis-aligned joints): computeKineticEnergy with armature."""
    path = str(robot_urdf("panda"))
    loaded = load(path, couplings=False)  # computeKineticEnergy rejects mimic joints
    arm = np.linspace(0.05, 0.5, loaded.nv)
    pairs = zip(loaded.joints, arm, strict=True)
    joints = tuple(dataclasses.replace(j, armature=(float(x),)) for j, x in pairs)
    model = dataclasses.replace(loaded, joints=joints)
    br = Bridge(model, pin.buildModelFromUrdf(path))
    br.pin_model.armature = br.v_to_pin(arm)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v, _, _ = random_state(model, rng)
        expected = pin.computeKineticEnergy(br.pin_model, br.data, br.q_to_pin(q), br.v_to_pin(v))
        assert relative_error(ref.kinetic_energy(model, q, v), expected) < TOLERANCE
        assert relative_error(ref.kinetic_energy(loaded, q, v), expected) > 1e-6


def test_pinocchio_bridge_sets_armature():
    """pin_model_from_symgen carries the armature into Pinocchio's v layout (free joints:
    [linear; angular] there), so that crba = reference M."""
    spec = spec_with_armature(3)
    model = build(spec)
    pm = pin_model_from_symgen(model)
    br = Bridge(model, pm)
    expected = np.zeros(pm.nv)
    for joint in model.joints:
        pj = pm.joints[pm.getJointId(joint.name)]
        values = np.array(joint.armature_values, dtype=float)
        if joint.type is JointType.FREE:
            values = np.concatenate([values[3:], values[:3]])
        expected[pj.idx_v : pj.idx_v + pj.nv] = values
    assert np.array_equal(pm.armature, expected)
    q = ref.random_configuration(model, np.random.default_rng(0))
    m_pin = br.matrix_from_pin(sym(pin.crba(pm, br.data, br.q_to_pin(q))))
    assert relative_error(ref.mass_matrix(model, q), m_pin) < TOLERANCE


# --------------------------------------------------------------------------- kernels
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("partition", ["never", "always"])
def test_generated_kernels_with_armature_match_reference(seed, partition):
    """Every dynamics kernel (ABA, LᵀDL, operator M⁻¹, energy...) honours the armature,
    unpartitioned and with multi-DOF joints split into 1-DOF hinges."""
    model = build(spec_with_armature(seed))
    ks = generate(model, KERNELS, Options(partition=partition))
    for state in random_states(ks, 3, seed):
        check_kernel_set(ks, state)


def test_armature_as_a_runtime_parameter():
    """``armature="$rotor"``: a runtime parameter of the kernels and of the reference."""
    b = ModelBuilder("motor_arm", root="base")
    b.parameter("rotor", 0.2, "reflected rotor inertia")
    b.body("l1", mass=1.0, com=(0.1, 0, 0), inertia=(0.01, 0.02, 0.02))
    b.body("l2", mass=0.5, com=(0.2, 0, 0), inertia=(0.005, 0.01, 0.01))
    b.joint("j1", "revolute", "base", "l1", axis=(0, 0, 1), armature="$rotor")
    b.joint("j2", "revolute", "l1", "l2", xyz=(0.3, 0, 0), axis=(0, 1, 0), armature=0.05)
    model = b.build()
    q, v, a = np.array([0.3, -0.4]), np.array([1.0, -2.0]), np.array([0.5, 0.25])
    bare = ref.mass_matrix(without_armature(model), q, params={"rotor": 0.0})
    for rotor in (0.2, 1.5):
        expected = bare + np.diag([rotor, 0.05])
        assert relative_error(ref.mass_matrix(model, q, params={"rotor": rotor}), expected) < 1e-14
        ks = generate(model, ["mass_matrix", "inverse_dynamics"])
        (m,) = ks.evaluate("mass_matrix", q=q, params=[rotor]).values()
        assert relative_error(m, expected) < TOLERANCE
        (tau,) = ks.evaluate("inverse_dynamics", q=q, v=v, a=a, params=[rotor]).values()
        expected_tau = ref.inverse_dynamics(model, q, v, a, params={"rotor": rotor})
        assert relative_error(tau, expected_tau) < TOLERANCE
    with pytest.raises(ModelError, match=r"joint 'j1': negative armature -1"):
        model.resolve({"rotor": -1.0})


def test_energy_is_conserved_with_armature():
    """Unactuated motion (τ = 0) of a chain with armature, integrated by RK4 from the
    generated forward dynamics: the generated T + U stays constant to O(dt⁴)."""
    spec = random_spec(11, joint_types=("revolute", "prismatic", "helical", "fixed"))
    for joint in spec["joints"]:
        joint["armature"] = 0.3
    model = build(spec)
    ks = generate(model, ["forward_dynamics", "energy"])
    zero = np.zeros(model.nv)

    def accel(q, v):
        (qdd,) = ks.evaluate("forward_dynamics", q=q, v=v, tau=zero).values()
        return qdd

    def energy(q, v):
        (e,) = ks.evaluate("energy", q=q, v=v).values()
        return float(e[0] + e[1])

    rng = np.random.default_rng(5)
    q, v = rng.uniform(-1, 1, model.nq), rng.uniform(-1, 1, model.nv)
    e0, dt = energy(q, v), 2e-3
    for _ in range(150):
        k1q, k1v = v, accel(q, v)
        k2q, k2v = v + dt / 2 * k1v, accel(q + dt / 2 * k1q, v + dt / 2 * k1v)
        k3q, k3v = v + dt / 2 * k2v, accel(q + dt / 2 * k2q, v + dt / 2 * k2v)
        k4q, k4v = v + dt * k3v, accel(q + dt * k3q, v + dt * k3v)
        q = q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
        v = v + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
    kinetic = 0.5 * v @ ref.mass_matrix(model, q) @ v
    assert kinetic > 0.1  # the system moved
    assert abs(energy(q, v) - e0) < 1e-7 * max(1.0, abs(e0))


# --------------------------------------------------------------------------- validation
def arm_builder(**joint) -> ModelBuilder:
    b = ModelBuilder("m", root="base")
    b.body("a", mass=1.0, inertia=(0.01, 0.01, 0.01))
    b.joint("j", joint.pop("type", "revolute"), "base", "a", **joint)
    return b


@pytest.mark.parametrize(
    ("joint", "message"),
    [
        (dict(armature=-0.1), r"joint 'j': negative armature -0\.1"),
        (dict(armature=[0.1, 0.2]), r"joint 'j': armature needs 1 value or 1 .*got 2"),
        (dict(type="spherical", armature=[0.1, 0.2]), r"joint 'j': armature needs 1 value or 3"),
        (dict(type="fixed", armature=0.1), r"joint 'j': a fixed joint has no armature"),
        (dict(armature="abc"), r"joint 'j': armature: 'abc' is neither a number"),
        (dict(armature=[]), r"joint 'j': armature: expected a number or a list"),
    ],
)
def test_bad_armature_is_a_model_error(joint, message):
    with pytest.raises(ModelError, match=message):
        arm_builder(**joint).build()


def test_armature_broadcasts_over_multi_dof_joints():
    model = arm_builder(type="free", armature=0.25).build()
    assert model.joints[0].armature == (0.25,) * 6
    model = arm_builder(type="spherical", armature=[0.1, 0.2, 0.3]).build()
    assert model.armature == [0.1, 0.2, 0.3]
    assert arm_builder(armature=0.0).build().joints[0].armature == ()


def test_armature_makes_a_massless_leaf_loadable():
    """A massless leaf (Romeo's fingers) is rejected unless its joint has an armature; with
    one, M is positive definite with the armature on that diagonal entry."""
    b = arm_builder()
    b.body("finger", mass=0.0)
    b.joint("f", "revolute", "a", "finger", xyz=(0.1, 0, 0))
    with pytest.raises(ModelError, match=r"zero mass on a leaf .*give it an armature"):
        b.build()
    b = arm_builder()
    b.body("finger", mass=0.0)
    b.body("tip", mass=0.0)
    b.joint("f", "revolute", "a", "finger", xyz=(0.1, 0, 0), armature=0.01)
    b.joint("g", "revolute", "finger", "tip", xyz=(0.1, 0, 0))
    with pytest.raises(ModelError, match=r"body 'tip': zero mass on a leaf"):
        b.build()
    b = arm_builder()
    b.body("finger", mass=0.0)
    b.body("tip", mass=0.0)
    b.joint("f", "revolute", "a", "finger", xyz=(0.1, 0, 0))
    b.joint("g", "revolute", "finger", "tip", xyz=(0.1, 0, 0), armature=0.01)
    with pytest.raises(ModelError, match=r"joint 'f' moves only bodies without mass"):
        b.build()
    b = arm_builder()
    b.body("finger", mass=0.0)
    b.joint("f", "revolute", "a", "finger", xyz=(0.1, 0, 0), armature=0.01)
    model = b.build()
    m = ref.mass_matrix(model, np.array([0.3, 0.7]))
    assert m[1, 1] == pytest.approx(0.01) and m[0, 1] == 0.0
    assert np.linalg.eigvalsh(m)[0] > 0


# --------------------------------------------------------------------------- YAML
YAML = """\
name: geared
parameters:
  rotor: 0.02
bodies:
  - {name: l1, mass: 1.0, com: [0.1, 0, 0], inertia: [0.01, 0.02, 0.02]}
  - {name: l2, mass: 0.5, inertia: [0.01, 0.01, 0.01]}
joints:
  - {name: j1, type: revolute, parent: ground, child: l1, axis: [0, 0, 1], armature: $rotor}
  - name: j2
    type: spherical
    parent: l1
    child: l2
    origin: {xyz: [0.3, 0, 0]}
    armature: [0.1, 0.2, "2 * $rotor"]
"""


def test_yaml_armature_key(tmp_path: Path):
    path = tmp_path / "geared.yaml"
    path.write_text(YAML)
    model = load(path)
    resolved = model.resolve()
    assert resolved.armature == [0.02, 0.1, 0.2, 0.04]
    q = ref.random_configuration(model, np.random.default_rng(1))
    bare = ref.mass_matrix(without_armature(resolved), q)
    assert relative_error(ref.mass_matrix(model, q), bare + np.diag(resolved.armature)) < 1e-14


def test_yaml_bad_armature_names_file_and_line(tmp_path: Path):
    path = tmp_path / "bad.yaml"
    path.write_text(YAML.replace('armature: [0.1, 0.2, "2 * $rotor"]', "armature: [0.1, 0.2]"))
    with pytest.raises(ModelError, match=r"bad\.yaml:\d+: joint 'j2': armature needs 1 value or 3"):
        load(path)
    path.write_text(YAML.replace("armature: $rotor", "armature: -1"))
    with pytest.raises(ModelError, match=r"bad\.yaml:\d+: joint 'j1': negative armature"):
        load(path)


def test_natural_model_rejects_armature():
    """Armature is a joint-space rotor model: the natural-coordinate formulation has no
    counterpart, so building it names the joint instead of silently dropping it."""
    from symgen.errors import SymgenError
    from symgen.formulations.natural.kernels import natural_model

    b = ModelBuilder("arm", root="world")
    b.body("link", mass=1.0, com=(0.5, 0, 0), inertia=(0.01, 0.1, 0.1))
    b.joint("hinge", "revolute", "world", "link", axis=(0, 0, 1), armature=0.2)
    with pytest.raises(SymgenError, match="joint 'hinge': armature"):
        natural_model(b.build())
