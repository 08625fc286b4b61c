"""Generalized forces of a model's force elements (springs, dampers, joint actuators) in
natural coordinates, by virtual power (García de Jalón & Bayo 1994, §4.4):

- a point spring between r_a(q) and r_b(q): Q = −(k(L − L₀) + c L̇) ∂L/∂q
  (eq. 4.102-4.107; :func:`.model.spring_forces`, the one implementation of that law);
- a joint spring on a 1-DOF joint with coordinate θ(q): Q = −(k(θ − rest) + c θ̇) ∂θ/∂q;
- a joint actuator of force F: Q = F ∂θ/∂q.

θ(q) is the joint's coordinate relative to the assembled (zero) configuration, where the
joint's own coordinate is 0, so ``rest`` is compared with θ(q) directly.

Parameters: the natural modellers build from the model at its parameter defaults. A
parameter that only force elements use stays a runtime parameter (the kernels' ``params``
input, :attr:`.model.NaturalModel.force_parameters`); one that the geometry or inertia
also uses is taken at its default with them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import sympy

from symgen.errors import SymgenError
from symgen.formulations.natural.model import NaturalModel, spring_forces
from symgen.ir.expr import Elem, Expr
from symgen.model import Model
from symgen.model.elements import ForceElement, JointActuator, JointSpring, PointSpring
from symgen.model.force_elements import describe, labelled_values
from symgen.model.scalars import Scalar, free_parameter_names, is_symbolic


def force_parameter_names(model: Model) -> list[str]:
    """The parameters of ``model`` used by its force elements and by nothing else, in the
    model's order."""
    if not model.force_elements:
        return []
    used = {name for e in model.force_elements for _, x in labelled_values(e)
            for name in free_parameter_names(x)}
    elsewhere = dataclasses.replace(model, force_elements=()).used_parameters()
    return [p.name for p in model.parameters if p.name in used and p.name not in elsewhere]


def _unit(k: int) -> tuple[float, float, float]:
    return tuple(1.0 if i == k else 0.0 for i in range(3))  # type: ignore[return-value]


def _point(modeller, body: str, local: Sequence[Scalar]) -> tuple[sympy.Matrix, sympy.Matrix]:
    """A body point as an expression of q and its position at assembly. Both modellers'
    ``point_expr`` are affine in the body-frame coordinates, so a point whose coordinates
    are parameter expressions is r(0) + Σ x_k (r(e_k) − r(0))."""
    if not any(is_symbolic(x) for x in local):
        r, w = modeller.point_expr(body, tuple(float(x) for x in local))
        return r, sympy.Matrix([float(x) for x in np.ravel(w)])
    r0, w0 = modeller.point_expr(body, (0.0, 0.0, 0.0))
    r, w = sympy.Matrix(r0), sympy.Matrix([float(x) for x in np.ravel(w0)])
    for k, x in enumerate(local):
        if x == 0:
            continue
        rk, wk = modeller.point_expr(body, _unit(k))
        r += x * (rk - r0)
        w += x * sympy.Matrix([float(a - b) for a, b in zip(np.ravel(wk), np.ravel(w0),
                                                           strict=True)])
    return r, w


def _assembled_length(wa: sympy.Matrix, wb: sympy.Matrix) -> sympy.Expr | float:
    d = wb - wa
    if d.free_symbols:
        return sympy.sqrt(d.dot(d))
    return float(np.linalg.norm(np.asarray(d, float)))


def element_forces(nm: NaturalModel, elements: Sequence[ForceElement]) -> list[sympy.Expr]:
    """Q of ``elements`` (n expressions of :attr:`NaturalModel.symbols`, the rates and the
    parameter symbols left in the elements' values)."""
    total = [sympy.Integer(0)] * nm.n
    springs = []
    for e in elements:
        if isinstance(e, PointSpring):
            ra, wa = _point(nm.modeller, e.body_a, e.point_a)
            rb, wb = _point(nm.modeller, e.body_b, e.point_b)
            springs.append((ra, rb, e, _assembled_length(wa, wb)))
            continue
        if e.joint not in nm.joint_coordinates:
            raise SymgenError(
                f"{describe(e)}: joint {e.joint!r} has no natural-coordinate joint coordinate "
                "(joint springs and actuators act on 1-DOF revolute, continuous or prismatic "
                "joints)"
            )
        grad = nm.joint_gradient(e.joint)
        if isinstance(e, JointSpring):
            theta = nm.joint_coordinates[e.joint].expr
            rate = sum((g * v for g, v in zip(grad, nm._rate_symbols, strict=True)),
                       sympy.Integer(0))
            force = -(e.stiffness * (theta - e.rest) + e.damping * rate)
        else:
            assert isinstance(e, JointActuator)
            force = sympy.sympify(e.force)
        total = [t + force * g for t, g in zip(total, grad, strict=True)]
    if springs:
        law = spring_forces(nm.symbols, nm._rate_symbols, springs)
        total = [t + f for t, f in zip(total, law, strict=True)]
    return total


def element_potential(nm: NaturalModel, elements: Sequence[ForceElement]) -> sympy.Expr:
    """V(q) of ``elements`` (an expression of :attr:`NaturalModel.symbols` and the parameter
    symbols left in the elements' values), the potential whose −∂V/∂q is the part of
    :func:`element_forces` at q̇ = 0: ½k(L − L₀)² per point spring (book eq. 4.102, the
    elastic energy), ½k(θ − rest)² per joint spring and −F θ per actuator, with L, L₀ and
    θ(q) as :func:`element_forces` reads them (θ by atan2, so V jumps where θ does). The
    dampers dissipate: no potential."""
    total: sympy.Expr = sympy.Integer(0)
    for e in elements:
        if isinstance(e, PointSpring):
            ra, wa = _point(nm.modeller, e.body_a, e.point_a)
            rb, wb = _point(nm.modeller, e.body_b, e.point_b)
            d = sympy.Matrix(rb - ra)
            rest = _assembled_length(wa, wb) if e.rest_length is None else e.rest_length
            total += e.stiffness * (sympy.sqrt(d.dot(d)) - rest) ** 2 / 2
            continue
        theta = nm.joint_coordinates[e.joint].expr
        if isinstance(e, JointSpring):
            total += e.stiffness * (theta - e.rest) ** 2 / 2
        else:
            assert isinstance(e, JointActuator)
            total -= e.force * theta
    return total


def add_force_elements(nm: NaturalModel, model: Model) -> None:
    """Add the force elements of ``model`` (unresolved) to ``nm``: their forces to
    :attr:`NaturalModel.spring_forces`, their runtime parameters to
    :attr:`NaturalModel.force_parameters`."""
    if not model.force_elements:
        return
    kept = force_parameter_names(model)
    elements = model.keep_parameters(kept).force_elements
    q = element_forces(nm, elements)
    nm.force_elements = [*nm.force_elements, *elements]
    if nm.spring_forces is not None:
        q = [a + b for a, b in zip(nm.spring_forces, q, strict=True)]
    nm.spring_forces = q
    defaults = {p.name: p.default for p in model.parameters}
    nm.force_parameters = kept
    nm.force_parameter_defaults = [float(defaults[name]) for name in kept]


def params_input(b, nm: NaturalModel) -> list[Expr]:
    """The elements of a kernel's ``params`` input (the values of
    :attr:`NaturalModel.force_parameters`), declared on first use."""
    size = len(nm.force_parameters)
    try:
        return b.input("params", size, "runtime parameters of the force elements ("
                       + ", ".join(nm.force_parameters) + ")")
    except ValueError:  # already declared by this program
        return [Elem("params", i) for i in range(size)]


__all__ = ["add_force_elements", "element_forces", "element_potential", "force_parameter_names",
           "params_input"]
