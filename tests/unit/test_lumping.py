"""Fixed-joint merging keeps the spatial inertia exact (property-based, hypothesis).

Expected values use 6x6 spatial inertias and Plücker transforms (Featherstone 2008,
eqs. 2.62-2.66), written here independently of symgen's lumping code: the spatial inertia of
the merged body about its frame origin must equal I_a + X^T I_b X, X the motion transform
from the parent body frame to the merged child's frame.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from symgen.io.builder import ModelBuilder

finite = st.floats(-1.0, 1.0, allow_nan=False)
angles = st.floats(-np.pi, np.pi, allow_nan=False)
positive = st.floats(0.05, 2.0, allow_nan=False)


def skew(p: np.ndarray) -> np.ndarray:
    return np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])


def rpy_matrix(r: float, p: float, y: float) -> np.ndarray:
    rx = np.array([[1, 0, 0], [0, np.cos(r), -np.sin(r)], [0, np.sin(r), np.cos(r)]])
    ry = np.array([[np.cos(p), 0, np.sin(p)], [0, 1, 0], [-np.sin(p), 0, np.cos(p)]])
    rz = np.array([[np.cos(y), -np.sin(y), 0], [np.sin(y), np.cos(y), 0], [0, 0, 1]])
    return rz @ ry @ rx


def spatial_inertia(mass: float, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """[[I_c + m c~ c~^T, m c~], [m c~^T, m 1]] (Featherstone 2008, eq. 2.63)."""
    c = skew(com)
    return np.block([[inertia_com + mass * c @ c.T, mass * c], [mass * c.T, mass * np.eye(3)]])


def motion_transform(rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """Plücker transform from a frame A to a frame B whose pose in A is (R, p)."""
    e = rotation.T
    return np.block([[e, np.zeros((3, 3))], [-e @ skew(translation), e]])


@st.composite
def bodies(draw):
    mass = draw(positive)
    com = np.array([draw(finite) for _ in range(3)])
    a, b = draw(positive), draw(positive)
    c = draw(st.floats(abs(a - b) + 1e-3, a + b, allow_nan=False))  # triangle inequality
    r = rpy_matrix(draw(angles), draw(angles), draw(angles))
    return mass, com, r @ np.diag([a, b, c]) @ r.T


@settings(max_examples=60, deadline=None)
@given(
    bodies(),
    bodies(),
    st.lists(finite, min_size=3, max_size=3),
    st.lists(angles, min_size=3, max_size=3),
)
def test_merged_spatial_inertia_is_exact(body_a, body_b, xyz, rpy):
    builder = ModelBuilder("lumped")
    builder.body("a", mass=body_a[0], com=tuple(body_a[1]), inertia=body_a[2].tolist())
    builder.body("b", mass=body_b[0], com=tuple(body_b[1]), inertia=body_b[2].tolist())
    builder.joint("hinge", "revolute", parent="world", child="a", axis=(0, 0, 1))
    builder.joint("weld", "fixed", parent="a", child="b", xyz=xyz, rpy=rpy)
    model = builder.build()
    (merged,) = model.bodies
    got = spatial_inertia(
        float(merged.mass), np.array(merged.com, dtype=float), np.array(merged.inertia, dtype=float)
    )
    x = motion_transform(rpy_matrix(*rpy), np.array(xyz))
    expected = spatial_inertia(*body_a) + x.T @ spatial_inertia(*body_b) @ x
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)
    assert model.frame("b").body == "a"


@settings(max_examples=20, deadline=None)
@given(bodies(), bodies(), positive)
def test_parameter_mass_survives_merging(body_a, body_b, payload):
    """A payload mass declared as a parameter stays symbolic through lumping and resolves to
    the same body as merging the numeric value."""

    def build(mass_b):
        builder = ModelBuilder("payload")
        m = builder.parameter("payload", 1.0)
        builder.body("a", mass=body_a[0], com=tuple(body_a[1]), inertia=body_a[2].tolist())
        builder.body(
            "b",
            mass=m if mass_b is None else mass_b,
            com=tuple(body_b[1]),
            inertia=body_b[2].tolist(),
        )
        builder.joint("hinge", "revolute", parent="world", child="a", axis=(1, 0, 0))
        builder.joint("weld", "fixed", parent="a", child="b", xyz=(0.1, 0.2, 0.3))
        return builder.build()

    symbolic = build(None).resolve({"payload": payload}).bodies[0]
    numeric = build(payload).bodies[0]
    np.testing.assert_allclose(float(symbolic.mass), float(numeric.mass), rtol=1e-12)
    np.testing.assert_allclose(
        np.array(symbolic.com, dtype=float),
        np.array(numeric.com, dtype=float),
        rtol=1e-10,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        np.array(symbolic.inertia, dtype=float),
        np.array(numeric.inertia, dtype=float),
        rtol=1e-9,
        atol=1e-12,
    )
