"""``nc_energy``: the mechanical energy of a natural-coordinate model (García de Jalón &
Bayo 1994, ch. 4), as the joint-coordinate ``energy`` kernel gives it:

- kinetic T = ½ q̇ᵀ M q̇ with the constant mass matrix (book eq. 4.48 planar, 4.61 spatial;
  the kinetic energy those matrices are built from);
- potential (gravity) V_g = −Σ m_b g·c_b(q), c_b = A_b(q) c̄_b + p_b(q) the world centre of
  mass of body b, with A_b = X X̄⁻¹ and p_b linear in q (eq. 4.113-4.116): the same number
  as the joint-coordinate potential at the same configuration (its −∂V_g/∂q is the constant
  gravity force Q of eq. 4.129-4.130);
- elements: the potential of the force elements, ½k(L − L₀)² per point spring, ½k(θ − rest)²
  per joint spring, −F θ per actuator (:func:`.forces.element_potential`, θ read as
  ``nc_forces`` reads it); the dampers dissipate and have none.

The sum is constant along a motion with no dampers and no joint forces ``tau``.
"""

from __future__ import annotations

import sympy

from symgen.formulations.natural.forces import element_potential, params_input
from symgen.formulations.natural.model import NaturalModel
from symgen.ir.expr import Expr, esum, from_sympy
from symgen.ir.program import Program, ProgramBuilder


def gravity_potential(nm: NaturalModel) -> sympy.Expr:
    """V_g(q) = −Σ m_b g·(A_b c̄_b + p_b) over the bodies (module documentation)."""
    mod = nm.modeller
    model = mod.model
    gravity = [float(x) for x in model.gravity]
    total: sympy.Expr = sympy.Integer(0)
    for b, body in enumerate(model.bodies):
        mass = float(body.mass)
        if mass == 0.0:
            continue
        rot, origin = mod.body_pose_expr(b)
        com = [float(x) for x in body.com]
        for axis in range(3):
            if gravity[axis] == 0.0:
                continue
            position = origin[axis] + sum((rot[axis, k] * com[k] for k in range(3) if com[k]),
                                          sympy.Integer(0))
            total -= mass * gravity[axis] * position
    return sympy.expand(total)


def energy_program(nm: NaturalModel) -> Program:
    """``nc_energy(q, qd[, params]) -> energy`` = [kinetic, potential, elements], J."""
    b = ProgramBuilder("nc_energy", "[kinetic, potential, elements] energy, J")
    q = b.input("q", nm.n, "natural coordinates")
    qd = b.input("qd", nm.n, "natural velocities")
    mp: dict = {s: q[i] for i, s in enumerate(nm.symbols)}
    if nm.force_parameters:
        mp.update(zip(nm.force_parameter_symbols, params_input(b, nm), strict=True))
    m = nm.mass_matrix
    terms: list[Expr] = []
    for i in range(nm.n):  # ½ q̇ᵀ M q̇ = Σ_i ½ M_ii q̇_i² + Σ_{i<j} M_ij q̇_i q̇_j
        if m[i, i]:
            terms.append(b.emit(0.5 * float(m[i, i]) * qd[i] * qd[i]))
        for j in range(i + 1, nm.n):
            if m[i, j]:
                terms.append(b.emit(float(m[i, j]) * qd[i] * qd[j]))
    kinetic = b.emit(esum(terms))
    potential = b.emit(from_sympy(gravity_potential(nm), mp))
    elements = b.emit(from_sympy(element_potential(nm, nm.force_elements), mp))
    b.output("energy", 3, [kinetic, potential, elements],
             "[kinetic, potential (gravity), elements (the force elements' potential)] "
             "energy, J")
    return b.build()


__all__ = ["energy_program", "gravity_potential"]
