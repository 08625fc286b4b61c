"""Symbolic spatial algebra (symgen.spatial) against plain numpy 6×6 matrices
(Featherstone 2008, §2), and its exploitation of structural zeros."""

from __future__ import annotations

import numpy as np
import pytest

from symgen.ir.counts import op_counts
from symgen.ir.expr import Num
from symgen.ir.printer import evaluate as run_program
from symgen.ir.program import ProgramBuilder
from symgen.reference.spatial import pose_to_motion_transform, skew, spatial_inertia
from symgen.spatial import (
    RigidInertia,
    Transform,
    force_cross,
    motion_cross,
    motion_sym6_to_child,
    rigid_inertia,
    rotation_about,
    sym6_to_parent,
)


def random_rotation(rng) -> np.ndarray:
    qm, r = np.linalg.qr(rng.standard_normal((3, 3)))
    qm = qm @ np.diag(np.sign(np.diag(r)))
    return qm if np.linalg.det(qm) > 0 else -qm


def numeric_transform(rng):
    """(R, p, X): a random pose of a child in its parent and its Plücker transform
    parent → child, built by the reference code."""
    rot, p = random_rotation(rng), rng.normal(size=3)
    return rot, p, pose_to_motion_transform(rot, p)


def constant_transform(rot, p) -> Transform:
    """The same transform with numeric entries (E = Rᵀ)."""
    return Transform(
        tuple(tuple(Num(rot[j][i]) for j in range(3)) for i in range(3)),
        tuple(Num(x) for x in p),
    )


def evaluate(build, inputs: dict[str, np.ndarray], size: int) -> np.ndarray:
    """Build a one-output program with ``build(b, symbols)`` and evaluate it."""
    b = ProgramBuilder("t")
    syms = {name: b.input(name, value.size) for name, value in inputs.items()}
    b.output("out", size, build(b, syms))
    return run_program(b.build(), **inputs)["out"]


def random_symmetric(rng, n=6) -> np.ndarray:
    a = rng.normal(size=(n, n))
    return a + a.T


@pytest.mark.parametrize("seed", range(3))
def test_transforms_of_vectors(seed):
    rng = np.random.default_rng(seed)
    rot, p, X = numeric_transform(rng)
    x = constant_transform(rot, p)
    m = rng.normal(size=6)
    got = evaluate(lambda b, s: x.motion(b, s["m"]), {"m": m}, 6)
    np.testing.assert_allclose(got, X @ m, atol=1e-13)
    got = evaluate(lambda b, s: x.motion_to_parent(b, s["m"]), {"m": m}, 6)
    np.testing.assert_allclose(got, np.linalg.solve(X, m), atol=1e-13)
    got = evaluate(lambda b, s: x.force_to_parent(b, s["m"]), {"m": m}, 6)
    np.testing.assert_allclose(got, X.T @ m, atol=1e-13)


def test_cross_products():
    rng = np.random.default_rng(4)
    v, m = rng.normal(size=6), rng.normal(size=6)
    crm = np.block([[skew(v[:3]), np.zeros((3, 3))], [skew(v[3:]), skew(v[:3])]])
    got = evaluate(lambda b, s: motion_cross(b, s["v"], s["m"]), {"v": v, "m": m}, 6)
    np.testing.assert_allclose(got, crm @ m, atol=1e-13)
    got = evaluate(lambda b, s: force_cross(b, s["v"], s["m"]), {"v": v, "m": m}, 6)
    np.testing.assert_allclose(got, -crm.T @ m, atol=1e-13)


@pytest.mark.parametrize("seed", range(3))
def test_inertia_transforms(seed):
    rng = np.random.default_rng(10 + seed)
    rot, p, X = numeric_transform(rng)
    x = constant_transform(rot, p)
    mass, com = 1.7, rng.normal(size=3)
    ic = random_symmetric(rng, 3) + 6 * np.eye(3)
    expected = spatial_inertia(mass, com, ic)

    def body(b, s):
        inertia = rigid_inertia(b, Num(mass), [Num(c) for c in com],
                                [[Num(v) for v in row] for row in ic])
        return [e for row in inertia.matrix() for e in row]

    np.testing.assert_allclose(evaluate(body, {"u": np.zeros(1)}, 36).reshape(6, 6), expected,
                               atol=1e-13)

    def moved(b, s):
        inertia = rigid_inertia(b, Num(mass), [Num(c) for c in com],
                                [[Num(v) for v in row] for row in ic])
        return [e for row in inertia.to_parent(b, x).matrix() for e in row]

    got = evaluate(moved, {"u": np.zeros(1)}, 36).reshape(6, 6)
    np.testing.assert_allclose(got, X.T @ expected @ X, atol=1e-12)

    P = random_symmetric(rng)
    got = evaluate(lambda b, s: [e for row in sym6_to_parent(
        b, x, np.array(s["P"]).reshape(6, 6).tolist()) for e in row], {"P": P}, 36)
    np.testing.assert_allclose(got.reshape(6, 6), X.T @ P @ X, atol=1e-12)
    got = evaluate(lambda b, s: [e for row in motion_sym6_to_child(
        b, x, np.array(s["P"]).reshape(6, 6).tolist()) for e in row], {"P": P}, 36)
    np.testing.assert_allclose(got.reshape(6, 6), X @ P @ X.T, atol=1e-12)


def test_rigid_inertia_times_velocity():
    rng = np.random.default_rng(5)
    mass, com, ic = 2.0, rng.normal(size=3), np.diag([0.3, 0.4, 0.5])
    v = rng.normal(size=6)

    def body(b, s):
        inertia = rigid_inertia(b, Num(mass), [Num(c) for c in com],
                                [[Num(x) for x in row] for row in ic])
        assert isinstance(inertia, RigidInertia)
        return inertia.times(b, s["v"])

    np.testing.assert_allclose(evaluate(body, {"v": v}, 6),
                               spatial_inertia(mass, com, ic) @ v, atol=1e-13)


def test_no_multiplication_by_a_structural_zero():
    """A joint about z at offset (0, 0, d) applied to a general motion vector: r×ω has two
    products, E ω and E v four each; every zero entry of E and r vanishes."""
    b = ProgramBuilder("t")
    c, s_ = b.input("cs", 2)
    m = b.input("m", 6)
    rot = rotation_about((Num(0.0), Num(0.0), Num(1.0)), c, s_)
    x = Transform(tuple(tuple(rot[j][i] for j in range(3)) for i in range(3)),
                  (Num(0.0), Num(0.0), Num(0.5)))
    b.output("out", 6, x.motion(b, m))
    assert op_counts(b.build()) == {"add": 6, "mul": 10, "div": 0, "sqrt": 0, "trig": 0,
                                     "other": 0, "total": 16}
