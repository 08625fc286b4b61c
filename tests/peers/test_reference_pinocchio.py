"""symgen.reference against Pinocchio: random trees with every joint type, real robots
(example-robot-data), runtime parameters, and a check that the comparison can fail."""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pinocchio as pin
import pytest
from random_models import (
    JOINT_TYPES,
    build,
    parametric_arm,
    pin_model_from_spec,
    random_forces,
    random_spec,
    random_state,
)

import symgen.reference as ref
from symgen.model import JointType, Transform
from symgen.peers.pinocchio import Bridge, pin_model_from_symgen

TOL = 1e-9
SEEDS = range(24)
STATES_PER_TREE = 3
PIN_REFERENCES = {
    "local_world_aligned": pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
    "local": pin.ReferenceFrame.LOCAL,
    "world": pin.ReferenceFrame.WORLD,
}


def rel(a, b) -> float:
    """max|a − b| / max(max|b|, 1)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1.0))


def pin_mass_matrix(br: Bridge, qp: np.ndarray) -> np.ndarray:
    m = pin.crba(br.pin_model, br.data, qp)
    return np.triu(m) + np.triu(m, 1).T  # Pinocchio fills the upper triangle only


def pin_quaternion_blocks(br: Bridge) -> list[slice]:
    out = []
    for j in br.pin_model.joints[1:]:
        if j.shortname() in ("JointModelFreeFlyer", "JointModelSpherical"):
            out.append(slice(j.idx_q + j.nq - 4, j.idx_q + j.nq))
    return out


def compare(br: Bridge, q, v, a, tau, f_ext, params=None) -> dict[str, float]:
    """Relative errors of every reference quantity against Pinocchio at one state."""
    m, pm, pd = br.model, br.pin_model, br.data
    qp, vp, ap, taup = br.q_to_pin(q), br.v_to_pin(v), br.v_to_pin(a), br.v_to_pin(tau)
    fp = br.forces_to_pin(f_ext)
    err: dict[str, float] = {}
    err["inverse_dynamics"] = rel(
        ref.inverse_dynamics(m, q, v, a, params=params), br.v_from_pin(pin.rnea(pm, pd, qp, vp, ap))
    )
    err["inverse_dynamics_fext"] = rel(
        ref.inverse_dynamics(m, q, v, a, f_ext, params=params),
        br.v_from_pin(pin.rnea(pm, pd, qp, vp, ap, fp)),
    )
    err["mass_matrix"] = rel(
        ref.mass_matrix(m, q, params=params), br.matrix_from_pin(pin_mass_matrix(br, qp))
    )
    err["forward_dynamics"] = rel(
        ref.forward_dynamics(m, q, v, tau, params=params),
        br.v_from_pin(br.forward_dynamics(qp, vp, taup)),
    )
    err["forward_dynamics_fext"] = rel(
        ref.forward_dynamics(m, q, v, tau, f_ext, params=params),
        br.v_from_pin(br.forward_dynamics(qp, vp, taup, fp)),
    )
    err["bias_forces"] = rel(
        ref.bias_forces(m, q, v, params=params), br.v_from_pin(pin.nonLinearEffects(pm, pd, qp, vp))
    )
    err["gravity_forces"] = rel(
        ref.gravity_forces(m, q, params=params),
        br.v_from_pin(pin.computeGeneralizedGravity(pm, pd, qp)),
    )

    fk = ref.forward_kinematics(m, q, params=params)
    pin.framesForwardKinematics(pm, pd, qp)
    pin.computeJointJacobians(pm, pd, qp)
    err["placements"] = max(rel(fk[n], pd.oMf[br.frame_id(n)].homogeneous) for n in br.names())
    jac = 0.0
    for name in br.names():
        fid = br.frame_id(name)
        for reference, rf in PIN_REFERENCES.items():
            jp = pin.getFrameJacobian(pm, pd, fid, rf)
            jac = max(
                jac,
                rel(
                    ref.frame_jacobian(m, q, name, reference, params=params),
                    br.jacobian_from_pin(jp),
                ),
            )
    err["jacobians"] = jac
    pin.forwardKinematics(pm, pd, qp, vp, 0 * vp)
    jdot = 0.0
    for name in br.names():
        fid = br.frame_id(name)
        for reference, rf in PIN_REFERENCES.items():
            acc = br.motion(pin.getFrameClassicalAcceleration(pm, pd, fid, rf))
            jdot = max(
                jdot, rel(ref.frame_jacobian_dot_v(m, q, v, name, reference, params=params), acc)
            )
    err["jacobian_dot_v"] = jdot

    err["integrate"] = 0.0
    for dt in (1e-5, 0.05, 0.7):  # small, moderate and large rotations
        ours = br.q_to_pin(ref.integrate(m, q, v, dt, params=params))
        theirs = pin.integrate(pm, qp, vp * dt)
        for s in pin_quaternion_blocks(br):  # q and -q are the same rotation
            if ours[s] @ theirs[s] < 0:
                ours[s] = -ours[s]
        err["integrate"] = max(err["integrate"], rel(ours, theirs))
    return err


@cache
def tree(seed: int):
    """A random model and its Pinocchio twin built from the raw description (Pinocchio does
    the fixed-joint lumping and the rpy rotations)."""
    spec = random_spec(seed)
    model = build(spec)
    return model, Bridge(model, pin_model_from_spec(spec))


def max_errors(br: Bridge, rng: np.random.Generator, n_states: int, params=None) -> dict:
    worst: dict[str, float] = {}
    for _ in range(n_states):
        q, v, a, tau = random_state(br.model, rng)
        f_ext = random_forces(br.model, rng)
        for key, value in compare(br, q, v, a, tau, f_ext, params).items():
            worst[key] = max(worst.get(key, 0.0), value)
    return worst


def assert_small(worst: dict[str, float], label: str) -> None:
    bad = {k: v for k, v in worst.items() if not v <= TOL}
    assert not bad, f"{label}: relative errors above {TOL:g}: {bad}"


# --------------------------------------------------------------------------- random trees
def test_random_trees_cover_every_joint_type():
    seen: set[str] = set()
    for seed in SEEDS:
        model, _ = tree(seed)
        seen |= {j.type.value for j in model.joints}
        if any(f.name.startswith("b") for f in model.frames):  # a body merged by a fixed joint
            seen.add("fixed")
        assert any(j.type is not JointType.FIXED for j in model.joints)
    assert seen == set(JOINT_TYPES)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_tree_matches_pinocchio(seed):
    _, br = tree(seed)
    worst = max_errors(br, np.random.default_rng(1000 + seed), STATES_PER_TREE)
    assert_small(worst, f"random tree {seed}")


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_pinocchio_model_from_the_merged_model_agrees(seed):
    """The bridge's other route (Pinocchio built from the merged symgen model) agrees too."""
    model, _ = tree(seed)
    br = Bridge(model, pin_model_from_symgen(model))
    assert_small(max_errors(br, np.random.default_rng(seed), 1), f"random tree {seed}")


def test_neutral_configuration_matches_pinocchio():
    for seed in SEEDS[:6]:
        model, br = tree(seed)
        q0 = ref.neutral_configuration(model)
        np.testing.assert_array_equal(br.q_to_pin(q0), pin.neutral(br.pin_model))


def test_pinocchio_helical_pitch_is_metres_per_radian():
    pm = pin.Model()
    pm.addJoint(
        0, pin.JointModelHelicalUnaligned(np.array([0.0, 0.6, 0.8]), 0.25), pin.SE3.Identity(), "h"
    )
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, np.array([2.0]))
    np.testing.assert_allclose(pd.oMi[1].translation, 0.5 * np.array([0.0, 0.6, 0.8]), atol=1e-15)


# --------------------------------------------------------------------------- robots
ROBOTS = [("panda", False), ("ur5", False), ("xarm7", False), ("solo12", True)]


@cache
def robot(name: str, floating: bool):
    pytest.importorskip("symgen.io.urdf", reason="the URDF reader is not available")
    import symgen
    from symgen.io.robots import robot_urdf

    path = str(robot_urdf(name))
    model = symgen.load(path, floating_base=floating)
    mimic = bool(model.couplings)  # the Panda's fingers: a coupled joint has no coordinate
    if floating:
        pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(), mimic=mimic)
    else:
        pm = pin.buildModelFromUrdf(path, mimic=mimic)
    return model, Bridge(model, pm)


@pytest.mark.parametrize(("name", "floating"), ROBOTS)
def test_robot_matches_pinocchio(name, floating):
    model, br = robot(name, floating)
    assert model.nv == br.pin_model.nv
    np.testing.assert_allclose(model.gravity, br.pin_model.gravity.linear, rtol=0, atol=1e-12)
    worst = max_errors(br, np.random.default_rng(7), 5)
    assert_small(worst, name)


CONTINUOUS_URDFS = [
    "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
    "kinova_description/robots/kinova.urdf",
]


@pytest.mark.parametrize("floating", [False, True])
@pytest.mark.parametrize("relpath", CONTINUOUS_URDFS)
def test_urdf_continuous_joints_match_pinocchio(relpath, floating):
    """URDF continuous joints: Pinocchio stores (cos θ, sin θ), symgen the angle θ."""
    pytest.importorskip("symgen.io.urdf", reason="the URDF reader is not available")
    import symgen
    from symgen.io.robots import example_robot_data_dir

    path = str(example_robot_data_dir() / relpath)
    model = symgen.load(path, floating_base=floating)
    pm = pin.buildModelFromUrdf(path, *([pin.JointModelFreeFlyer()] if floating else []))
    br = Bridge(model, pm)
    assert any(j.type is JointType.CONTINUOUS for j in model.joints)
    assert pm.nq == model.nq + sum(j.type is JointType.CONTINUOUS for j in model.joints)
    assert_small(max_errors(br, np.random.default_rng(11), 3), relpath)


# --------------------------------------------------------------------------- parameters
@pytest.mark.parametrize(
    "params",
    [None, {"payload": 0.0}, {"payload": 3.0, "g": -1.62}, {"reach": 0.8, "g": 9.81}],
)
def test_runtime_parameters_match_pinocchio(params):
    model = parametric_arm()
    assert set(model.parameter_names) == {"g", "payload", "reach"}
    # the Pinocchio model is built from the resolved model, the reference gets params
    br = Bridge(model, pin_model_from_symgen(model, params))
    worst = max_errors(br, np.random.default_rng(3), 3, params=params)
    assert_small(worst, f"params {params}")


def test_parameter_values_change_the_dynamics():
    model = parametric_arm()
    q = np.array([0.3, -0.2, 0.5, 0.1])
    base = ref.gravity_forces(model, q)
    assert rel(ref.gravity_forces(model, q, params={"payload": 3.0}), base) > 1e-2
    assert rel(ref.gravity_forces(model, q, params={"g": -1.62}), base) > 1e-2


# --------------------------------------------------------------------------- sensitivity
def test_comparison_detects_a_flipped_com_coordinate():
    model, br = tree(3)
    i, k = np.unravel_index(
        np.argmax(np.abs(np.array([b.com for b in model.bodies]))), (model.nbodies, 3)
    )
    body = model.bodies[i]
    com = list(body.com)
    com[k] = -com[k]
    broken = dataclasses.replace(
        model,
        bodies=model.bodies[:i]
        + (dataclasses.replace(body, com=tuple(com)),)
        + model.bodies[i + 1 :],
    )
    bad = Bridge(broken, br.pin_model)
    rng = np.random.default_rng(5)
    q, v, a, tau = random_state(model, rng)
    good_err = compare(br, q, v, a, tau, {})
    bad_err = compare(bad, q, v, a, tau, {})
    assert good_err["inverse_dynamics"] <= TOL
    assert bad_err["inverse_dynamics"] > 1e-3
    assert bad_err["mass_matrix"] > 1e-3
    assert bad_err["forward_dynamics"] > 1e-3


def test_comparison_detects_a_transposed_placement():
    model, br = tree(5)
    i = max(range(model.nbodies), key=lambda k: len(model.children(k)))  # inner joint
    joint = model.joints[i]
    rot = np.array(joint.placement.rotation)
    assert np.max(np.abs(rot - rot.T)) > 0.1
    placement = Transform(tuple(map(tuple, rot.T.tolist())), joint.placement.translation)
    broken = dataclasses.replace(
        model,
        joints=model.joints[:i]
        + (dataclasses.replace(joint, placement=placement),)
        + model.joints[i + 1 :],
    )
    bad = Bridge(broken, br.pin_model)
    q, v, a, tau = random_state(model, np.random.default_rng(6))
    err = compare(bad, q, v, a, tau, {})
    assert err["placements"] > 1e-2
    assert err["inverse_dynamics"] > 1e-3
    assert err["jacobians"] > 1e-2
