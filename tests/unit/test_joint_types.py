"""Joint types as one extension point: every type is fully declared (symgen.joints), and
each declaration agrees with the independent numpy reference table (symgen.reference.joints)
at random configurations (Featherstone 2008, Table 4.1, eqs. 4.34-4.35)."""

from __future__ import annotations

import numpy as np
import pytest

from symgen.formulations.tree.hinges import twist_angle
from symgen.ir.printer import evaluate
from symgen.ir.program import ProgramBuilder
from symgen.joints import JOINT_TYPES
from symgen.joints.base import JointKind
from symgen.model import Joint, JointType
from symgen.model.reduction import joint_motion
from symgen.reference._numeric import NumericJoint, planar_basis
from symgen.reference.joints import JOINTS
from symgen.reference.spatial import rotation_about
from symgen.spatial import emit_mat, mat_mul, number

MOVABLE = [t for t in JointType if t is not JointType.FIXED]
#: Double-precision evaluation of the same closed forms: a few ulps of O(1) values.
TOL = 1e-12


def _unit(v) -> np.ndarray:
    a = np.asarray(v, float)
    return a / np.linalg.norm(a)


AXIS = _unit([0.3, -0.5, 0.8])
AXIS2 = _unit([-0.6, 0.2, 0.4])
PITCH = 0.07


class _Numbers:
    """Model values as plain numbers (the Constants protocol, no parameters)."""

    def scalar(self, x):
        return number(float(x))

    def unit_vec(self, v):
        return tuple(number(float(x)) for x in v)


def _joint(t: JointType) -> Joint:
    return Joint("j", t, "a", "b", axis=tuple(AXIS), axis2=tuple(AXIS2), pitch=PITCH)


def _numeric(t: JointType) -> NumericJoint:
    axis = AXIS if t.layout.uses_axis else np.array([0.0, 0.0, 1.0])
    e1, e2 = planar_basis(axis)
    nq, nv = t.nq, t.nv
    return NumericJoint(
        "j", t, slice(0, nq), slice(0, nv), np.eye(3), np.zeros(3), axis, AXIS2, PITCH,
        e1, e2, np.zeros(nv),
    )


def _random_q(kind: JointKind, rng: np.random.Generator) -> np.ndarray:
    q = rng.uniform(-np.pi, np.pi, kind.nq)
    if kind.layout.quaternion:
        quat = rng.standard_normal(4)
        q[-4:] = quat / np.linalg.norm(quat)
    return q


@pytest.mark.parametrize("t", list(JointType), ids=lambda t: t.value)
def test_every_type_is_declared(t):
    kind = JOINT_TYPES[t]
    assert kind.type is t and kind.layout is t.layout
    assert len(kind.layout.coordinate_names) == kind.nq == len(kind.layout.neutral)
    assert kind.nv <= kind.nq
    if kind.layout.quaternion:
        assert kind.layout.neutral[-4:] == (0.0, 0.0, 0.0, 1.0) and kind.nq - kind.nv == 1
    else:
        assert kind.nq == kind.nv and not any(kind.layout.neutral)
    assert not kind.coincident_subframes or kind.partitionable
    if t in MOVABLE:
        assert JOINTS[t].quaternion == kind.layout.quaternion  # the two tables agree on the layout


@pytest.mark.parametrize("t", MOVABLE, ids=lambda t: t.value)
def test_symbolic_joint_equals_reference(t):
    kind, ref = JOINT_TYPES[t], JOINTS[t]
    joint, nj = _joint(t), _numeric(t)
    b = ProgramBuilder("joint")
    q, v = b.input("q", kind.nq), b.input("v", kind.nv)
    (step,) = kind.steps(b, _Numbers(), joint, q, partition=False)
    b.output("R", 9, [x for row in step.R for x in row])
    b.output("p", 3, step.p)
    b.output("S", (kind.nv, 6), [x for col in step.S for x in col])
    bias = step.bias(b, v) if step.bias is not None else (number(0.0),) * 6
    b.output("c", 6, bias)
    program = b.build()
    rng = np.random.default_rng(12)
    for _ in range(5):
        qn, vn = _random_q(kind, rng), rng.standard_normal(kind.nv)
        out = evaluate(program, q=qn, v=vn)
        r_ref, p_ref = ref.pose(nj, qn)
        np.testing.assert_allclose(out["R"].reshape(3, 3), r_ref, atol=TOL)
        np.testing.assert_allclose(out["p"], p_ref, atol=TOL)
        np.testing.assert_allclose(out["S"].T, ref.subspace(nj, qn), atol=TOL)
        np.testing.assert_allclose(out["c"], ref.bias(nj, qn, vn), atol=TOL)
        motion = joint_motion(joint, [float(x) for x in qn])  # model scalars (locking)
        np.testing.assert_allclose(np.array(motion.rotation, float), r_ref, atol=TOL)
        np.testing.assert_allclose(np.array(motion.translation, float), p_ref, atol=TOL)


@pytest.mark.parametrize(
    "t", [t for t in MOVABLE if JOINT_TYPES[t].partitionable], ids=lambda t: t.value
)
def test_partitioned_steps_compose_to_the_joint_pose(t):
    """Jain's partitioning: the sub-hinges' motions compose to the joint's (Lemma 2.1)."""
    kind, ref = JOINT_TYPES[t], JOINTS[t]
    b = ProgramBuilder("joint")
    q = b.input("q", kind.nq)
    steps = kind.steps(b, _Numbers(), _joint(t), q, partition=True)
    assert sorted(o for s in steps for o in s.offsets) == list(range(kind.nv))
    assert all(len(s.S) == 1 for s in steps)
    rot, pos = steps[0].R, steps[0].p
    for s in steps[1:]:  # (R, p) ∘ (R_s, p_s) = (R R_s, R p_s + p)
        pos = tuple(p + sum((r * x for r, x in zip(row, s.p, strict=True)), number(0.0))
                    for row, p in zip(rot, pos, strict=True))
        rot = emit_mat(b, mat_mul(rot, s.R))
    b.output("R", 9, [x for row in rot for x in row])
    b.output("p", 3, pos)
    program = b.build()
    rng = np.random.default_rng(7)
    for _ in range(5):
        qn = _random_q(kind, rng)
        out = evaluate(program, q=qn)
        r_ref, p_ref = ref.pose(_numeric(t), qn)
        np.testing.assert_allclose(out["R"].reshape(3, 3), r_ref, atol=TOL)
        np.testing.assert_allclose(out["p"], p_ref, atol=TOL)


@pytest.mark.parametrize("t", MOVABLE, ids=lambda t: t.value)
@pytest.mark.parametrize("scale", [1.0, 1e-5], ids=["large", "small-angle"])
def test_symbolic_integration_equals_reference(t, scale):
    kind, ref = JOINT_TYPES[t], JOINTS[t]
    b = ProgramBuilder("integrate")
    q, step = b.input("q", kind.nq), b.input("step", kind.nv)
    b.output("out", kind.nq, kind.integrate(b, q, step))
    program = b.build()
    rng = np.random.default_rng(3)
    for _ in range(5):
        qn, sn = _random_q(kind, rng), scale * rng.standard_normal(kind.nv)
        out = evaluate(program, q=qn, step=sn)["out"]
        np.testing.assert_allclose(out, ref.integrate(qn, sn), atol=TOL)


def test_a_placement_turning_about_the_joint_axis_joins_the_angle():
    """twist_angle: R_T = R_a(φ) about a random unit axis (seed 4) gives φ = 0.7, so that
    R_T R_a(θ) = R_a(θ + φ) (rotations of symgen.reference); a turn about another axis, or
    a signed permutation (free to multiply), gives None."""
    a = np.random.default_rng(4).normal(size=3)
    a /= np.linalg.norm(a)

    def numbers(m):
        return tuple(tuple(number(float(x)) for x in row) for row in m)

    axis = tuple(number(float(x)) for x in a)
    phi = twist_angle(numbers(rotation_about(a, 0.7)), axis)
    assert phi == pytest.approx(0.7, abs=1e-14)
    theta = -1.3
    np.testing.assert_allclose(rotation_about(a, 0.7) @ rotation_about(a, theta),
                               rotation_about(a, theta + phi), atol=1e-15)
    other = np.cross(a, [1.0, 0.0, 0.0])
    assert twist_angle(numbers(rotation_about(other / np.linalg.norm(other), 0.7)),
                       axis) is None
    z = tuple(number(x) for x in (0.0, 0.0, 1.0))
    assert twist_angle(numbers([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), z) is None
