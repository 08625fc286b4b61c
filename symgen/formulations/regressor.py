"""The inertial-parameter regressor: τ = Y(q, v, a) π, from the inverse-dynamics program.

Inverse dynamics is linear in each body's inertial parameters (Atkeson, An & Hollerbach,
"Estimation of inertial parameters of manipulator loads and links", IJRR 1986; Khalil &
Dombre, *Modeling, Identification and Control of Robots*, 2002, ch. 12). Per body, in the
model's body order, π_k = (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz) with
c the centre of mass in the body frame and I the rotational inertia about the body frame
origin, in body axes (Pinocchio's ``Inertia.toDynamicParameters`` order), so that the
spatial inertia is M = [[I, h×], [−h×, m 1]] with h = m c (Featherstone 2008, eq. 2.63),
linear in π.

Y is derived from the program itself: the Newton-Euler program with every body's inertia
built from a parameter input π, replayed with π = 0 and tangents seeded on π
(:mod:`symgen.ir.autodiff`): τ being linear in π, its tangent is Y exactly, and the zero
values fold the products with the inertias away. Joint armature, not an inertial parameter
of a body, is left out: τ = Y π + J_a ∘ a.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symgen.formulations.recursions import inverse_dynamics
from symgen.formulations.tree.hinges import build_tree
from symgen.ir.autodiff import jacobian, replay, seeds
from symgen.ir.expr import ZERO, Expr
from symgen.ir.optimize import optimize
from symgen.ir.program import ProgramBuilder
from symgen.model import Model
from symgen.model.inertial_parameters import PARAMETER_NAMES, PARAMETERS_PER_BODY
from symgen.spatial import Inertia, mat3, vec3


def parameter_inertia(pi: Sequence[Expr]) -> Inertia:
    """The spatial inertia of one body from its 10 parameters (module documentation)."""
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = pi
    return Inertia(m, vec3((hx, hy, hz)),
                   mat3(((ixx, ixy, ixz), (ixy, iyy, iyz), (ixz, iyz, izz))))


def regressor(b: ProgramBuilder, model: Model, inputs: dict[str, list[Expr]],
              snap: float) -> list[Expr]:
    """Y (nv × 10·nbodies, row-major): the tangent of the parametrised Newton-Euler program
    along π, at π = 0."""
    scratch = ProgramBuilder(f"{b.name}__parametrised")
    q = scratch.input("q", model.nq)
    v = scratch.input("v", model.nv)
    a = scratch.input("a", model.nv)
    params = scratch.input("params", len(model.parameters)) if model.parameters else []
    n = PARAMETERS_PER_BODY * model.nbodies
    pi = scratch.input("pi", n)
    tree = build_tree(model, scratch, q, params, snap=snap)
    for h in tree.hinges:
        if h.body is not None:
            h.inertia = parameter_inertia(pi[PARAMETERS_PER_BODY * h.body:
                                             PARAMETERS_PER_BODY * (h.body + 1)])
        h.armature = None  # not an inertial parameter: τ = Y π + J_a ∘ a
    scratch.output("tau", model.nv, inverse_dynamics(scratch, tree, v, a))
    program = optimize(scratch.build())
    values: dict[str, Any] = {"q": inputs["q"], "v": inputs["v"], "a": inputs["a"],
                              "pi": [ZERO] * n}
    if model.parameters:
        values["params"] = inputs["params"]
    _, tangents = replay(b, program, values, {"pi": seeds(n)})
    return [x for row in jacobian(tangents["tau"], range(n)) for x in row]


__all__ = ["PARAMETERS_PER_BODY", "PARAMETER_NAMES", "parameter_inertia", "regressor"]
