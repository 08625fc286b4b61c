"""The tree catalogue, second family: the closed-loop kernels of a model with loop joints,
registered in :mod:`symgen.registry` in catalogue order: the loop-closure residual, Jacobian
and bias (:mod:`..loop_constraints`, Müller 2014), assembly and the dependent coordinates
(Newton steps on the kept rows), and the dynamics with multipliers (:mod:`..constrained`)."""

from __future__ import annotations

from symgen.formulations import constrained, embedded, loop_constraints, loop_step
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
    tree_program,
    with_context,
)
from symgen.ir.expr import Expr
from symgen.loops.actuation import Split, actuation, independent_coordinates
from symgen.registry import Kernel, Output, register


def _loops(c: TreeContext) -> tuple[int, ...]:
    return (c.loop_count,)


def _actuation(c: TreeContext) -> Split:
    """The actuated and passive coordinates (:func:`symgen.loops.actuation.actuation`)."""
    return actuation(c.model, c.loops, c.actuated)


register(Kernel(
    "loop_constraints", FORMULATION,
    "loop-closure residual Φ(q) in the rows kept by the loop analysis", ("q",),
    one("phi", _loops, "loop-closure residual (rows kept by the loop analysis)"),
    tree_program(lambda d: loop_constraints.constraints(d.b, tree_of(d), d.loop_rows)),
    loops=True,
))

register(Kernel(
    "loop_jacobian", FORMULATION,
    "loop constraint Jacobian G(q), kept rows × nv", ("q",),
    one("G", lambda c: (c.loop_count, c.model.nv),
        "loop constraint Jacobian (kept rows × nv, row-major): G q̇ = 0"),
    tree_program(lambda d: flat(loop_constraints.jacobian(d.b, tree_of(d), d.loop_rows))),
    loops=True,
))

register(Kernel(
    "loop_bias", FORMULATION,
    "loop constraint bias Ġ q̇: the constraints read G q̈ + Ġ q̇ = 0", ("q", "v"),
    one("gamma", _loops, "Ġ q̇ (kept rows)"),
    tree_program(lambda d: loop_constraints.bias(d.b, tree_of(d), d.get("v"), d.loop_rows)),
    loops=True,
))

register(Kernel(
    "loop_assemble", FORMULATION,
    "close the loops from a guess: damped Gauss-Newton, least-norm correction", ("q",),
    one("q_assembled", lambda c: (c.model.nq,),
        "configuration closing the loops near the guess (nq)"),
    tree_program(lambda d: loop_constraints.assemble(
        d.b, d.model, d.get("q"), d.get("params") or (), d.loop_rows, d.loop_keep, d.snap)),
    uses_tree=False, loops=True, setup=True,
    doc="No reference in verify: from verify's random, far guesses the Gauss-Newton map "
    "amplifies rounding, so two implementations part (1e-5 on Bricard's linkage); "
    "tests/kernels/test_loop_kernels.py compares it with the numeric steps "
    "(LoopClosure.least_norm_steps) from guesses near the closed loops.",
))

#: The derivations of constrained forward dynamics: with multipliers
#: (:func:`symgen.formulations.constrained.forward_dynamics`) and by constraint embedding
#: (:func:`symgen.formulations.embedded.constrained_forward_dynamics`); the cheaper is kept.
CONSTRAINED_METHODS = ("multipliers", "embedded")


def _constrained_forward(d: Derivation, c: TreeContext) -> dict[str, list[Expr]]:
    """(q̈, λ) of the closed loops by the derivation method ``d.method``."""
    if d.method == "embedded":
        emb = embedding_of(d, c, v=d.get("v"), baumgarte=c.baumgarte)
        a, lam = embedded.constrained_forward_dynamics(
            d.b, tree_of(d), emb, plus_elements(d, d.get("tau"), emb.v), d.loop_keep,
            d.get("f_ext"))
    else:
        a, lam = constrained.forward_dynamics(d.b, tree_of(d), d.get("v"), d.get("tau"),
                                              d.loop_rows, d.loop_keep, d.get("f_ext"),
                                              c.baumgarte, elements_of(d))
    return {"a": a, "lam": lam}


register(Kernel(
    "constrained_forward_dynamics", FORMULATION,
    "forward dynamics of the closed loops: M q̈ + C = τ + Gᵀλ, G q̈ + Ġ q̇ = 0",
    ("q", "v", "tau"),
    (Output("a", nv_shape, ACC_DOC + " satisfying the loop constraints"),
     Output("lam", lambda c: (c.loop_rank,),
            "constraint forces λ of the independent loop rows (Gᵀλ in joint space)")),
    with_context(_constrained_forward),
    comparison="system", takes_forces=True, loops=True, methods=CONSTRAINED_METHODS,
    method_option="forward_dynamics",
    doc="Options.baumgarte = (α, β) adds Baumgarte's stabilisation: G q̈ = −Ġq̇ − 2α G q̇ "
    "− β² Φ (off by default; docs/loops.md). Derived with multipliers (the tree's LᵀDL and "
    "the Schur complement of the loop rows; wherever G has full rank) and by constraint "
    "embedding (the reduced equations, λ from the dependent coordinates' rows; wherever "
    "the independent coordinates determine the motion); the cheaper is kept, or the one "
    "Options.forward_dynamics names ('multipliers' or 'embedded').",
))

register(Kernel(
    "constrained_inverse_dynamics", FORMULATION,
    "actuator forces and λ of closed loops: M q̈ + C = B u + Gᵀλ at a consistent q̈",
    ("q", "v", "a"),
    (Output("tau_act", lambda c: (len(_actuation(c).active),),
            "actuator forces and torques, N and N·m, of the actuated joints (beyond what "
            "the model's force elements apply): those Options.actuated names, in its order, "
            "else the model's actuators or its ground joints, in model order"),
     Output("lam", lambda c: (c.loop_rank,),
            "constraint forces λ of the independent loop rows (Gᵀλ in joint space)")),
    with_context(lambda d, c: dict(zip(("tau_act", "lam"), constrained.inverse_dynamics(
        d.b, tree_of(d), d.get("v"), d.get("a"), d.loop_rows, d.loop_keep, _actuation(c),
        d.get("f_ext"), elements_of(d)), strict=True))),
    comparison="system", takes_forces=True,
    loops=True, default=False,
    doc="Not a default kernel: it needs the actuated joints (Options.actuated, the model's "
    "actuator elements or ground joints with the mechanism's DOF). a must be consistent, "
    "G a + Ġ v = 0, for constrained_forward_dynamics(q, v, B u) to return it.",
))

register(Kernel(
    "dependent_coordinates", FORMULATION,
    "dependent coordinates from the independent ones: Newton on the loop constraints",
    ("q",),
    (Output("q_closed", lambda c: (c.model.nq,),
            "configuration (nq): the independent joints of q, the others solved to close the "
            "loops from their values in q"),
     Output("status", lambda c: (2,),
            "[largest |Φ| of the independent loop rows left, smallest pivot of G_D G_Dᵀ "
            "relative to the largest]: near 0, the independent coordinates no longer "
            "determine the motion (singular configuration)")),
    with_context(lambda d, c: loop_constraints.dependent_coordinates(
        d.b, d.model, d.get("q"), d.get("params") or (), d.loop_rows, d.loop_keep,
        independent_coordinates(c.model, c.loops, c.actuated, c.independent).passive,
        d.snap)),
    uses_tree=False, loops=True, setup=True, default=False, float_check=False,
    doc="No reference in verify (like loop_assemble: from random, far guesses Newton's "
    "map amplifies rounding); tests/kernels/test_constrained_inverse_dynamics.py compares "
    "it with the same steps in numpy from guesses near closed configurations. No float "
    "check either: verify's random independent coordinates often admit no closed "
    "configuration (outside the workspace), where Newton does not converge and the float "
    "and double iterations part.",
))


def _state(d: Derivation) -> tuple[list, list, list]:
    """q, v and the runtime parameters of a step kernel."""
    return d.get("q"), d.get("v"), d.get("params") or []


def _lam(c: TreeContext) -> tuple[int, ...]:
    return (c.loop_count,)


_NEXT = (Output("q_next", lambda c: (c.model.nq,), "joint configuration at t + h (closed)"),
         Output("v_next", nv_shape, "joint velocity at t + h (consistent: G v = 0)"))
#: Verification bound of ``loop_step``: its Newton matrix (4/h²)M + GᵀβG has a condition
#: relative to (4/h²)M of up to 10⁹ (the penalty rule's cap), so two correct
#: implementations differ by up to ε·10⁹ ≈ 2e-7 per solve (measured up to 4e-11 relative on
#: Andrews' squeezer); the multipliers by their own roundoff (verify's estimate).
STEP_TOLERANCE = 1e-6
_LAM_NEXT = Output("lam_next", _lam, "multipliers to pass to the next step (lam)")

register(Kernel(
    "loop_step", FORMULATION,
    "one index-3 augmented-Lagrangian trapezoidal step of the closed loops (Options.step)",
    ("q", "v", "a", "lam", "tau"),
    (*_NEXT, Output("a_next", nv_shape, ACC_DOC + " at t + h (consistent)"), _LAM_NEXT),
    with_context(lambda d, c: loop_step.trapezoidal_step(
        d.b, c.loop_system, c.step, *_state(d)[:2], d.get("a"), d.get("lam"), d.get("tau"),
        _state(d)[2])),
    uses_tree=False, loops=True, default=False, float_check=False, consistent=True,
    tolerance=STEP_TOLERANCE,
    doc="García de Jalón & Bayo's index-3 augmented Lagrangian with the trapezoidal rule "
    "(§8.5) in joint coordinates, on the tangent space of q, with mass-orthogonal "
    "projections of v and a: robust at singular positions, redundant constraints and "
    "stiff force elements; second order. tau (and the force elements) act over the step. "
    "Start from a consistent (q, v), a = 0 and lam = 0 (or loop_project's state and "
    "constrained_forward_dynamics' a); pass each step's outputs to the next. Not in the "
    "default set (name it; its step is Options.step).",
))

register(Kernel(
    "loop_step_rk4", FORMULATION,
    "one Runge-Kutta 4 step of the closed loops with projections",
    ("q", "v", "lam", "tau", "dt"),
    (*_NEXT, _LAM_NEXT),
    with_context(lambda d, c: loop_step.rk4_step(
        d.b, c.loop_system, d.get("dt")[0], *_state(d)[:2], d.get("lam"), d.get("tau"),
        _state(d)[2])),
    uses_tree=False, loops=True, default=False, float_check=False, consistent=True,
    doc="Fourth order: the classical Runge-Kutta method on the index-1 equations, each "
    "stage's accelerations by the augmented-Lagrangian iteration (M + GᵀAG positive "
    "definite at singular positions; multipliers carried from stage to stage), then the "
    "mass-orthogonal projections of q onto Φ = 0 and of v onto G v = 0 (Bayo & Ledesma "
    "1996). The step dt is an input; tau acts over the step. Start from a consistent "
    "(q, v) (loop_project) and lam = 0; pass lam_next to the next step. Not in the default "
    "set (name it).",
))

def _projections(d: Derivation, c: TreeContext) -> dict[str, list]:
    q, v, at = loop_step.project(d.b, c.loop_system, *_state(d))
    a = loop_step.project_accelerations(d.b, c.loop_system, at, v, d.get("a"))
    return {"q_closed": q, "v_consistent": list(v), "a_consistent": list(a)}


register(Kernel(
    "loop_project", FORMULATION,
    "close the loops near q, make v and a consistent: mass-orthogonal projections",
    ("q", "v", "a"),
    (Output("q_closed", lambda c: (c.model.nq,), "joint configuration with Φ = 0"),
     Output("v_consistent", nv_shape, "joint velocity with G v = 0, the M-orthogonal "
            "projection of v (the least change of kinetic energy)"),
     Output("a_consistent", nv_shape, ACC_DOC + " with G a + Ġ v = 0, the M-orthogonal "
            "projection of a (at the projected q and v)")),
    with_context(_projections),
    uses_tree=False, loops=True, default=False, consistent=True,
    doc="Two Newton steps from q with the mass-orthogonal correction, then the velocity "
    "and acceleration projections (the augmented-Lagrangian solve of M Δ + Gᵀλ = r, "
    "G Δ = c, positive definite at singular positions and with dependent rows): for "
    "initial states near a closed configuration (use loop_assemble from far guesses); "
    "a = 0 where only q and v are wanted.",
))
