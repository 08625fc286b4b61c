"""The thin spatial types of symgen.spatial (Motion, Force, Transform, Inertia, JointMap,
ForceMap, ArticulatedInertia, Compliance, Pose) against plain numpy 6×6 algebra built here
from Featherstone 2008, §2 (eq. 2.24 for X, eq. 2.31-2.32 for ×, ×*, eq. 2.63 for the
inertia), and the emission order of their deferred products."""

from __future__ import annotations

import numpy as np
import pytest

from symgen.ir.expr import Num
from symgen.ir.printer import evaluate as run_program
from symgen.ir.program import ProgramBuilder
from symgen.spatial import (
    ArticulatedInertia,
    Compliance,
    Force,
    ForceMap,
    Inertia,
    JointMap,
    Motion,
    Pending,
    Pose,
    Transform,
    vec3,
)


def skew(v) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def random_rotation(rng) -> np.ndarray:
    qm, r = np.linalg.qr(rng.standard_normal((3, 3)))
    qm = qm @ np.diag(np.sign(np.diag(r)))
    return qm if np.linalg.det(qm) > 0 else -qm


def plucker(E: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``[[E, 0], [−E r×, E]]`` (Featherstone 2008, eq. 2.24)."""
    return np.block([[E, np.zeros((3, 3))], [-E @ skew(r), E]])


def crm(v: np.ndarray) -> np.ndarray:
    """``v×`` for motions (Featherstone 2008, eq. 2.31)."""
    return np.block([[skew(v[:3]), np.zeros((3, 3))], [skew(v[3:]), skew(v[:3])]])


def nums(x) -> tuple:
    return tuple(Num(float(e)) for e in x)


def symbolic_transform(E: np.ndarray, r: np.ndarray) -> Transform:
    return Transform((vec3(nums(E[0])), vec3(nums(E[1])), vec3(nums(E[2]))), vec3(nums(r)))


def evaluate(build, inputs: dict[str, np.ndarray], size: int) -> np.ndarray:
    b = ProgramBuilder("t")
    syms = {name: b.input(name, value.size) for name, value in inputs.items()}
    b.output("out", size, list(build(b, syms)))
    return run_program(b.build(), **inputs)["out"]


@pytest.fixture
def rng():
    return np.random.default_rng(20)


def test_transforms(rng):
    E, r = random_rotation(rng), rng.normal(size=3)
    X, x = plucker(E, r), symbolic_transform(E, r)
    m = rng.normal(size=6)
    got = evaluate(lambda b, s: (x @ Motion(s["m"])).emit(b), {"m": m}, 6)
    np.testing.assert_allclose(got, X @ m, atol=1e-13)
    got = evaluate(lambda b, s: (x.T @ Force(s["m"])).emit(b), {"m": m}, 6)
    np.testing.assert_allclose(got, X.T @ m, atol=1e-13)
    got = evaluate(lambda b, s: (x.inv @ Motion(s["m"])).emit(b), {"m": m}, 6)
    np.testing.assert_allclose(got, np.linalg.solve(X, m), atol=1e-13)


def test_cross_products_and_sums(rng):
    v, m, f = rng.normal(size=6), rng.normal(size=6), rng.normal(size=6)
    data = {"v": v, "m": m, "f": f}
    got = evaluate(lambda b, s: Motion(s["v"]).cross(Motion(s["m"])).emit(b), data, 6)
    np.testing.assert_allclose(got, crm(v) @ m, atol=1e-13)
    got = evaluate(lambda b, s: Motion(s["v"]).cross_star(Force(s["f"])).emit(b), data, 6)
    np.testing.assert_allclose(got, -crm(v).T @ f, atol=1e-13)
    got = evaluate(
        lambda b, s: (Motion(s["v"]) - Motion(s["m"]) * Num(2.0) + 3.0 * Motion(s["m"])
                      ).emit(b), data, 6)
    np.testing.assert_allclose(got, v + m, atol=1e-13)
    got = evaluate(lambda b, s: [Motion(s["v"]).dot(Force(s["f"]))], data, 1)
    np.testing.assert_allclose(got, [v @ f], atol=1e-13)
    with pytest.raises(TypeError):
        Motion(nums(v)) + Force(nums(f))  # type: ignore[operator]


def test_inertias(rng):
    mass, c = 1.3, rng.normal(size=3)
    a = rng.normal(size=(3, 3))
    Ic = a @ a.T + np.eye(3)
    J = Ic - mass * skew(c) @ skew(c)
    M = np.block([[J, mass * skew(c)], [-mass * skew(c), mass * np.eye(3)]])  # eq. 2.63
    inertia = Inertia(Num(mass), vec3(nums(mass * c)),
                      (vec3(nums(J[0])), vec3(nums(J[1])), vec3(nums(J[2]))))
    E, r = random_rotation(rng), rng.normal(size=3)
    X, x = plucker(E, r), symbolic_transform(E, r)
    v = rng.normal(size=6)
    got = evaluate(lambda b, s: (inertia @ Motion(s["v"])).emit(b), {"v": v}, 6)
    np.testing.assert_allclose(got, M @ v, atol=1e-12)

    def moved(b, s):
        total = (inertia + x.T @ inertia @ x).emit(b)
        return [e for row in total.matrix() for e in row]

    got = evaluate(moved, {"u": np.zeros(1)}, 36).reshape(6, 6)
    np.testing.assert_allclose(got, M + X.T @ M @ X, atol=1e-12)

    P = rng.normal(size=(6, 6))
    P = P + P.T
    got = evaluate(lambda b, s: [e for row in (x.T @ ArticulatedInertia(
        np.array(s["P"]).reshape(6, 6).tolist()) @ x).emit(b).rows for e in row], {"P": P}, 36)
    np.testing.assert_allclose(got.reshape(6, 6), X.T @ P @ X, atol=1e-12)
    got = evaluate(lambda b, s: [e for row in (x @ Compliance(
        np.array(s["P"]).reshape(6, 6).tolist()) @ x.T).emit(b).rows for e in row], {"P": P}, 36)
    np.testing.assert_allclose(got.reshape(6, 6), X @ P @ X.T, atol=1e-12)
    other = symbolic_transform(np.eye(3), r)
    with pytest.raises(TypeError):
        x.T @ inertia @ other


def test_joint_and_force_maps(rng):
    S, rates, f = rng.normal(size=(6, 2)), rng.normal(size=2), rng.normal(size=6)
    U = rng.normal(size=(6, 2))
    data = {"S": S.T.copy(), "q": rates, "f": f, "U": U.T.copy()}

    def columns(flat):
        return [flat[:6], flat[6:]]

    got = evaluate(lambda b, s: (JointMap(columns(s["S"])) @ s["q"]).emit(b), data, 6)
    np.testing.assert_allclose(got, S @ rates, atol=1e-13)
    got = evaluate(lambda b, s: (JointMap(columns(s["S"])).T @ Force(s["f"])).emit(b), data, 2)
    np.testing.assert_allclose(got, S.T @ f, atol=1e-13)
    got = evaluate(lambda b, s: [e for row in (ForceMap(columns(s["U"])) @ JointMap(
        columns(s["S"])).T).rows for e in row], data, 36)
    np.testing.assert_allclose(got.reshape(6, 6), U @ S.T, atol=1e-13)
    # a + S θ adds the columns one by one, as the recursions spell it
    got = evaluate(lambda b, s: (Force(s["f"]) + ForceMap(columns(s["U"])) @ s["q"]).emit(b),
                   data, 6)
    np.testing.assert_allclose(got, f + U @ rates, atol=1e-13)


def test_pose_composition(rng):
    Ra, pa, Rb, pb = random_rotation(rng), rng.normal(size=3), random_rotation(rng), rng.normal(
        size=3)

    def pose(R, p):
        return Pose((vec3(nums(R[0])), vec3(nums(R[1])), vec3(nums(R[2]))), vec3(nums(p)))

    got = evaluate(lambda b, s: (pose(Ra, pa) * pose(Rb, pb)).emit(b).rows(),
                   {"u": np.zeros(1)}, 12)
    H = np.eye(4)
    H[:3, :3], H[:3, 3] = Ra @ Rb, Ra @ pb + pa
    np.testing.assert_allclose(got.reshape(3, 4), H[:3], atol=1e-13)
    X = plucker(Rb.T, pb)  # the transform into the frame posed at (Rb, pb)
    got_x = pose(Rb, pb).transform()
    m = rng.normal(size=6)
    got = evaluate(lambda b, s: (got_x @ Motion(s["m"])).emit(b), {"m": m}, 6)
    np.testing.assert_allclose(got, X @ m, atol=1e-13)


def test_deferred_products_emit_when_their_sum_is_emitted(rng):
    """``f + X.T @ g`` is a Pending value: nothing is emitted until ``emit(b)``, then the
    transform's temporaries come first and the sum's last."""
    E, r = random_rotation(rng), rng.normal(size=3)
    x = symbolic_transform(E, r)
    b = ProgramBuilder("t")
    f, g = Force(b.input("f", 6)), Force(b.input("g", 6))
    total = f + x.T @ g
    assert isinstance(total, Pending)
    assert b.build().assignments == ()
    out = total.emit(b)
    program = b.build()
    assert len(program.assignments) > 6
    last = {a[0] for a in program.assignments[-6:]}
    assert {e for e in out if not e.is_number} <= last | {-e for e in last}
