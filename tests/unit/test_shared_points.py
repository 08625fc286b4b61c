"""One basic point per pin, shared by every body that meets there (García de Jalón & Bayo
1994, ch. 2): coordinate counts of a chain of parallelogram four-bars (2N + 2), pins of
three bodies (planar and spatial), pins that only coincide in the drawing (no merge), the
example mechanisms (unchanged), and the chain's accelerations against its exact one-DOF
reduction."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
from mechanisms import G, n_four_bar
from paths import EXAMPLES

import symgen
from symgen import reference as ref
from symgen.formulations.natural.planar import planar_model
from symgen.formulations.natural.spatial import spatial_model
from symgen.io.builder import ModelBuilder
from symgen.joints import joint_kind
from symgen.reference.natural import consistent_velocities, lagrange_accelerations

ROD = {"mass": 1.0, "com": (0.5, 0.0, 0.0), "inertia": (1e-3, 1.0 / 12, 1.0 / 12)}
INERTIA = ((0.02, 0.001, 0.0), (0.001, 0.03, 0.002), (0.0, 0.002, 0.015))


def members(nm, name: str) -> set[str]:
    """Bodies of the basic point or vector called ``name``."""
    mod = nm.modeller
    found = [e for e in getattr(mod, "points", None) or mod.entities if e.name == name]
    assert len(found) == 1, name
    return {mod.model.body_names[b] for b in found[0].members}


def gravity_accelerations(nm, q, qd) -> np.ndarray:
    """q̈ of [[M, Φ_qᵀ], [Φ_q, 0]] [q̈; λ] = [Q; −Φ̇_q q̇] (book eq. 5.10) under gravity alone
    (the constant Q), solved directly."""
    pq, n = nm.phi_q(q), nm.n
    kkt = np.block([[nm.mass_matrix, pq.T], [pq, np.zeros((nm.m, nm.m))]])
    rhs = np.concatenate([nm.forces, -nm.phi_q_dot_qdot(q, qd)])
    return np.linalg.solve(kkt, rhs)[:n]


def assert_tree_dynamics(model, nm, seed: int = 0) -> None:
    """For a tree ``model``: DOF = nv, independent constraints, joint readers, and the
    Lagrange-multiplier accelerations equal the spatial-operator forward dynamics mapped to
    natural coordinates (central difference of the natural velocities, h = 1e-6: error
    O(h²) ≈ 1e-12, rounding ≈ 1e-10)."""
    assert nm.dof == model.nv and nm.rank(nm.q0) == nm.m
    mod = nm.modeller
    rng = np.random.default_rng(seed)
    for _ in range(2):
        jq, jv = ref.random_configuration(model, rng), rng.normal(size=model.nv)
        q, qd = mod.coordinates_at(jq), mod.velocities_at(jq, jv)
        assert np.max(np.abs(nm.phi(q))) < 1e-12
        assert np.max(np.abs(nm.phi_q(q) @ qd)) < 1e-12
        k = 0
        for joint in model.joints:
            if joint.type.nq == 1:
                diff = (nm.joint_values[joint.name](q) - jq[k] + math.pi) % (2 * math.pi)
                assert abs(diff - math.pi) < 1e-12, joint.name
            k += joint.type.nq
        qdd = gravity_accelerations(nm, q, qd)
        a = ref.forward_dynamics(model, jq, jv, np.zeros(model.nv))

        def velocities(dt, jq=jq, jv=jv, a=a):
            return mod.velocities_at(ref.integrate(model, jq, jv + 0.5 * dt * a, dt),
                                     jv + dt * a)

        expected = (velocities(1e-6) - velocities(-1e-6)) / 2e-6
        assert np.max(np.abs(qdd - expected)) < 1e-7 * max(np.max(np.abs(expected)), 1)


# ---------------------------------------------------------------------- planar chain
@cache
def chain(n: int):
    model = n_four_bar(n)
    return model, planar_model(model)


@pytest.mark.parametrize("n", [2, pytest.param(40, marks=pytest.mark.slow)])
def test_four_bar_chain_has_two_coordinates_per_crank_tip(n):
    """N parallelograms: the N + 1 crank tips are the only moving points (2N + 2
    coordinates), one distance per bar (2N + 1 independent constraints), one DOF."""
    _, nm = chain(n)
    assert nm.n == 2 * n + 2
    assert nm.m == 2 * n + 1 and nm.dof == 1
    np.testing.assert_allclose(nm.phi(nm.q0), 0, atol=1e-14)
    inner = members(nm, f"tip_{n - 1}")  # the tip of crank n − 1, named after a tree joint
    assert inner == {f"crank_{n - 1}", f"coupler_{n - 2}", f"coupler_{n - 1}"}


def crank_angle_acceleration(nm, q, qdd) -> float:
    """θ̈ of crank 0 from its tip (cos θ, sin θ): θ̈ = −sin θ ẍ + cos θ ÿ."""
    x, y = (nm.coordinates.index(f"tip_0.{c}") for c in "xy")
    theta = math.atan2(q[y], q[x])
    return -math.sin(theta) * qdd[x] + math.cos(theta) * qdd[y]


def exact_crank_acceleration(n: int, theta: float) -> float:
    """The parallelogram chain reduced to θ (m = L = 1): T = ½[(N+1)/3 + N]θ̇²,
    V = g[(N+1)/2 + N] sin θ, so θ̈ = −g[(N+1)/2 + N] cos θ / [(N+1)/3 + N]."""
    return -G * ((n + 1) / 2 + n) * math.cos(theta) / ((n + 1) / 3 + n)


def test_four_bar_chain_accelerations_match_the_one_dof_reduction():
    n = 2
    model, nm = chain(n)
    mod = nm.modeller
    # assembled, with the least-energy consistent velocity for θ̇ = 1.7 rad/s
    q = nm.q0
    rate = 1.7
    qd = consistent_velocities(nm, q, {nm.coordinates.index("tip_0.x"): -math.sin(math.pi / 4)
                                       * rate})
    qdd, _ = lagrange_accelerations(nm, q, qd)
    assert abs(crank_angle_acceleration(nm, q, qdd)
               - exact_crank_acceleration(n, math.pi / 4)) < 1e-10
    # moved by δ through the spanning tree: cranks turn by δ, couplers stay horizontal
    delta = 0.6
    sign = {"pivot": 1.0, "tip": -1.0}
    jq = np.array([sign[j.split("_")[0]] * delta for j in model.joint_names])
    jv = jq / delta * rate
    q, qd = mod.coordinates_at(jq), mod.velocities_at(jq, jv)
    assert np.max(np.abs(nm.phi(q))) < 1e-14
    assert np.max(np.abs(nm.phi_q(q) @ qd)) < 1e-14
    for name in model.joint_names:
        assert abs(nm.joint_values[name](q) - sign[name.split("_")[0]] * delta) < 1e-12
    for k in range(n):  # coupler k → crank k + 1: the crank turned by δ
        assert abs(nm.joint_values[f"close_{k}"](q) - delta) < 1e-12
    qdd, _ = lagrange_accelerations(nm, q, qd)
    assert abs(crank_angle_acceleration(nm, q, qdd)
               - exact_crank_acceleration(n, math.pi / 4 + delta)) < 1e-10
    # body poses: crank 1 at 45° + δ about its pivot (1, 0), coupler 0 horizontal at tip 0
    for body, angle, origin in (("crank_1", math.pi / 4 + delta, (1.0, 0.0)),
                                ("coupler_0", 0.0, (math.cos(math.pi / 4 + delta),
                                                    math.sin(math.pi / 4 + delta)))):
        rot, p = mod.body_pose_expr(model.body_names.index(body))
        values = dict(zip(nm.symbols, q, strict=True))
        rot = np.array(rot.subs(values), float)
        np.testing.assert_allclose(rot[:2, 0], [math.cos(angle), math.sin(angle)], atol=1e-14)
        np.testing.assert_allclose(np.array(p.subs(values), float).ravel()[:2], origin,
                                   atol=1e-14)
    # the middle of coupler 1, half a bar right of the tip of crank 1
    middle = mod.point_expr("coupler_1", (0.5, 0.0, 0.0))[0].subs(values)
    tip = (1.0 + math.cos(math.pi / 4 + delta) + 0.5, math.sin(math.pi / 4 + delta))
    np.testing.assert_allclose(np.array(middle, float).ravel(), tip, atol=1e-14)


# ---------------------------------------------------------------------- planar pins
def three_on_one_pin(order: str) -> symgen.Model:
    """ground → A (pivot at the origin, 30°); B and C pinned to A's tip, declared in
    ``order``; "chain": C hangs from B at the same pin instead of from A."""
    b = ModelBuilder(f"three_on_a_pin_{order}", root="ground", plane="xy",
                     gravity=(0.0, -G, 0.0))
    for name in "ABC":
        b.body(name, **ROD)
    b.joint("a", "revolute", "ground", "A", rpy=(0, 0, 0.5))
    joints = {"b": ("A", "B", (1.0, 0.0, 0.0), (0, 0, -1.2)),
              "c": ("A", "C", (1.0, 0.0, 0.0), (0, 0, 0.7))}
    if order == "chain":
        joints["c"] = ("B", "C", (0.0, 0.0, 0.0), (0, 0, 1.9))
    for name in ("cb" if order == "reversed" else "bc"):
        parent, child, xyz, rpy = joints[name]
        b.joint(name, "revolute", parent, child, xyz=xyz, rpy=rpy)
    return b.build()


@pytest.mark.parametrize("order", ["declared", "reversed", "chain"])
def test_three_bodies_on_one_planar_pin_share_one_point(order):
    """A's tip, B and C: one point (two coordinates), whatever the order of the joints;
    B and C each get their centre of mass: n = 6, one distance per body, DOF 3."""
    model = three_on_one_pin(order)
    nm = planar_model(model)
    pins = [p for p in nm.modeller.points if p.name in ("b", "c")]
    assert len(pins) == 1 and (nm.n, nm.m) == (6, 3)
    assert members(nm, pins[0].name) == {"A", "B", "C"}
    assert_tree_dynamics(model, nm)


def test_pivots_on_the_ground_at_one_place_are_one_constant_point():
    """A and B both pivot on the ground at the origin: one (constant) point of A and B;
    each body adds its centre of mass (n = 4, one distance each)."""
    b = ModelBuilder("two_on_the_ground", root="ground", plane="xy", gravity=(0.0, -G, 0.0))
    b.body("A", **ROD)
    b.body("B", **ROD)
    b.joint("a", "revolute", "ground", "A", rpy=(0, 0, 0.4))
    b.joint("b", "revolute", "ground", "B", rpy=(0, 0, 2.1))
    model = b.build()
    nm = planar_model(model)
    points = nm.modeller.points
    assert [p.name for p in points if p.fixed] == ["a"] and members(nm, "a") == {"A", "B"}
    assert (nm.n, nm.m) == (4, 2)
    assert_tree_dynamics(model, nm)


def crossing(spatial: bool) -> symgen.Model:
    """Two arms from the ground, A from (0, 0, 0) at 45° and B from (1, 0, 0) at 135°,
    cross at (½, ½, 0); C is pinned to A and D to B at that crossing: two pins that
    coincide in the drawing but share no body (revolute about z, or spherical)."""
    b = ModelBuilder(f"crossing_{'spatial' if spatial else 'planar'}", root="ground",
                     plane=None if spatial else "xy", gravity=(0.0, -G, 0.0))
    for name in "ABCD":
        b.body(name, mass=1.0, com=(0.5, 0.0, 0.1 if spatial else 0.0),
               inertia=INERTIA if spatial else ROD["inertia"])
    b.joint("a", "revolute", "ground", "A", rpy=(0, 0, math.pi / 4))
    b.joint("b", "revolute", "ground", "B", xyz=(1.0, 0.0, 0.0), rpy=(0, 0, 3 * math.pi / 4))
    pin = "spherical" if spatial else "revolute"
    b.joint("c", pin, "A", "C", xyz=(math.sqrt(0.5), 0.0, 0.0))
    b.joint("d", pin, "B", "D", xyz=(math.sqrt(0.5), 0.0, 0.0))
    return b.build()


@pytest.mark.parametrize("spatial", [False, True])
def test_pins_sharing_no_body_are_not_merged(spatial):
    model = crossing(spatial)
    nm = spatial_model(model) if spatial else planar_model(model)
    mod = nm.modeller
    found = [p for p in (mod.entities if spatial else mod.points) if p.name in ("c", "d")]
    assert len(found) == 2
    np.testing.assert_allclose(found[0].world, found[1].world, atol=1e-15)
    assert members(nm, "c") == {"A", "C"} and members(nm, "d") == {"B", "D"}
    assert_tree_dynamics(model, nm)


# ---------------------------------------------------------------------- spatial pins
def spatial_pin(kind: str) -> symgen.Model:
    """ground -R(y)- l1, and at l1's tip P: "spherical" — l2 and l3 on spherical joints;
    "revolute" — l2 on a revolute about x, l3 on a revolute about −x (antiparallel) and l4
    on a revolute about x from l2 (parallel, through l2)."""
    b = ModelBuilder(f"spatial_{kind}_pin", root="ground")
    names = ("l1", "l2", "l3") if kind == "spherical" else ("l1", "l2", "l3", "l4")
    for k, name in enumerate(names):
        b.body(name, mass=1.0 + 0.1 * k, com=(0.05, 0.02 * k, -0.2), inertia=INERTIA)
    tip = (0.0, 0.0, -0.4)
    b.joint("j1", "revolute", "ground", "l1", axis=(0, 1, 0))
    if kind == "spherical":
        b.joint("p2", "spherical", "l1", "l2", xyz=tip)
        b.joint("p3", "spherical", "l1", "l3", xyz=tip, rpy=(0.3, 0.2, 0.1))
    else:
        b.joint("p2", "revolute", "l1", "l2", xyz=tip, axis=(1, 0, 0))
        b.joint("p3", "revolute", "l1", "l3", xyz=tip, rpy=(0.0, 0.0, math.pi), axis=(1, 0, 0))
        b.joint("p4", "revolute", "l2", "l4", axis=(1, 0, 0))
    return b.build()


@pytest.mark.parametrize("kind", ["spherical", "revolute"])
def test_spatial_pin_shares_the_point_and_the_axis(kind):
    """One point for all the bodies at P; revolute joints there also share one axis vector
    (the antiparallel one reads its angle with the opposite sign); dynamics equal the
    tree's."""
    model = spatial_pin(kind)
    nm = spatial_model(model)
    mod = nm.modeller
    joints = [j.name for j in model.joints if j.name != "j1"]
    points = {mod.joint_entities[j]["point"] for j in joints}
    assert len(points) == 1
    assert members(nm, mod.entities[points.pop()].name) == set(model.body_names)
    if kind == "revolute":
        axes = {mod.joint_entities[j]["axis"] for j in joints}
        assert len(axes) == 1
        signs = {j: mod.joint_entities[j]["axis_sign"] for j in joints}
        assert signs == {"p2": 1.0, "p3": -1.0, "p4": 1.0}
        assert members(nm, mod.entities[axes.pop()].name) == {"l1", "l2", "l3", "l4"}
    assert_tree_dynamics(model, nm, seed=4)


# ---------------------------------------------------------------------- the examples
@pytest.mark.parametrize(("name", "counts"), [
    ("four_bar", (4, 3)),          # A, B moving; crank, coupler, rocker distances
    ("slider_crank", (8, 7)),      # A, B, slider's two points; 3 distances, 2 + 2 joint eqs
    ("rssr", (18, 16)),            # A, B; 4 vectors; 3 × 4 base eqs + 4 unit norms
    ("double_pendulum", (15, 13)),  # elbow point and axis; 2 vectors + 1 point; 5 + 3 + 5
])
def test_examples_keep_one_point_per_joint(name, counts):
    """No pin of the examples touches three bodies: every pin joint keeps its own point,
    named after it, and the counts are those of the two-body rules."""
    model = symgen.load(EXAMPLES / f"{name}.yaml")
    nm = planar_model(model) if model.plane == "xy" else spatial_model(model)
    assert (nm.n, nm.m) == counts
    pins = [j for j in [*model.joints, *model.loop_joints]
            if joint_kind(j.type).natural_planar == "revolute" or joint_kind(j.type).natural_pin]
    for joint in pins:
        assert members(nm, joint.name) <= {joint.parent, joint.child}
