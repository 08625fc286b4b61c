"""Moving a loop's cut (symgen.model.recut) and the choice of the cut with the fewest
independent constraints (symgen.loops.minimal_cuts, ``cut: minimal``; Müller 2014, §6).

A re-cut model is the same mechanism in other coordinates: the joints that stay tree joints
keep their coordinates, the new cut's gives way to the old loop joint's. So at the same
physical state (the old loop joint's coordinate read from the relative pose of its frames,
its rate from the loop rows) the constrained accelerations of the kept joints agree. They
are computed here without generated code: the reference M and C (symgen.reference) and the
numeric loop closure (symgen.loops.LoopClosure), every raw row, the saddle-point system
solved by least squares (q̈ is unique however redundant the rows). Tolerance 1e-10
relative: both sides solve well-conditioned 4-8 unknown systems in double precision.
States: seed 0, assembled from the zero configuration moved by 0.2 rad per coordinate.
"""

from __future__ import annotations

import numpy as np
import pytest
from cli_runner import run
from paths import EXAMPLES

import symgen
from symgen import reference as ref
from symgen.errors import ModelError
from symgen.io.builder import ModelBuilder
from symgen.loops import LoopClosure, analyse_loops, minimal_cuts
from symgen.model.recut import recut

TOLERANCE = 1e-10


def constrained_accelerations(model, q, v, tau) -> np.ndarray:
    """q̈ of M q̈ + C = τ + Hᵀλ, H q̈ + Ḣ q̇ = 0 over every raw loop row (numpy)."""
    closure = LoopClosure(model)
    h = np.vstack(closure.jacobians(q))
    gamma = np.concatenate(closure.biases(q, v))
    m = ref.mass_matrix(model, q)
    c = ref.bias_forces(model, q, v)
    kkt = np.block([[m, -h.T], [h, np.zeros((len(h), len(h)))]])
    x = np.linalg.lstsq(kkt, np.concatenate([tau - c, -gamma]), rcond=None)[0]
    return x[:model.nv]


def _homogeneous(t) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = np.array(t.rotation, float)
    out[:3, 3] = np.array(t.translation, float)
    return out


def relative_pose(model, q, joint) -> np.ndarray:
    """F_P⁻¹ F_C of loop joint ``joint`` (4×4)."""
    fk = ref.forward_kinematics(model, q)
    fp = fk[joint.parent] @ _homogeneous(joint.placement)
    fc = fk[joint.child] @ _homogeneous(joint.child_placement)
    return np.linalg.inv(fp) @ fc


def revolute_angle(pose: np.ndarray, axis) -> float:
    a = np.array(axis, float) / np.linalg.norm(axis)
    r = pose[:3, :3]
    sine = a @ (0.5 * np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]]))
    return float(np.arctan2(sine, 0.5 * (np.trace(r) - 1.0)))


def mapped_state(model, moved, loop: str, q, v, tau):
    """(q, v, τ) of the re-cut model ``moved`` at the state (q, v) of ``model``: the tree
    joints' coordinates and forces copied, the old loop joint's angle from its relative pose
    (read from its new parent to its new child), its rate from the loop rows (the new
    cut's force dropped)."""
    old = next(j for j in model.loop_joints if j.name == loop)
    new = next(j for j in moved.joints if j.name == loop)
    theta = revolute_angle(relative_pose(model, q, old), old.axis)
    if new.parent != old.parent:  # read from C to P: the opposite angle
        theta = -theta
    q2, v2, tau2 = (np.zeros(moved.nq), np.zeros(moved.nv), np.zeros(moved.nv))
    for j in moved.joints:
        if j.name == loop:
            q2[moved.q_slices[loop]] = theta
            continue
        q2[moved.q_slices[j.name]] = q[model.q_slices[j.name]]
        v2[moved.v_slices[j.name]] = v[model.v_slices[j.name]]
        tau2[moved.v_slices[j.name]] = tau[model.v_slices[j.name]]
    h = np.vstack(LoopClosure(moved).jacobians(q2))
    column = h[:, moved.v_slices[loop]].ravel()
    v2[moved.v_slices[loop]] = -(column @ (h @ v2)) / (column @ column)
    return q2, v2, tau2


def assembled_state(model, seed: int = 0):
    rng = np.random.default_rng(seed)
    closure = LoopClosure(model)
    q = closure.assemble(ref.integrate(model, ref.neutral_configuration(model),
                                       0.2 * rng.normal(size=model.nv), 1.0), tolerance=1e-15)
    h = np.vstack(closure.jacobians(q))
    _, sigma, vt = np.linalg.svd(h)
    tangent = vt[int(np.sum(sigma > 1e-8 * sigma[0])):].T
    return q, tangent @ rng.normal(size=tangent.shape[1]), rng.normal(size=model.nv)


CASES = [("four_bar", "coupler_rocker", ["crank_joint", "coupler_joint", "rocker_joint"]),
         ("slider_crank", "wrist_pin", ["crank_joint", "rod_joint", "slider_joint"]),
         ("four_bar_knee", None, None)]


@pytest.mark.parametrize(("name", "loop", "joints"), CASES, ids=[c[0] for c in CASES])
def test_recut_model_has_the_same_dynamics(name, loop, joints):
    model = symgen.load(EXAMPLES / f"{name}.yaml")
    if loop is None:  # every joint of the knee's loop
        report = analyse_loops(model).loops[0]
        loop, joints = report.name, [*report.chain_parent, *report.chain_child]
    q, v, tau = assembled_state(model)
    for joint in joints:
        moved = recut(model, loop, joint)
        assert [j.name for j in moved.loop_joints] == [joint]
        assert moved.nv == model.nv
        tau_without = tau.copy()
        tau_without[model.v_slices[joint]] = 0.0  # the new cut has no coordinate to push
        a = constrained_accelerations(model, q, v, tau_without)
        q2, v2, tau2 = mapped_state(model, moved, loop, q, v, tau)
        closure = LoopClosure(moved)
        assert np.max(np.abs(closure.residual(q2))) <= 1e-12
        assert np.max(np.abs(np.vstack(closure.jacobians(q2)) @ v2)) <= 1e-12
        a2 = constrained_accelerations(moved, q2, v2, tau2)
        scale = max(1.0, float(np.max(np.abs(a))))
        for j in moved.joints:
            if j.name != loop:
                err = abs(a2[moved.v_slices[j.name]][0] - a[model.v_slices[j.name]][0])
                assert err <= TOLERANCE * scale, (joint, j.name, err)


def rssr_cut_at_the_rocker(cut: str) -> symgen.Model:
    """examples/models/rssr.yaml closed at its rocker's revolute instead: the tree runs
    ground → crank → (ball A) coupler → (ball B) rocker, the rocker's frame at B."""
    b = ModelBuilder("rssr_rocker_cut", root="ground")
    b.body("crank", mass=0.3, com=(0.05, 0, 0), inertia=(1.0e-4, 3.0e-4, 3.0e-4))
    b.body("coupler", mass=0.4, com=(0.1, 0.1, 0.125),
           inertia=(3.4195e-3, 3.4195e-3, 2.6711e-3, -1.3305e-3, -1.6632e-3, -1.6632e-3))
    b.body("rocker", mass=0.25, com=(0, 0, 0.075 - 0.15), inertia=(5.0e-4, 5.0e-4, 1.0e-4))
    b.joint("crank_joint", "revolute", "ground", "crank", axis=(0, 0, 1))
    b.joint("ball_A", "spherical", "crank", "coupler", xyz=(0.1, 0, 0))
    b.joint("ball_B", "spherical", "coupler", "rocker", xyz=(0.2, 0.2, 0.25))
    b.loop_joint("rocker_joint", "revolute", "ground", "rocker", xyz=(0.3, 0.2, 0.1),
                 child_xyz=(0, 0, -0.15), axis=(1, 0, 0), cut=cut)
    return b.build()


def test_cut_minimal_moves_the_rssr_cut_to_a_spherical_joint():
    declared = rssr_cut_at_the_rocker("declared")
    report = analyse_loops(declared).loops[0]
    assert (report.kept, report.cuts) == (5, {"crank_joint": 5, "ball_A": 3, "ball_B": 3})
    chosen = rssr_cut_at_the_rocker("minimal")
    # ball_A would reverse the spherical ball_B: the next best, ball_B, closes the loop
    assert [(j.name, j.type.value, j.cut) for j in chosen.loop_joints] == \
        [("ball_B", "spherical", "minimal")]
    analysis = analyse_loops(chosen)
    assert (analysis.constraints_kept, analysis.dof, declared.nv - chosen.nv) == (3, 2, 2)
    # the same tree and cut as examples/models/rssr.yaml: equal dynamics joint by joint
    example = symgen.load(EXAMPLES / "rssr.yaml")
    q, v, tau = assembled_state(example)
    perm = [example.joint_names.index(n) for n in chosen.joint_names]
    assert [j.name for j in chosen.joints] == [example.joints[k].name for k in perm]
    q2 = np.concatenate([q[example.q_slices[n]] for n in chosen.joint_names])
    v2 = np.concatenate([v[example.v_slices[n]] for n in chosen.joint_names])
    t2 = np.concatenate([tau[example.v_slices[n]] for n in chosen.joint_names])
    a = constrained_accelerations(example, q, v, tau)
    a2 = constrained_accelerations(chosen, q2, v2, t2)
    a_back = np.concatenate([a[example.v_slices[n]] for n in chosen.joint_names])
    assert np.max(np.abs(a2 - a_back)) <= TOLERANCE * max(1.0, np.max(np.abs(a)))
    # a second choice changes nothing; the report says the model chose it
    assert minimal_cuts(chosen) == chosen
    assert "chosen with cut: minimal" in analysis.text()
    assert "cut: minimal moves it" in analyse_loops(declared).text()


def test_cut_minimal_from_yaml(tmp_path):
    text = (EXAMPLES / "four_bar.yaml").read_text().replace(
        "    type: revolute\n    parent: coupler", "    type: revolute\n    cut: minimal\n"
        "    parent: coupler")
    path = tmp_path / "four_bar_minimal.yaml"
    path.write_text(text)
    model = symgen.load(path)
    # every joint of a planar four-bar keeps 2 rows: the declared cut stays, marked chosen
    assert [(j.name, j.cut) for j in model.loop_joints] == [("coupler_rocker", "minimal")]
    result = run("info", str(path), "--loops")
    assert result.exit_code == 0, result.output
    assert "chosen with cut: minimal" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("cut: minimal", "cut: smallest"))
    result = run("info", str(bad), "--loops")
    assert result.exit_code != 0
    assert "cut must be one of declared, minimal; got 'smallest'" in result.output
    assert "Traceback" not in result.output


def test_recut_errors_are_one_line():
    model = symgen.load(EXAMPLES / "four_bar.yaml")
    with pytest.raises(ModelError, match="has no tree joint 'nope'"):
        recut(model, "coupler_rocker", "nope")
    with pytest.raises(ModelError, match="has no loop joint 'nope'"):
        recut(model, "nope", "crank_joint")
    with pytest.raises(ModelError, match="reverses the spherical joint 'ball_B'"):
        recut(rssr_cut_at_the_rocker("declared"), "rocker_joint", "ball_A")
    with pytest.raises(ModelError, match="joint 'extra' is not in the loop closed by"):
        recut(_with_extra_joint(), "coupler_rocker", "extra")


def _with_extra_joint() -> symgen.Model:
    """The four-bar with a body hanging from its rocker (outside the loop)."""
    text_model = symgen.load(EXAMPLES / "four_bar.yaml")
    b = ModelBuilder("four_bar_extra", root="ground")
    for body in text_model.bodies:
        b.body(body.name, mass=body.mass, com=body.com, inertia=body.inertia)
    b.body("extra_body", mass=0.1, inertia=(1e-3, 1e-3, 1e-3))
    for j in text_model.joints:
        b.joint(j.name, j.type.value, j.parent, j.child, placement=j.placement, axis=j.axis)
    b.joint("extra", "revolute", "rocker", "extra_body", xyz=(0.2, 0, 0))
    loop = text_model.loop_joints[0]
    b.loop_joint(loop.name, "revolute", loop.parent, loop.child,
                 xyz=loop.placement.translation, child_xyz=loop.child_placement.translation,
                 axis=loop.axis)
    return b.build()
