"""The tree catalogue, fifth family: constraint embedding (Jain 2009, §2.7; docs/loops.md),
registered in :mod:`symgen.registry` in catalogue order: the dynamics in the independent
coordinates by the embedded articulated-body recursion or the reduced mass matrix
(:mod:`..embedded`), the closed loops' forward dynamics by embedding and by multipliers, and
the derivatives along the loop manifold (:mod:`..derivatives`)."""

from __future__ import annotations

from symgen.formulations import constrained, derivatives, embedded
from symgen.formulations.tree.catalogue_derivatives import DIFFERENCE_TOLERANCE
from symgen.formulations.tree.context import FORMULATION, TreeContext
from symgen.formulations.tree.derivation import (
    ACC_DOC,
    Derivation,
    elements_of,
    embedding_of,
    flat,
    nv_shape,
    one,
    plus_elements,
    tree_of,
    with_context,
)
from symgen.ir.expr import Expr
from symgen.registry import Kernel, Output, register

#: The derivations of embedded forward dynamics: the embedded articulated-body recursion
#: and the reduced mass matrix (:mod:`symgen.formulations.embedded`); the cheaper is kept.
EMBEDDED_METHODS = ("aba", "reduced")


def _embedded_solve(d: Derivation, emb: embedded.EmbeddingMap) -> tuple[list[Expr], list[Expr]]:
    """(θ̈_R, θ̈) by the derivation method ``d.method``."""
    tau = plus_elements(d, d.get("tau"), emb.v)
    solve = embedded.reduced_forward_dynamics if d.method == "reduced" \
        else embedded.forward_dynamics
    return solve(d.b, tree_of(d), emb, tau, d.get("f_ext"))


def _embedded_forward(d: Derivation, c: TreeContext) -> dict[str, list[Expr]]:
    emb = embedding_of(d, c, d.get("v_ind"))
    a_ind, a = _embedded_solve(d, emb)
    return {"a_ind": a_ind, "v": emb.v, "a": a}


def _embedded_inverse(d: Derivation, c: TreeContext) -> dict[str, list[Expr]]:
    emb = embedding_of(d, c, d.get("v_ind"))
    forces = elements_of(d, emb.v)
    tau_ind, a = embedded.inverse_dynamics(d.b, tree_of(d), emb, d.get("a_ind"), d.get("f_ext"),
                                           forces)
    return {"tau_ind": tau_ind, "a": a}


def _embedded_forward_full(d: Derivation, c: TreeContext) -> list[Expr]:
    """``forward_dynamics`` of a model with loops by embedding: q̈ from (q, v, τ) at any v,
    with the loop bias of that v (and Baumgarte's terms, Options.baumgarte), as with
    multipliers."""
    return _embedded_solve(d, embedding_of(d, c, v=d.get("v"), baumgarte=c.baumgarte))[1]


def _n_ind(c: TreeContext) -> tuple[int, ...]:
    return (len(c.embedding.independent),)


_EMBEDDING_DOC = ("The independent coordinates: Options.independent, else Options.actuated "
                  "when valid, else chosen at generation by pivoting G at the reference "
                  "configuration (docs/loops.md, 'Constraint embedding').")

register(Kernel(
    "embedded_forward_dynamics", FORMULATION,
    "forward dynamics in the independent coordinates by the embedded articulated-body "
    "recursion (constraint embedding)",
    ("q", "v_ind", "tau"),
    (Output("a_ind", _n_ind, "accelerations of the independent coordinates"),
     Output("v", nv_shape, "joint velocity (nv) of every coordinate: θ̇ = X θ̇_R"),
     Output("a", nv_shape, ACC_DOC + ": θ̈ = X θ̈_R + Ẋ θ̇_R")),
    with_context(_embedded_forward),
    takes_forces=True, embedding=True, default=False, methods=EMBEDDED_METHODS,
    doc=_EMBEDDING_DOC,
))

register(Kernel(
    "embedded_inverse_dynamics", FORMULATION,
    "generalized forces of the independent coordinates T_R = Xᵀ T (constraint embedding)",
    ("q", "v_ind", "a_ind"),
    (Output("tau_ind", _n_ind, "generalized forces of the independent coordinates (the "
            "actuator forces when they are the actuated joints)"),
     Output("a", nv_shape, ACC_DOC + ": θ̈ = X θ̈_R + Ẋ θ̇_R")),
    with_context(_embedded_inverse),
    takes_forces=True, embedding=True, default=False, doc=_EMBEDDING_DOC,
))

register(Kernel(
    "embedded_mass_matrix", FORMULATION,
    "mass matrix of the independent coordinates Xᵀ M X (constraint embedding)", ("q",),
    one("M", lambda c: _n_ind(c) * 2, "Xᵀ M X (independent × independent, row-major)"),
    with_context(lambda d, c: flat(embedded.reduced_mass_matrix(
        d.b, tree_of(d), embedding_of(d, c, None)))),
    embedding=True, default=False, doc=_EMBEDDING_DOC,
))

register(Kernel(
    "forward_dynamics_embedded", FORMULATION,
    "forward dynamics of the closed loops by constraint embedding (q̈ of "
    "constrained_forward_dynamics at any v)",
    ("q", "v", "tau"), one("a", nv_shape, ACC_DOC + " satisfying the loop constraints"),
    with_context(_embedded_forward_full),
    takes_forces=True, loops=True, embedding=True, default=False, methods=EMBEDDED_METHODS,
    consistent=True, doc=_EMBEDDING_DOC,
))

register(Kernel(
    "forward_dynamics_multipliers", FORMULATION,
    "forward dynamics of the closed loops with multipliers (q̈ of "
    "constrained_forward_dynamics)",
    ("q", "v", "tau"), one("a", nv_shape, ACC_DOC + " satisfying the loop constraints"),
    with_context(lambda d, c: constrained.forward_dynamics(
        d.b, tree_of(d), d.get("v"), d.get("tau"), d.loop_rows, d.loop_keep, d.get("f_ext"),
        c.baumgarte, elements_of(d))[0]),
    takes_forces=True, loops=True, default=False,
    consistent=True,
))


def _ind_ind(c: TreeContext) -> tuple[int, ...]:
    return _n_ind(c) * 2


_EMBEDDED_DERIVATIVES_DOC = (
    "Derivatives along the loop manifold: θ_R ⊕ δ_R moves every coordinate by X δ_R to first "
    "order (docs/derivatives.md, 'Closed loops'), a manifold only assembled configurations "
    "lie on: verify compares them there. The numpy reference is central differences "
    "(step 1e-6, bound 1e-6). " + _EMBEDDING_DOC)
register(Kernel(
    "embedded_inverse_dynamics_derivatives", FORMULATION,
    "∂T_R/∂θ_R (along the loop manifold) and ∂T_R/∂θ̇_R of embedded inverse dynamics "
    "(∂T_R/∂θ̈_R = XᵀMX)", ("q", "v_ind", "a_ind"),
    (Output("dtau_dq", _ind_ind, "∂T_R/∂θ_R (independent × independent, row-major)"),
     Output("dtau_dv", _ind_ind, "∂T_R/∂θ̇_R (independent × independent, row-major)")),
    with_context(lambda d, c: derivatives.embedded_inverse_dynamics_derivatives(
        d.b, c, d.b.name, d.inputs)),
    takes_forces=True, embedding=True,
    uses_tree=False, default=False, on_request=True, tolerance=DIFFERENCE_TOLERANCE,
    consistent=True,
    doc=_EMBEDDED_DERIVATIVES_DOC,
))

register(Kernel(
    "embedded_forward_dynamics_derivatives", FORMULATION,
    "∂θ̈_R/∂θ_R (along the loop manifold), ∂θ̈_R/∂θ̇_R and ∂θ̈_R/∂τ of embedded forward "
    "dynamics", ("q", "v_ind", "tau"),
    (Output("dqdd_dq", _ind_ind, "∂θ̈_R/∂θ_R (independent × independent, row-major)"),
     Output("dqdd_dv", _ind_ind, "∂θ̈_R/∂θ̇_R (independent × independent, row-major)"),
     Output("dqdd_dtau", lambda c: (_n_ind(c)[0], c.model.nv),
            "∂θ̈_R/∂τ = (XᵀMX)⁻¹Xᵀ (independent × nv, row-major)")),
    with_context(lambda d, c: derivatives.embedded_forward_dynamics_derivatives(
        d.b, c, d.b.name, d.inputs, d.method)),
    takes_forces=True, embedding=True,
    uses_tree=False, default=False, on_request=True, tolerance=DIFFERENCE_TOLERANCE,
    consistent=True,
    methods=EMBEDDED_METHODS, doc=_EMBEDDED_DERIVATIVES_DOC,
))

register(Kernel(
    "embedded_linearization", FORMULATION,
    "A, B of ẋ = f(x, u) in the independent coordinates, x = (θ_R, θ̇_R), u = τ",
    ("q", "v_ind", "tau"),
    (Output("A", lambda c: (2 * _n_ind(c)[0],) * 2,
            "A (2r × 2r, row-major): [[−ad_v, I], [∂θ̈_R/∂θ_R, ∂θ̈_R/∂θ̇_R]]"),
     Output("B", lambda c: (2 * _n_ind(c)[0], c.model.nv),
            "B (2r × nv): [[0], [∂θ̈_R/∂τ]], τ the forces of every joint")),
    with_context(lambda d, c: derivatives.embedded_linearization(
        d.b, c, d.b.name, d.inputs, d.method)),
    takes_forces=True, embedding=True,
    uses_tree=False, default=False, on_request=True, tolerance=DIFFERENCE_TOLERANCE,
    consistent=True,
    methods=EMBEDDED_METHODS, doc=_EMBEDDED_DERIVATIVES_DOC,
))
