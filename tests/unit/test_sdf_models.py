"""SDF models against the same mechanisms read from other formats, with the numpy reference
(symgen.reference) and the numeric loop closure (symgen.loops), no generated code:

- examples/models/panda.sdf (SDFormat 1.11, poses relative_to other frames, joint poses in
  the child link, one link frame away from its joint, massless links as <frame>, a mimic)
  and example-robot-data's panda.urdf: the same joints, limits, couplings and frames, and
  at 5 random states (seed 0) the same mass matrix, inverse dynamics and world pose of every
  body and frame, to 1e-12 relative to each output's largest entry (at least 1), with a
  fixed and with a floating base. The URDF's link frames are its joint frames; in the SDF
  panda_link3's link frame is away from panda_joint3, so its body (at the joint) is
  panda_link3__panda_joint3, compared with the URDF's panda_link3, and the SDF frame
  panda_link3 sits where the file's joint pose puts the link;
- examples/models/four_bar.sdf (the fourth joint's child already has a parent: a loop
  joint) and examples/models/four_bar.yaml: one degree of freedom, and at 5 assembled
  states of the YAML model (seed 0) with velocities along the motion and random torques,
  the same constrained accelerations, from the saddle-point system [[M, −Gᵀ], [G, 0]] of
  the reference M, C and the loop closure's G, Ġq̇ in the rows the analysis keeps, to 1e-10.
  Its link frames sit at the bars' centres, its joints at their ends: the bodies are
  link__joint (at the YAML's body frames) and the links' frames are half a bar further.
"""

from __future__ import annotations

import numpy as np
import pytest
from paths import EXAMPLES

import symgen
from symgen import reference as ref
from symgen.io.robots import robot_urdf
from symgen.io.sdf import read_sdf
from symgen.loops import LoopClosure, analyse_loops
from symgen.loops.analysis import _samples
from symgen.model.transform import rotation_from_rpy

#: SDF body names that differ from the URDF's: panda_joint3 is away from panda_link3's origin.
PANDA_BODIES = {"panda_link3": "panda_link3__panda_joint3"}
#: panda_joint3's <pose> in its child panda_link3 (panda.sdf): xyz, rpy.
JOINT3_IN_LINK3 = ((-0.0378887086596293, -0.02936674282425155, 0.066502), (0.0, 0.0, -0.3))


def _pose(xyz, rpy) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3] = np.array(rotation_from_rpy(*rpy), dtype=float)
    pose[:3, 3] = xyz
    return pose


def _close(a, b, rel: float) -> bool:
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    return float(np.max(np.abs(np.asarray(a) - b), initial=0.0)) <= rel * scale


@pytest.mark.parametrize("floating", [False, True])
def test_panda_sdf_has_the_dynamics_of_the_urdf(floating):
    urdf = symgen.load(robot_urdf("panda"), floating_base=floating)
    sdf = read_sdf(EXAMPLES / "panda.sdf", floating_base=floating)
    assert sdf.name == "panda" and sdf.root == urdf.root
    assert sdf.joint_names == urdf.joint_names and sdf.q_slices == urdf.q_slices
    assert sdf.body_names == [PANDA_BODIES.get(n, n) for n in urdf.body_names]
    assert sdf.parents == urdf.parents
    assert [(c.joint, c.master, c.ratio, c.offset) for c in sdf.couplings] == [
        (c.joint, c.master, c.ratio, c.offset) for c in urdf.couplings]
    for a, b in zip(sdf.joints, urdf.joints, strict=True):
        assert a.type is b.type and a.limits == b.limits
    # the URDF's massless links are <frame>s there; the SDF adds its own frame "elbow" and
    # the link frame "panda_link3"
    assert set(sdf.frame_names) - set(urdf.frame_names) == {"elbow", "panda_link3"}
    for name in urdf.frame_names:
        assert sdf.frame(name).body == PANDA_BODIES.get(urdf.frame(name).body,
                                                        urdf.frame(name).body)
    link3_in_body = np.linalg.inv(_pose(*JOINT3_IN_LINK3))
    rng = np.random.default_rng(0)
    for _ in range(5):
        q = ref.random_configuration(urdf, rng)
        v, a = rng.normal(size=urdf.nv), rng.normal(size=urdf.nv)
        assert _close(ref.mass_matrix(sdf, q), ref.mass_matrix(urdf, q), 1e-12)
        assert _close(ref.inverse_dynamics(sdf, q, v, a), ref.inverse_dynamics(urdf, q, v, a),
                      1e-12)
        poses, expected = ref.forward_kinematics(sdf, q), ref.forward_kinematics(urdf, q)
        for name, pose in expected.items():
            assert _close(poses[PANDA_BODIES.get(name, name)], pose, 1e-12), name
        assert _close(poses["panda_link3"], expected["panda_link3"] @ link3_in_body, 1e-12)


def _constrained_accelerations(model, q, v, tau):
    """q̈ of the closed loops: [[M, −Gᵀ], [G, 0]] [q̈; λ] = [τ − C; −Ġq̇], dense."""
    analysis = analyse_loops(model)
    closure = LoopClosure(model)
    keep, rows = [loop.selection for loop in analysis.loops], list(analysis.rows)
    g = np.vstack([u @ h for u, h in zip(keep, closure.jacobians(q), strict=True)])[rows]
    gamma = np.concatenate([u @ b for u, b in zip(keep, closure.biases(q, v), strict=True)])
    m, c = ref.mass_matrix(model, q), ref.bias_forces(model, q, v)
    kkt = np.block([[m, -g.T], [g, np.zeros((len(rows), len(rows)))]])
    return np.linalg.solve(kkt, np.concatenate([tau - c, -gamma[rows]]))[:model.nv]


def test_four_bar_sdf_closes_the_loop_as_the_yaml():
    yaml = symgen.load(EXAMPLES / "four_bar.yaml")
    sdf = read_sdf(EXAMPLES / "four_bar.sdf")
    assert sdf.joint_names == yaml.joint_names
    bodies = {n: f"{n}__{n}_joint" for n in ("crank", "coupler", "rocker")}
    assert sdf.body_names == [bodies[n] for n in yaml.body_names]
    assert [(j.name, j.parent, j.child, j.cut) for j in sdf.loop_joints] == [
        ("coupler_rocker", bodies["coupler"], bodies["rocker"], "declared")]
    half_bar = {"crank": 0.05, "coupler": 0.25, "rocker": 0.2}  # link frame in the body
    assert analyse_loops(sdf).dof == analyse_loops(yaml).dof == 1
    np.testing.assert_allclose(np.array(sdf.gravity, float), [0, -9.81, 0])
    analysis = analyse_loops(yaml)
    closure, sdf_closure = LoopClosure(yaml), LoopClosure(sdf)
    rng = np.random.default_rng(0)
    states = _samples(closure, analysis.loops, analysis.reference, rng)[:5]
    assert len(states) == 5
    for q in states:
        assert np.max(np.abs(sdf_closure.residual(q))) <= 1e-12  # assembled in both
        g = np.vstack(closure.jacobians(q))
        _, sigma, vt = np.linalg.svd(g)
        v = vt[int(np.sum(sigma > 1e-8 * sigma[0])):].T @ rng.normal(size=1)
        tau = rng.normal(size=yaml.nv)
        assert _close(_constrained_accelerations(sdf, q, v, tau),
                      _constrained_accelerations(yaml, q, v, tau), 1e-10)
        poses, expected = ref.forward_kinematics(sdf, q), ref.forward_kinematics(yaml, q)
        assert _close(poses["coupler_point"], expected["coupler_point"], 1e-12)
        for name, body in bodies.items():
            assert _close(poses[body], expected[name], 1e-12), name
            link = expected[name] @ _pose((half_bar[name], 0, 0), (0, 0, 0))
            assert _close(poses[name], link, 1e-12), name
