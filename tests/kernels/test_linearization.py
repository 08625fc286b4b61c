"""The linearisation kernel (A, B of ẋ = f(x, u) in the tangent space; docs/derivatives.md),
compiled, against

- a simple pendulum (point mass m at distance l on a revolute joint, gravity −g along y,
  θ from the x axis): θ̈ = (τ − m g l cos θ)/(m l²), so A = [[0, 1], [g sin θ / l, 0]] and
  B = [[0], [1/(m l²)]], derived by hand;
- a cart-pole (cart of mass M on a prismatic x joint, a point mass m at distance l on a
  revolute joint on the cart): the Lagrangian T = ½Mẋ² + ½m((ẋ − l θ̇ sin θ)² + (l θ̇ cos θ)²),
  V = m g l sin θ written by hand, its equations M(q)q̈ = τ − C(q, q̇) − ∂V/∂q and their
  derivatives taken by sympy (no symgen code);
- the Lie-group rows (spherical and free joints, δ̇ = ν − ad_v δ): the tangent error of a
  perturbed state carried along the flow, measured with Pinocchio's ``integrate`` and
  ``difference``: δ(h, ε) = difference(q ⊕ h v, (q ⊕ ε eᵢ) ⊕ h v), whose mixed derivative
  ∂²δ/∂h∂ε at 0 is column i of −ad_v, by central differences in both (ε = h = 1e-4:
  truncation ~1e-8, rounding ~1e-16/(hε) = 1e-8; bound 1e-6 relative).

Tolerances: 1e-12 relative for the hand and sympy values (exact formulas evaluated in
double). States: seed 5.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import symgen
from symgen.io.builder import ModelBuilder

M_CART, M_POLE, LENGTH, G = 1.5, 0.3, 0.7, 9.81


def pendulum() -> symgen.Model:
    b = ModelBuilder("pendulum", root="ground", gravity=(0.0, -G, 0.0))
    b.body("bob", mass=M_POLE, com=(LENGTH, 0.0, 0.0), inertia=(0.0, 0.0, 0.0))
    b.joint("theta", "revolute", "ground", "bob", axis=(0, 0, 1))
    return b.build()


def cart_pole() -> symgen.Model:
    b = ModelBuilder("cart_pole", root="ground", gravity=(0.0, -G, 0.0))
    b.body("cart", mass=M_CART, inertia=(0.0, 0.0, 0.0))
    b.body("bob", mass=M_POLE, com=(LENGTH, 0.0, 0.0), inertia=(0.0, 0.0, 0.0))
    b.joint("x", "prismatic", "ground", "cart", axis=(1, 0, 0))
    b.joint("theta", "revolute", "cart", "bob", axis=(0, 0, 1))
    return b.build()


def _rel(a, b) -> float:
    b = np.asarray(b, float)
    return float(np.max(np.abs(np.asarray(a) - b)) / max(1.0, float(np.max(np.abs(b)))))


def test_pendulum_linearization_is_the_hand_derived_one():
    lib = symgen.compile_kernels(symgen.generate(pendulum(), ["linearization"]), vectorize=None)
    rng = np.random.default_rng(5)
    for _ in range(4):
        theta, rate, tau = rng.uniform(-np.pi, np.pi), rng.normal(), rng.normal()
        a, b = lib.linearization([theta], [rate], [tau])
        assert _rel(a, [[0.0, 1.0], [G * np.sin(theta) / LENGTH, 0.0]]) <= 1e-12
        assert _rel(b, [[0.0], [1.0 / (M_POLE * LENGTH**2)]]) <= 1e-12


def cart_pole_reference():
    """A(x, θ, ẋ, θ̇, τ) and B of the cart-pole from its hand-written Lagrangian (sympy)."""
    x, th, xd, thd = sympy.symbols("x theta xd thetad", real=True)
    tau = sympy.symbols("tau0 tau1", real=True)
    q, qd = sympy.Matrix([x, th]), sympy.Matrix([xd, thd])
    kinetic = (M_CART * xd**2 + M_POLE * ((xd - LENGTH * thd * sympy.sin(th))**2
                                         + (LENGTH * thd * sympy.cos(th))**2)) / 2
    potential = M_POLE * G * LENGTH * sympy.sin(th)
    mass = sympy.hessian(kinetic, qd)
    # d/dt ∂T/∂q̇ − ∂T/∂q + ∂V/∂q = τ:  M q̈ = τ − (∂(∂T/∂q̇)/∂q) q̇ + ∂T/∂q − ∂V/∂q
    dtdqd = sympy.Matrix([kinetic.diff(s) for s in qd])
    rhs = (sympy.Matrix(tau) - dtdqd.jacobian(q) * qd
           + sympy.Matrix([kinetic.diff(s) for s in q]) - sympy.Matrix([potential.diff(s)
                                                                         for s in q]))
    qdd = mass.LUsolve(rhs)
    state = [x, th, xd, thd]
    a = sympy.Matrix.vstack(sympy.Matrix.hstack(sympy.zeros(2), sympy.eye(2)),
                            qdd.jacobian(state))
    b = sympy.Matrix.vstack(sympy.zeros(2), qdd.jacobian(sympy.Matrix(tau)))
    return sympy.lambdify([state, tau], [a, b], "numpy")


def test_cart_pole_linearization_matches_its_lagrangian():
    lib = symgen.compile_kernels(symgen.generate(cart_pole(), ["linearization"]), vectorize=None)
    expected = cart_pole_reference()
    rng = np.random.default_rng(5)
    for _ in range(4):
        q, v, tau = rng.normal(size=2), rng.normal(size=2), rng.normal(size=2)
        a, b = lib.linearization(q, v, tau)
        a_ref, b_ref = expected([*q, *v], list(tau))
        assert _rel(a, a_ref) <= 1e-12 and _rel(b, b_ref) <= 1e-12


def free_and_spherical() -> symgen.Model:
    b = ModelBuilder("two_bodies", root="world")
    b.body("base", mass=2.0, com=(0.1, 0.0, 0.05), inertia=(0.2, 0.3, 0.4))
    b.body("ball", mass=0.5, com=(0.0, 0.0, -0.3), inertia=(0.01, 0.02, 0.015))
    b.joint("root", "free", "world", "base")
    b.joint("shoulder", "spherical", "base", "ball", xyz=(0.2, 0.0, 0.0))
    return b.build()


def test_lie_rows_are_the_first_order_tangent_error_dynamics():
    pin = pytest.importorskip("pinocchio")
    from symgen.peers.pinocchio import Bridge, pin_model_from_symgen

    model = free_and_spherical()
    lib = symgen.compile_kernels(symgen.generate(model, ["linearization"]), vectorize=None)
    br = Bridge(model, pin_model_from_symgen(model))
    rng = np.random.default_rng(5)
    q = symgen.reference.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    a, _ = lib.linearization(q, v, np.zeros(model.nv))
    qp, vp = br.q_to_pin(q), br.v_to_pin(v)
    eps = h = 1e-4

    def delta(t: float, i: int, s: float) -> np.ndarray:
        """difference(q ⊕ t v, (q ⊕ s eᵢ) ⊕ t v)."""
        e = np.zeros(model.nv)
        e[i] = s
        start = pin.integrate(br.pin_model, qp, br.v_to_pin(e))
        return br.v_from_pin(pin.difference(br.pin_model, pin.integrate(br.pin_model, qp,
                                                                        t * vp),
                                            pin.integrate(br.pin_model, start, t * vp)))

    # ∂²δ/∂t∂s at 0 by central differences in both (truncation O(h² + ε²) ~ 1e-8)
    measured = np.column_stack([
        (delta(h, i, eps) - delta(h, i, -eps) - delta(-h, i, eps) + delta(-h, i, -eps))
        / (4 * h * eps) for i in range(model.nv)])
    assert _rel(a[:model.nv, :model.nv], measured) <= 1e-6
