"""Force elements (springs, dampers, joint actuators) declared in the model: the YAML section
and the builder give equal models, bad input is a one-line error, and the natural-coordinate
formulation's forces match the Python API, virtual power, a finite-difference potential and
the generated program."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from model_files import line_of, write
from paths import EXAMPLES

import symgen
from symgen.errors import ModelError, SymgenError
from symgen.formulations.natural.forces import element_forces
from symgen.formulations.natural.model import Spring, tree_poses
from symgen.io.builder import ModelBuilder
from symgen.ir.printer import evaluate
from symgen.model.elements import JointActuator, JointSpring, PointSpring
from symgen.natural import NaturalOptions, natural_model
from symgen.reference.natural import assemble

FOUR_BAR_FORCES = """
parameters:
  k: 40.0
  c: 0.5
  F: 0.3
forces:
  - name: pull
    type: spring
    body_a: ground
    point_a: [0.2, 0.3]
    body_b: coupler
    point_b: [0.25, 0]
    stiffness: $k
    damping: $c
  - {name: hinge, type: joint_spring, joint: coupler_rocker, stiffness: "2*$k", damping: 0.1,
     rest: 0.1}
  - {name: motor, type: actuator, joint: crank_joint, force: $F}
"""

RSSR_FORCES = """
forces:
  - name: pull
    type: spring
    body_a: ground
    point_a: [0.1, 0.3, 0.2]
    body_b: rocker
    point_b: [0, 0.02, 0.1]
    stiffness: 25
    damping: 0.3
    rest_length: 0.2
"""


def with_forces(tmp_path, example: str, forces: str, name: str = "model.yaml"):
    """An example model file with a ``forces`` section appended."""
    path = tmp_path / name
    path.write_text((EXAMPLES / f"{example}.yaml").read_text() + forces)
    return path


def one_line_error(path, match: str) -> str:
    with pytest.raises(ModelError) as info:
        symgen.load(path)
    text = str(info.value)
    assert "\n" not in text and match in text, text
    return text


def relative(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


# ---------------------------------------------------------------- model, YAML, builder
def test_yaml_and_builder_give_equal_models(tmp_path):
    path = write(tmp_path, """
        name: chain
        plane: xy
        parameters: {k: 3.0}
        bodies:
          - {name: upper, mass: 1.0, com: [0.25, 0], inertia: [0.001, 0.02, 0.02]}
          - {name: lower, mass: 0.7, com: [0.2, 0], inertia: [0.001, 0.015, 0.015]}
        joints:
          - {name: shoulder, type: revolute, parent: ground, child: upper}
          - {name: elbow, type: revolute, parent: upper, child: lower, origin: {xy: [0.5, 0]}}
        forces:
          - {name: s, type: spring, body_a: ground, point_a: [0.3, 0.2], body_b: lower,
             point_b: [0.3, 0], stiffness: $k, damping: 0.2, rest_length: "$k / 10"}
          - {name: j, type: joint_spring, joint: elbow, stiffness: 2, rest: 0.1}
          - {name: m, type: actuator, joint: shoulder, force: "-$k"}
        """)
    b = ModelBuilder("chain", root="ground", gravity=(0, -9.81, 0), plane="xy")
    k = b.parameter("k", 3.0)
    b.body("upper", mass=1.0, com=(0.25, 0, 0), inertia=(0.001, 0.02, 0.02))
    b.body("lower", mass=0.7, com=(0.2, 0, 0), inertia=(0.001, 0.015, 0.015))
    b.joint("shoulder", "revolute", "ground", "upper")
    b.joint("elbow", "revolute", "upper", "lower", xyz=(0.5, 0, 0))
    b.spring("s", "ground", (0.3, 0.2, 0), "lower", (0.3, 0, 0), k, damping=0.2,
             rest_length=k / 10)
    b.joint_spring("j", "elbow", 2, rest=0.1)
    b.actuator("m", "shoulder", -k)
    built, loaded = b.build(), symgen.load(path)
    assert loaded.force_elements == built.force_elements
    assert loaded == built
    assert [type(e) for e in loaded.force_elements] == [PointSpring, JointSpring,
                                                        JointActuator]
    assert loaded.force_elements[0].source.line == line_of(path, "name: s,")
    # resolve and keep_parameters keep the elements, with numbers where parameters were
    resolved = loaded.resolve({"k": 5.0}).force_elements
    assert resolved[0].stiffness == 5.0 and resolved[0].rest_length == 0.5
    assert resolved[2].force == -5.0
    assert loaded.keep_parameters([]).force_elements == loaded.resolve().force_elements
    with pytest.raises(ModelError, match="spring 's': negative stiffness -1"):
        loaded.resolve({"k": -1.0})


def test_fixed_joint_merging_and_locks_reattach_the_elements():
    """A spring point on a body merged by a fixed joint (or a lock) moves to the body it is
    merged into, re-expressed in its frame; joint elements on a locked joint are dropped."""
    def build(lock: bool):
        b = ModelBuilder("arm", root="world")
        b.body("link", mass=1.0, com=(0, 0, -0.25), inertia=(0.02, 0.02, 0.001))
        b.body("hand", mass=0.5, inertia=(0.001, 0.001, 0.001))
        b.body("tool", mass=0.1, inertia=(1e-4, 1e-4, 1e-4))
        b.joint("hinge", "revolute", "world", "link", axis=(0, 1, 0))
        b.joint("wrist", "revolute", "link", "hand", xyz=(0, 0, -0.5), rpy=(0, 0, 0.3))
        b.joint("weld", "fixed", "hand", "tool", xyz=(0.1, 0, 0), rpy=(0.2, 0, 0))
        b.spring("s", "world", (0.2, 0, 0), "tool", (0.0, 0.05, 0.02), 10.0)
        b.actuator("a", "wrist", 1.0)
        if lock:
            b.lock("wrist", 0.4)
        return b.build()

    for lock in (False, True):
        model = build(lock)
        spring = model.force_elements[0]
        host = "link" if lock else "hand"
        assert spring.body_b == host
        assert [e.name for e in model.force_elements] == (["s"] if lock else ["s", "a"])
        # the point, through the host's pose, lands where the tool frame puts it
        tool = model.frame("tool")
        expected = np.array(tool.placement.apply((0.0, 0.05, 0.02)), float)
        np.testing.assert_allclose(np.array(spring.point_b, float), expected, atol=1e-15)


def test_tree_generation_warns_that_it_leaves_the_elements_out(tmp_path):
    model = symgen.load(with_forces(tmp_path, "four_bar", FOUR_BAR_FORCES))
    with pytest.warns(UserWarning, match=r"inverse_dynamics leave out the force elements "
                      r"\(pull, hinge, motor\).*constrained_forward_dynamics.*natural") as caught:
        symgen.generate(model, ["mass_matrix", "inverse_dynamics"])
    assert len([w for w in caught if "force elements" in str(w.message)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        symgen.generate(symgen.load(EXAMPLES / "four_bar.yaml"), ["inverse_dynamics"])
        # kernels that include the elements, or that no force enters, do not warn
        symgen.generate(model, ["mass_matrix", "constrained_forward_dynamics"])


@pytest.mark.parametrize(("text", "match"), [
    ("{name: s, type: spring, body_a: ground, point_a: [0, 0], body_b: coupla, "
     "point_b: [0, 0], stiffness: 1}", "spring 's': body 'coupla' does not exist (did you "
     "mean 'coupler'?)"),
    ("{name: a, type: actuator, joint: crank, force: 1}",
     "actuator 'a': joint 'crank' does not exist (did you mean 'crank_joint'?)"),
    ("{name: j, type: joint_spring, joint: crank_joint, stiffness: -5}",
     "joint spring 'j': negative stiffness -5"),
    ("{name: j, type: joint_spring, joint: crank_joint, stiffness: 1, damping: -0.1}",
     "joint spring 'j': negative damping -0.1"),
    ("{name: s, type: spring, body_a: ground, point_a: [0, 0], body_b: crank, "
     "point_b: [0.1, 0], stiffness: 1, rest_length: -1}", "negative rest_length -1"),
    ("{name: j, type: joint_spring, joint: crank_joint, stifness: 1}",
     "joint spring 'j': unknown key 'stifness' (did you mean 'stiffness'?"),
    ("{name: a, type: actuator, force: 1}", "actuator 'a': missing required key 'joint'"),
    ("{name: a, type: motor, joint: crank_joint, force: 1}",
     "force 'a': unknown type 'motor'"),
    ("{type: actuator, joint: crank_joint, force: 1}",
     "force entry: missing required key 'name'"),
    ("{name: a, type: actuator, joint: crank_joint, force: [1]}",
     "actuator 'a': force: expected a number"),
    ("{name: s, type: spring, body_a: ground, point_a: 3, body_b: crank, point_b: [0, 0], "
     "stiffness: 1}", "spring 's': point_a: expected a list of 2 or 3 numbers"),
    ("{name: s, type: spring, body_a: ground, point_a: [0, 0], body_b: crank, "
     "point_b: [0, 0], stiffness: 1}", "spring 's': its two points coincide"),
    ("{name: a, type: actuator, joint: crank_joint, force: $nope}", "unknown parameter"),
])
def test_bad_force_entries_are_one_line_errors(tmp_path, text, match):
    path = with_forces(tmp_path, "four_bar", f"forces:\n  - {text}\n")
    message = one_line_error(path, match)
    assert message.startswith(f"{path}:{line_of(path, '  - {')}:"), message


def test_multi_dof_joint_and_duplicate_names_are_errors(tmp_path):
    path = with_forces(tmp_path, "rssr", "forces:\n  - {name: a, type: actuator, joint: ball_A,"
                       " force: 1}\n")
    one_line_error(path, "actuator 'a': joint 'ball_A' is a spherical joint; joint springs and "
                   "actuators act on 1-DOF joints")
    path = with_forces(tmp_path, "four_bar", "forces:\n"
                       "  - {name: a, type: actuator, joint: crank_joint, force: 1}\n"
                       "  - {name: a, type: actuator, joint: rocker_joint, force: 1}\n")
    one_line_error(path, "duplicate force element name 'a'")
    b = ModelBuilder("x")
    b.body("link", mass=1.0, inertia=(0.1, 0.1, 0.1))
    b.joint("hinge", "revolute", "world", "link")
    b.joint_spring("s", "hinge", stiffness=-2.0)
    with pytest.raises(ModelError, match="^joint spring 's': negative stiffness -2"):
        b.build()
    nm = natural_model(symgen.load(EXAMPLES / "rssr.yaml"))
    with pytest.raises(SymgenError, match="joint spring 's': joint 'ball_A' has no natural"):
        element_forces(nm, [JointSpring("s", "ball_A", 1.0)])


# ---------------------------------------------------------------- natural formulation
@pytest.mark.parametrize(("example", "forces", "spring"), [
    ("four_bar", FOUR_BAR_FORCES.split("  - {name: hinge")[0],
     Spring("ground", (0.2, 0.3, 0.0), "coupler", (0.25, 0.0, 0.0), 40.0, 0.5, None)),
    ("rssr", RSSR_FORCES,
     Spring("ground", (0.1, 0.3, 0.2), "rocker", (0.0, 0.02, 0.1), 25.0, 0.3, 0.2)),
])
def test_model_springs_match_the_python_api(tmp_path, example, forces, spring):
    declared = natural_model(symgen.load(with_forces(tmp_path, example, forces)))
    given = natural_model(symgen.load(EXAMPLES / f"{example}.yaml"), springs=[spring])
    plain = natural_model(symgen.load(EXAMPLES / f"{example}.yaml"))
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = declared.q0 + 0.05 * rng.normal(size=declared.n)
        qd = rng.normal(size=declared.n)
        tau = rng.normal(size=len(declared.actuated))
        a, b = declared.generalized_forces(q, qd, tau), given.generalized_forces(q, qd, tau)
        assert relative(a, b) < 1e-12
        assert relative(a - plain.generalized_forces(q, qd, tau), b - plain.generalized_forces(
            q, qd, tau)) < 1e-10  # the spring's own part, not only gravity, agrees


def planar_chain(forces: str = "", tmp_path=None):
    """An open planar two-link chain, so that tree configurations are assembled ones."""
    b = ModelBuilder("chain", root="ground", gravity=(0, -9.81, 0), plane="xy")
    b.body("upper", mass=1.0, com=(0.25, 0, 0), inertia=(0.001, 0.02, 0.02))
    b.body("lower", mass=0.7, com=(0.2, 0.05, 0), inertia=(0.001, 0.015, 0.015))
    b.joint("shoulder", "revolute", "ground", "upper")
    b.joint("elbow", "revolute", "upper", "lower", xyz=(0.5, 0, 0))
    if forces == "joint":
        b.joint_spring("js", "elbow", 3.0, damping=0.4, rest=0.3)
    elif forces == "spring":
        b.spring("ps", "ground", (0.3, 0.2, 0), "lower", (0.3, 0.05, 0), 50.0, damping=0.7)
    return b.build()


def test_joint_spring_power_on_a_tree_joint():
    """Q·q̇ = −(k(θ − rest) + c θ̇) θ̇ with θ, θ̇ the tree joint's own coordinate and rate: the
    natural joint coordinate is the joint's (zero at the zero configuration), so ``rest``
    needs no offset."""
    nm, plain = natural_model(planar_chain("joint")), natural_model(planar_chain())
    mod = nm.modeller
    rng = np.random.default_rng(3)
    for _ in range(5):
        jq, jv = rng.uniform(-1.2, 1.2, size=2), rng.normal(size=2)
        q, qd = mod.coordinates_at(jq), mod.velocities_at(jq, jv)
        assert abs(nm.joint_values["elbow"](q) - jq[1]) < 1e-12
        power = (nm.generalized_forces(q, qd) - plain.generalized_forces(q, qd)) @ qd
        theta, rate = jq[1], jv[1]
        expected = -(3.0 * (theta - 0.3) + 0.4 * rate) * rate
        assert abs(power - expected) < 1e-10 * max(abs(expected), 1.0)


def test_joint_spring_and_actuator_power_on_loop_and_tree_joints(tmp_path):
    """Four-bar: a joint spring on the loop joint and an actuator on the crank, at assembled
    states with velocities the constraints allow; θ from nm.joint_values, θ̇ by central
    differences of it along q̇."""
    model = symgen.load(with_forces(tmp_path, "four_bar", FOUR_BAR_FORCES))
    nm = natural_model(model)
    base = natural_model(symgen.load(with_forces(
        tmp_path, "four_bar", FOUR_BAR_FORCES.split("  - {name: hinge")[0], "spring.yaml")))
    assert nm.force_parameters == ["k", "c", "F"]
    rng = np.random.default_rng(11)
    hinge, crank = nm.joint_values["coupler_rocker"], nm.joint_values["crank_joint"]
    for _ in range(4):
        q = assemble(nm, nm.q0 + 0.05 * rng.normal(size=nm.n))
        _, s, vt = np.linalg.svd(nm.phi_q(q))
        qd = vt[int(np.sum(s > 1e-10)):].T @ rng.normal(size=nm.n - int(np.sum(s > 1e-10)))
        eps = 1e-6
        rates = [(f(q + eps * qd) - f(q - eps * qd)) / (2 * eps) for f in (hinge, crank)]
        power = (nm.generalized_forces(q, qd) - base.generalized_forces(q, qd)) @ qd
        expected = -(80.0 * (hinge(q) - 0.1) + 0.1 * rates[0]) * rates[0] + 0.3 * rates[1]
        assert abs(power - expected) < 1e-7 * max(abs(expected), 1.0)


def spring_potential_case(kind: str):
    """(model, body of the spring's second point in the description) for the potential
    check: a planar chain, or a spatial one whose spring hangs on a link merged by a fixed
    joint (the tree's forward kinematics still reports that link as a frame)."""
    if kind == "planar":
        return planar_chain("spring"), "lower"
    b = ModelBuilder("pendulum", root="ground")
    b.body("upper", mass=1.0, com=(0, 0, -0.25), inertia=(0.02, 0.02, 5e-5))
    b.body("lower", mass=1.0, com=(0, 0, -0.25), inertia=(0.02, 0.02, 5e-5))
    b.body("tip", mass=0.5, inertia=(1e-4, 1e-4, 1e-4))
    b.joint("shoulder", "revolute", "ground", "upper", axis=(0, 1, 0))
    b.joint("elbow", "revolute", "upper", "lower", xyz=(0, 0, -0.5), axis=(0.6, 0.8, 0))
    b.joint("tip_mount", "fixed", "lower", "tip", xyz=(0, 0, -0.5), rpy=(0.3, 0.1, 0))
    # attached to the tip, which is merged into the lower arm
    b.spring("ps", "ground", (0.3, 0.05, 0.1), "tip", (0.05, 0.3, 0.05), 50.0, damping=0.7)
    return b.build(), "tip"


@pytest.mark.parametrize("kind", ["planar", "spatial"])
def test_point_spring_is_minus_the_gradient_of_its_potential(kind):
    """Qᵀq̇ = −dV/dt with V = ½k(L − L₀)², L from the tree formulation's body poses (central
    differences along a joint velocity), L₀ the distance at the zero configuration; the
    damper adds −c L̇²."""
    model, body = spring_potential_case(kind)
    spring = model.force_elements[0]
    anchor = np.array(spring.point_a, float)
    local = {"planar": (0.3, 0.05, 0.0), "spatial": (0.05, 0.3, 0.05)}[kind]
    nm = natural_model(model)
    plain = natural_model(dataclasses.replace(model, force_elements=()))

    def length(jq) -> float:
        pose = tree_poses(model, np.asarray(jq, float))[body]
        return float(np.linalg.norm(pose[:3, :3] @ np.array(local) + pose[:3, 3] - anchor))

    rest = length(np.zeros(model.nq))
    rng = np.random.default_rng(5)
    for _ in range(3):
        jq, jv = rng.uniform(-1.0, 1.0, size=model.nq), rng.normal(size=model.nv)
        q, qd = nm.modeller.coordinates_at(jq), nm.modeller.velocities_at(jq, jv)
        eps = 1e-5
        lp, lm = length(jq + eps * jv), length(jq - eps * jv)
        dv = (0.5 * 50.0 * ((lp - rest) ** 2 - (lm - rest) ** 2)) / (2 * eps)
        ldot = (lp - lm) / (2 * eps)
        spring_q = nm.generalized_forces(q, 0 * qd) - plain.generalized_forces(q, 0 * qd)
        assert abs(spring_q @ qd + dv) < 1e-7 * max(abs(dv), 1.0)
        damper_q = nm.generalized_forces(q, qd) - nm.generalized_forces(q, 0 * qd)
        assert abs(damper_q @ qd + 0.7 * ldot**2) < 1e-7 * max(0.7 * ldot**2, 1.0)


def test_runtime_parameters_are_linear_and_the_program_agrees(tmp_path):
    """k, c, F appear only in force elements: they stay runtime parameters; Q is affine in
    them; the generated nc_forces (evaluated in Python) agrees with the numpy forces."""
    nm_path = with_forces(tmp_path, "four_bar", FOUR_BAR_FORCES)
    model = symgen.load(nm_path)
    ks = symgen.generate(model, kernels=["nc_forces", "nc_accelerations", "nc_step"],
                         options=NaturalOptions())
    nm = ks.context.nm
    program = ks.programs["nc_forces"]
    assert [s.name for s in program.inputs] == ["q", "qd", "tau", "params"]
    assert "(k, c, F)" in program.inputs[-1].doc
    rng = np.random.default_rng(2)
    q, qd = nm.q0 + 0.05 * rng.normal(size=nm.n), rng.normal(size=nm.n)
    tau = rng.normal(size=len(nm.actuated))
    zero = nm.generalized_forces(q, qd, tau, [0.0, 0.0, 0.0])
    p1, p2 = rng.uniform(0.1, 50.0, size=3), rng.uniform(0.1, 50.0, size=3)
    f1 = nm.generalized_forces(q, qd, tau, p1) - zero
    f2 = nm.generalized_forces(q, qd, tau, p2) - zero
    both = nm.generalized_forces(q, qd, tau, 2 * p1 - 3 * p2) - zero
    assert relative(both, 2 * f1 - 3 * f2) < 1e-12
    np.testing.assert_array_equal(nm.generalized_forces(q, qd, tau),
                                  nm.generalized_forces(q, qd, tau, [40.0, 0.5, 0.3]))
    for params in (p1, p2, [40.0, 0.5, 0.3]):
        got = evaluate(program, q=q, qd=qd, tau=tau, params=params)["Q"]
        assert relative(got, nm.generalized_forces(q, qd, tau, params)) < 1e-12
    for name in ("nc_accelerations", "nc_step"):
        assert [s.name for s in ks.programs[name].inputs][-2:] == ["tau", "params"]


def test_parameters_shared_with_the_geometry_are_baked_and_points_may_be_parameters():
    """A parameter the inertia also uses is taken at its default (like the geometry); one used
    only by a spring point stays runtime, and matches the numeric point."""
    def build(point_x):
        b = ModelBuilder("chain", root="ground", gravity=(0, -9.81, 0), plane="xy")
        m = b.parameter("m", 0.7)
        b.parameter("a", 0.3)
        b.body("upper", mass=1.0, com=(0.25, 0, 0), inertia=(0.001, 0.02, 0.02))
        b.body("lower", mass=m, com=(0.2, 0.05, 0), inertia=(0.001, 0.015, 0.015))
        b.joint("shoulder", "revolute", "ground", "upper")
        b.joint("elbow", "revolute", "upper", "lower", xyz=(0.5, 0, 0))
        b.spring("ps", "ground", (0.3, 0.2, 0), "lower", (point_x, 0.05, 0), 100 * m)
        return b.build()

    symbolic, numeric = natural_model(build("$a")), natural_model(build(0.45))
    assert symbolic.force_parameters == ["a"] and numeric.force_parameters == []
    rng = np.random.default_rng(4)
    q, qd = symbolic.q0 + 0.05 * rng.normal(size=symbolic.n), rng.normal(size=symbolic.n)
    assert relative(symbolic.generalized_forces(q, qd, params=[0.45]),
                    numeric.generalized_forces(q, qd)) < 1e-12
