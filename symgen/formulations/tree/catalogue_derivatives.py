"""The tree catalogue, third family: derivatives of the dynamics, registered in
:mod:`symgen.registry` in catalogue order: the kernels' own programs differentiated
(:mod:`..derivatives`) or the analytical recursions (:mod:`..analytical_derivatives`;
Carpentier & Mansard, RSS 2018, also for the tangent space). Their numpy
references are central differences (:mod:`symgen.reference.derivatives`), hence their
tolerance :data:`DIFFERENCE_TOLERANCE`."""

from __future__ import annotations

from symgen.formulations import derivatives
from symgen.formulations.tree.context import FORMULATION
from symgen.formulations.tree.derivation import nv_nv_shape, one, with_context
from symgen.registry import Kernel, Output, register

#: How forward-dynamics derivatives are derived (symgen.formulations.derivatives): the
#: analytical recursions, and where they decline, the cheapest of the differentiated programs
#: (they cost 1.2-1.4× the operations on every robot measured: docs/derivatives.md).
DERIVATIVE_METHODS = ("analytical",)
DERIVATIVE_FALLBACKS = ("direct", "via_id", "via_ltdl")

#: verify's bound against the central-difference references: their truncation and rounding
#: (step :data:`symgen.reference.derivatives.DIFFERENCE_STEP`) over random states whose
#: velocities reach a few rad/s (Pinocchio is compared to 1e-10).
DIFFERENCE_TOLERANCE = 1e-6

register(Kernel(
    "inverse_dynamics_derivatives", FORMULATION,
    "∂τ/∂q (tangent space) and ∂τ/∂v of inverse dynamics (∂τ/∂a = M)", ("q", "v", "a"),
    (Output("dtau_dq", nv_nv_shape, "∂τ/∂q (nv × nv, row-major): columns along q ⊕ δ, δ in the "
            "tangent space (docs/derivatives.md)"),
     Output("dtau_dv", nv_nv_shape, "∂τ/∂v (nv × nv, row-major)")),
    with_context(lambda d, c: derivatives.inverse_dynamics_derivatives(
        d.b, c, d.b.name, d.inputs, d.method)),
    takes_forces=True, uses_tree=False, default=False, on_request=True,
    tolerance=DIFFERENCE_TOLERANCE, methods=("analytical",), fallbacks=("forward", "reverse"),
    schedule=True,
    doc="The analytical recursions of Carpentier & Mansard 2018; where they decline, the "
    "cheaper of the Newton-Euler program differentiated in forward and reverse mode "
    "(docs/derivatives.md). The numpy reference is central differences (step 1e-6): verify "
    "bounds it by 1e-6; Pinocchio's computeRNEADerivatives is compared to 1e-10.",
))

register(Kernel(
    "forward_dynamics_derivatives", FORMULATION,
    "∂q̈/∂q (tangent space), ∂q̈/∂v and ∂q̈/∂τ = M⁻¹ of forward dynamics",
    ("q", "v", "tau"),
    (Output("dqdd_dq", nv_nv_shape, "∂q̈/∂q (nv × nv, row-major), tangent space"),
     Output("dqdd_dv", nv_nv_shape, "∂q̈/∂v (nv × nv, row-major)"),
     Output("dqdd_dtau", nv_nv_shape, "∂q̈/∂τ = M⁻¹ (nv × nv, row-major)")),
    with_context(lambda d, c: derivatives.forward_dynamics_derivatives(
        d.b, c, d.b.name, d.inputs, d.method)),
    takes_forces=True, uses_tree=False, default=False, on_request=True,
    tolerance=DIFFERENCE_TOLERANCE, methods=DERIVATIVE_METHODS,
    fallbacks=DERIVATIVE_FALLBACKS, comparison="solve",
    schedule=True,
    doc="−M⁻¹ ∂ID with the factored M⁻¹ and ∂ID by the analytical recursions; where they "
    "decline, the cheapest of the forward-dynamics program differentiated and −M⁻¹ ∂ID with "
    "a dense or a factored M⁻¹ and ∂ID differentiated (docs/derivatives.md). The numpy "
    "reference is −M⁻¹ times central differences of inverse dynamics (step 1e-6, bound "
    "1e-6); Pinocchio's computeABADerivatives is compared to 1e-10. Every output solves "
    "M X = Y (Y = −∂ID/∂q, −∂ID/∂v, I), so the comparison is the backward error, as for "
    "forward dynamics: the forward error of the differences grows with cond(M).",
))

register(Kernel(
    "frame_jacobian_time_derivative", FORMULATION,
    "J̇(q, v): time derivative of a frame's Jacobian (6×nv) as q moves with v", ("q", "v"),
    one("Jdot", lambda c: (6, c.model.nv),
        "dJ/dt (6 × nv, row-major), rows and reference as frame_jacobian"),
    with_context(lambda d, c: derivatives.frame_jacobian_time_derivative(
        d.b, c, d.b.name, d.inputs, d.frame_name)),
    per_frame=True, uses_tree=False,
    default=False, on_request=True, tolerance=DIFFERENCE_TOLERANCE,
    doc="The frame_jacobian program differentiated along δ = v (docs/derivatives.md); the "
    "numpy reference is central differences (step 1e-6, bound 1e-6).",
))

register(Kernel(
    "linearization", FORMULATION,
    "A, B of ẋ = f(x, u) in the tangent space, x = (q, v), u = τ", ("q", "v", "tau"),
    (Output("A", lambda c: (2 * c.model.nv, 2 * c.model.nv),
            "A (2nv × 2nv, row-major): [[−ad_v, I], [∂q̈/∂q, ∂q̈/∂v]] (docs/derivatives.md)"),
     Output("B", lambda c: (2 * c.model.nv, c.model.nv), "B (2nv × nv): [[0], [M⁻¹]]")),
    with_context(lambda d, c: derivatives.linearization(d.b, c, d.b.name, d.inputs,
                                                        d.method)),
    takes_forces=True, uses_tree=False, default=False,
    on_request=True, tolerance=DIFFERENCE_TOLERANCE, methods=DERIVATIVE_METHODS,
    fallbacks=DERIVATIVE_FALLBACKS,
    schedule=True,
    doc="The numpy reference is central differences (bound 1e-6); the Lie-group rows of "
    "spherical and free joints hold −ad_v (docs/derivatives.md).",
))
