"""The natural models' derivatives, built sparsely and without sympy's assumption queries
(:mod:`symgen.formulations.natural.derivatives`), against ``sympy.diff`` itself (the same
trees, so the generated programs do not change), and their numeric counterparts
(:mod:`symgen.formulations.natural.evaluate`) against central differences."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
import sympy
from mechanisms import n_four_bar
from paths import EXAMPLES

import symgen
from symgen.formulations.natural.derivatives import derivative, gradient, sparse_gradient
from symgen.formulations.natural.evaluate import Unsupported, value_and_gradient
from symgen.formulations.natural.model import Spring
from symgen.natural import natural_model

EXAMPLE_MODELS = ["four_bar", "slider_crank", "rssr", "andrews_squeezer", "spinning_top"]


@cache
def example(name: str):
    if name == "chain3":
        return natural_model(n_four_bar(3))
    return natural_model(symgen.load(EXAMPLES / f"{name}.yaml"))


def same_tree(a: sympy.Expr, b: sympy.Expr) -> bool:
    return sympy.srepr(a) == sympy.srepr(b)


x, y, z = sympy.symbols("x y z", real=True)
p = sympy.Symbol("p", positive=True)


@pytest.mark.parametrize("expr", [
    x * y + 2.5 * x**2 - z,
    3.0 * (x - 1.5 * y) * (0.2 * x + z) * (y - z),
    -1.0 * (sympy.atan2(x * y - z, x + 0.5 * z**2) - 0.3),
    sympy.atan2(2.0 * x, 3.0 * y),
    sympy.sqrt((x - y) ** 2 + z**2) * p,
    sympy.sin(x * y) + x**3,  # sin: left to sympy.diff
    p * x + 4.0,
])
def test_derivative_is_sympy_diff(expr):
    for s in (x, y, z, p):
        assert same_tree(derivative(expr, s), sympy.diff(expr, s))
    assert gradient(expr, [x, y, z]) == [sympy.diff(expr, s) for s in (x, y, z)]
    index = {x: 0, y: 1, z: 2}
    assert sparse_gradient(expr, index) == [
        (i, sympy.diff(expr, s)) for s, i in index.items() if sympy.diff(expr, s) != 0]


@pytest.mark.parametrize("name", EXAMPLE_MODELS)
def test_model_derivatives_are_sympy_diff(name):
    nm = example(name)
    dense = sympy.Matrix(nm.constraints).jacobian(nm.symbols)
    assert type(nm.jacobian) is type(dense) and nm.jacobian.shape == dense.shape
    assert all(same_tree(a, b) for a, b in zip(nm.jacobian, dense, strict=True))
    qd = sympy.Matrix(nm._rate_symbols)
    jdq = (dense * qd).jacobian(nm.symbols) * qd  # Φ̇_q q̇ = (∂(Φ_q q̇)/∂q) q̇
    assert all(same_tree(a, b) for a, b in zip(nm.jacobian_dot_qdot, jdq, strict=True))
    for name_, jc in list(nm.joint_coordinates.items())[:2]:  # sympy.diff is slow on them
        assert all(same_tree(a, sympy.diff(jc.expr, s))
                   for a, s in zip(nm.joint_gradient(name_), nm.symbols, strict=True))


@pytest.mark.parametrize("name", [*EXAMPLE_MODELS, "chain3"])
def test_numeric_functions_match_the_symbolic_ones(name):
    nm = example(name)
    rng = np.random.default_rng(7)
    q = nm.q0 + 0.05 * rng.normal(size=nm.n)
    qd = rng.normal(size=nm.n)
    jac = sympy.lambdify([nm.symbols], nm.jacobian, "numpy")(q)
    np.testing.assert_allclose(nm.phi_q(q), jac, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(nm._jacobian_at(q), jac, rtol=1e-12, atol=1e-12)
    jdq = sympy.lambdify([nm.symbols, nm._rate_symbols], nm.jacobian_dot_qdot, "numpy")(q, qd)
    np.testing.assert_allclose(nm.phi_q_dot_qdot(q, qd), np.ravel(jdq), rtol=1e-12, atol=1e-12)
    assert nm.rank(nm.q0) == np.linalg.matrix_rank(jac, tol=1e-9 * max(np.abs(jac).max(), 1))
    names = list(nm.joint_coordinates)[:2]
    values = nm.joint_gradient_values(q)
    for k, name_ in enumerate(names):
        want = sympy.lambdify([nm.symbols], nm.joint_gradient(name_), "numpy")(q)
        np.testing.assert_allclose(values[k], want, rtol=1e-10, atol=1e-12)
    for name_, jc in nm.joint_coordinates.items():
        want = float(sympy.lambdify([nm.symbols], jc.expr, "numpy")(q))
        assert nm.joint_values[name_](q) == pytest.approx(want, abs=1e-12)
        for part, grads in zip(jc.parts, nm.part_gradients(name_), strict=True):
            assert grads == [(i, sympy.diff(part, s)) for i, s in enumerate(nm.symbols)
                             if sympy.diff(part, s) != 0]


def test_value_and_gradient_against_central_differences():
    """A product, a power, a square root and atan2; the step h = 1e-6 leaves a truncation
    error O(h²) ≈ 1e-12 and a rounding error O(ε/h) ≈ 1e-10 on these O(1) values."""
    expr = sympy.atan2(x * y - 0.3 * z, x + 0.5 * z) * sympy.sqrt(y**2 + z**2) + 2.0 * x * z
    index = {x: 0, y: 1, z: 2}
    point = np.array([0.4, -0.7, 1.1])
    value, grad = value_and_gradient(expr, point, index)
    fn = sympy.lambdify([[x, y, z]], expr, "numpy")
    assert value == pytest.approx(fn(point), abs=1e-14)
    h = 1e-6
    for i in range(3):
        step = np.eye(3)[i] * h
        assert grad[i] == pytest.approx((fn(point + step) - fn(point - step)) / (2 * h),
                                        abs=1e-8)
    with pytest.raises(Unsupported):
        value_and_gradient(sympy.sin(x), point, index)


def test_spring_forces_keep_the_dense_formula():
    """Q of a spring (book eq. 4.102-4.107) built over the coordinates its points involve
    equals the formula over all coordinates."""
    model = symgen.load(EXAMPLES / "slider_crank.yaml")
    spring = Spring("ground", (0.2, 0.3, 0.0), "crank", (0.05, 0.0, 0.0), 40.0, 0.5, None)
    nm = natural_model(model, springs=[spring])
    mod, symbols, rates = nm.modeller, nm.symbols, nm._rate_symbols
    ra, wa = mod.point_expr("ground", spring.point_a)
    rb, wb = mod.point_expr("crank", spring.point_b)
    d = sympy.Matrix(rb - ra)
    jac = d.jacobian(symbols)
    length = sympy.sqrt(d.dot(d))
    rate = d.dot(jac * sympy.Matrix(rates)) / length
    rest = float(np.linalg.norm(np.asarray(wb, float) - np.asarray(wa, float)))
    force = spring.stiffness * (length - rest) + spring.damping * rate
    want = []
    for s in range(len(symbols)):
        g = d.dot(jac[:, s]) / length
        want.append(sympy.Integer(0) - force * g if g != 0 else sympy.Integer(0))
    assert all(same_tree(a, b) for a, b in zip(nm.spring_forces, want, strict=True))
