"""The numpy references of the registered kernels, by kernel name (:data:`REFERENCES`):
what verify compares each generated program with. A tree kernel's reference reads one state
through a :class:`ReferenceQuery` and computes with :mod:`symgen.reference` (written from the
textbooks, independently of the symbolic derivations) and the numeric loop closure
(:class:`symgen.loops.LoopClosure`, Müller 2014); a natural-coordinate kernel's through a
:class:`NaturalQuery`, with the numeric natural model and the solvers of
:mod:`symgen.reference.natural` (García de Jalón & Bayo 1994). A kernel without one is in
:data:`NO_REFERENCE`, with the reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

import symgen.reference as ref
from symgen.formulations import loop_step
from symgen.formulations.natural.kernels import NaturalOptions, independent_joints
from symgen.formulations.natural.model import NaturalModel
from symgen.formulations.natural.registration import NaturalContext
from symgen.formulations.tree.context import TreeContext
from symgen.kernel_set import KernelSet
from symgen.loops import LoopClosure
from symgen.loops.actuation import actuation
from symgen.model import Model
from symgen.reference import loop_step as steps
from symgen.reference.derivatives import central_differences, lie_term, time_derivative
from symgen.reference.forces import element_forces
from symgen.reference.natural import (
    StepSettings,
    assemble,
    lagrange_accelerations,
    rk4_step,
    trapezoidal_step,
)
from symgen.reference.regressor import regressor


@dataclass
class ReferenceQuery:
    """One state at which a tree kernel's reference value is wanted."""

    model: Model
    state: Mapping[str, Any]
    frame: str | None
    context: TreeContext

    def __getattr__(self, name: str) -> Any:
        if name in ("q", "v", "a", "tau", "dt"):
            return self.state.get(name)
        raise AttributeError(name)

    @property
    def params(self) -> Mapping[str, float] | None:
        return self.state.get("params_dict")

    @property
    def f_ext(self) -> Mapping[str, np.ndarray] | None:
        return self.state.get("f_ext_dict") if self.context.external_forces else None


@dataclass
class NaturalQuery:
    """One state of a natural-coordinate kernel's reference."""

    nm: NaturalModel
    state: dict[str, Any]
    options: NaturalOptions


Query = ReferenceQuery | NaturalQuery
Reference = Callable[[Query], Mapping[str, np.ndarray]]

#: A reference's ``<output>:roundoff`` entry: how far two correct implementations may differ
#: in that output at the state (:func:`symgen.apps.verify.checks.roundoff_error`).
ROUNDOFF = ":roundoff"
#: A reference's ``<output>:through`` entry: a matrix T through which the output is unique
#: (multipliers of dependent constraint rows: only the force Gᵀλ is), compared as T x
#: (:func:`symgen.apps.verify.checks.through_error`).
THROUGH = ":through"
#: Safety factor of :func:`_multiplier_roundoff` over the measured differences (at most
#: 0.82 of its estimate on the examples' models).
ROUNDOFF_FACTOR = 16.0


def _tree_query(ks: KernelSet, name: str, state: Mapping[str, Any]) -> ReferenceQuery:
    assert isinstance(ks.context, TreeContext)
    return ReferenceQuery(ks.model, state, ks.frame_of.get(name), ks.context)


def _natural_query(ks: KernelSet, name: str, state: Mapping[str, Any]) -> NaturalQuery:
    assert isinstance(ks.context, NaturalContext)
    return NaturalQuery(ks.context.nm, dict(state), ks.options)


#: How a reference reads a state, by the type of the formulation's context.
QUERIES: dict[type, Callable[[KernelSet, str, Mapping[str, Any]], Query]] = {
    TreeContext: _tree_query,
    NaturalContext: _natural_query,
}


def reference_query(ks: KernelSet, name: str, state: Mapping[str, Any]) -> Query:
    """The query the reference of program ``name`` of ``ks`` reads at ``state``."""
    return QUERIES[type(ks.context)](ks, name, state)


#: Verify's natural states keep away from singular positions: the smallest singular value
#: of Φ_q within its numerical rank (above 1e-10 of the largest) is at least this much of
#: the largest (:func:`natural_states`).
REGULAR_GAP = 1e-4
#: Draws of :func:`natural_states` for one regular configuration before it takes the
#: assembled one.
REGULAR_DRAWS = 20


def _regular_configuration(nm: NaturalModel, rng: np.random.Generator) -> np.ndarray:
    """The assembled configuration moved by a random step of 0.05 in every coordinate and
    re-assembled, drawn again while Φ_q there has a singular value between 1e-10 and
    ``REGULAR_GAP`` of its largest: near a singular position (the Delta robot's natural
    model has them within such steps: σ = 1e-7, λ = 5e7) the step's projections and the
    accelerations are conditioned beyond any tolerance, so two correct implementations
    differ there at O(1) and the comparison says nothing about either; the assembled one
    after ``REGULAR_DRAWS`` draws."""
    for _ in range(REGULAR_DRAWS):
        try:
            q = assemble(nm, nm.q0 + 0.05 * rng.normal(size=nm.n))
        except RuntimeError:
            continue
        sigma = np.linalg.svd(nm.phi_q(q), compute_uv=False)
        kept = sigma[sigma > 1e-10 * max(float(sigma[0]), 1.0)] if sigma.size else sigma
        if not kept.size or kept[-1] >= REGULAR_GAP * kept[0]:
            return q
    return np.array(nm.q0, dtype=float)


def natural_states(context: NaturalContext, count: int, seed: int) -> list[dict]:
    """Verify's states of a natural-coordinate kernel set: the assembled configuration moved
    by a random step of 0.05 in every coordinate and re-assembled (Newton-Raphson, book
    eq. 3.15), away from singular positions (:func:`_regular_configuration`), a random
    velocity in the null space of Φ_q,
    random joint forces, the consistent accelerations (Lagrange with the kernels'
    Baumgarte stabilisation), zero multipliers, random independent rates, zero joint values
    to continue from (``nc_joint_values``' ``near``) and the force elements' runtime
    parameters at their defaults."""
    nm, rng = context.nm, np.random.default_rng(seed)
    alpha = context.options.baumgarte
    states = []
    for _ in range(count):
        q = _regular_configuration(nm, rng)
        _, sigma, vt = np.linalg.svd(nm.phi_q(q))
        rank = int(np.sum(sigma > 1e-10 * max(float(sigma[0]), 1.0))) if sigma.size else 0
        qd = vt[rank:].T @ rng.normal(size=nm.n - rank)  # a motion Φ_q allows
        tau = rng.normal(size=len(nm.actuated))
        params = np.array(nm.force_parameter_defaults, dtype=float)
        qdd, _ = lagrange_accelerations(nm, q, qd, alpha, alpha,
                                        tau=tau if nm.actuated else None, params=params)
        states.append({"q": q, "qd": qd, "tau": tau, "qdd": qdd, "lam": np.zeros(nm.m),
                       "zd": rng.normal(size=len(independent_joints(nm))),
                       "near": np.zeros(len(nm.actuated)), "params": params,
                       "dt": np.array([1e-3])})  # nc_step_rk4's h, as for the joints
    return states


#: Verify's random states of a kernel set whose formulation needs its own (by the type of
#: its context); the others take :func:`symgen.apps.verify.checks.random_states`' default.
STATES: dict[type, Callable[[Any, int, int], list[dict]]] = {NaturalContext: natural_states}


# ---------------------------------------------------------------- kinematics and dynamics
def _poses(r: ReferenceQuery) -> dict[str, np.ndarray]:
    poses = ref.forward_kinematics(r.model, r.q, params=r.params)
    return {"poses": np.array([poses[n][:3, :] for n in r.context.pose_names]
                              ).reshape(-1, 3, 4)}


def _forward_dynamics(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """The tree's forward dynamics; with loop joints, the constrained accelerations (at
    consistent states, where every method agrees: :func:`_consistent`)."""
    if r.model.loop_joints:
        return _consistent(r)
    return {"a": ref.forward_dynamics(r.model, r.q, r.v, r.tau, r.f_ext, params=r.params)}


# ---------------------------------------------------------------- closed loops
def _loop(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """Φ, G and Ġq̇ of the loop kernels from the numeric loop closure
    (:class:`symgen.loops.LoopClosure`, written from Müller 2014 with the reference
    kinematics), in the rows the analysis keeps."""
    closure = LoopClosure(r.model, r.params)
    tk = closure.kinematics(r.q)
    keep = [loop.selection for loop in r.context.loops.loops]
    out = {"phi": np.concatenate([u @ closure.raw_residual(cut, tk)
                                  for u, cut in zip(keep, closure.cuts, strict=True)]),
           "G": np.vstack([u @ h for u, h in zip(keep, closure.jacobians(r.q), strict=True)])}
    if r.v is not None:
        out["gamma"] = np.concatenate([u @ g for u, g in zip(
            keep, closure.biases(r.q, r.v), strict=True)])
    return out


def _loop_dynamics(r: ReferenceQuery) -> steps.LoopDynamics:
    """The mechanism as the numpy steps read it: M and C of the reference dynamics, τ + Q
    of the force elements, Φ, G and Ġq̇ of the numeric loop closure in every kept row
    (:func:`_loop`; the steps' augmented-Lagrangian solves take dependent rows), q ⊕ Δ on
    the joint manifolds."""
    model, params = r.model, r.params

    def loops(q: np.ndarray, v: np.ndarray | None = None) -> dict[str, np.ndarray]:
        return _loop(ReferenceQuery(model, {**r.state, "q": q, "v": v}, r.frame, r.context))

    return steps.LoopDynamics(
        mass=lambda q: ref.mass_matrix(model, q, params=params),
        bias=lambda q, v: ref.bias_forces(model, q, v, params=params),
        applied=lambda q, v, tau: tau + element_forces(model, q, v, params=params),
        phi=lambda q: loops(q)["phi"],
        jac=lambda q: loops(q)["G"],
        gamma=lambda q, v: loops(q, v)["gamma"],
        integrate=lambda q, dq: ref.integrate(model, q, dq, 1.0, params=params))


def _step_settings(r: ReferenceQuery) -> steps.Settings:
    """The settings the kernels were generated with: Options.step (``loop_step``), the
    acceleration-level penalties of the loop system, the iteration counts of
    :mod:`symgen.formulations.loop_step`."""
    return steps.Settings(r.context.step, r.context.loop_system.alpha, loop_step.ITERATIONS,
                          loop_step.REFINEMENT_ITERATIONS, loop_step.PROJECTION_ITERATIONS)


def _loop_project(r: ReferenceQuery) -> dict[str, np.ndarray]:
    dynamics, settings = _loop_dynamics(r), _step_settings(r)
    q, v = steps.project(dynamics, settings, r.q, r.v)
    return {"q_closed": q, "v_consistent": v,
            "a_consistent": steps.project_accelerations(dynamics, settings, q, v, r.a)}


def _loop_rk4(r: ReferenceQuery) -> dict[str, np.ndarray]:
    settings = dataclasses.replace(_step_settings(r), h=float(np.ravel(r.dt)[0]))
    dynamics = _loop_dynamics(r)
    q, v, lam = steps.rk4_step(dynamics, settings, r.q, r.v,
                               np.asarray(r.state["lam"], float), r.tau)
    return {"q_next": q, "v_next": v, "lam_next": lam,
            "lam_next" + THROUGH: dynamics.jac(q).T}


def _loop_trapezoidal(r: ReferenceQuery) -> dict[str, np.ndarray]:
    settings = _step_settings(r)
    penalty = loop_step.step_penalty(r.context.loop_system, settings.h, settings.h / 50.0)
    dynamics = _loop_dynamics(r)
    q, v, a, lam = steps.trapezoidal_step(
        dynamics, settings, penalty.alpha, loop_step.STEP_ITERATIONS, r.q, r.v,
        r.a, np.asarray(r.state["lam"], float), r.tau)
    return {"q_next": q, "v_next": v, "a_next": a, "lam_next": lam,
            "lam_next" + ROUNDOFF: np.array(_loop_multiplier_roundoff(r.model, penalty.alpha)),
            "lam_next" + THROUGH: dynamics.jac(q).T}


def _loop_multiplier_roundoff(model: Model, alpha: np.ndarray) -> float:
    """How far the implicit step's multipliers of two correct implementations may differ:
    each update λ* += α(Φ + μΦ̇) carries the rounding of Φ_i (ε times the sum of the lever
    arms a loop residual adds up, at most the sum of every joint's offset, plus 1) times
    α_i (~10¹⁰ at 1 ms); ``ROUNDOFF_FACTOR`` times that."""
    joints = (*model.joints, *model.loop_joints)
    arms = 1.0 + sum(float(np.linalg.norm(placement.translation))
                     for j in joints for placement in (j.placement, j.child_placement)
                     if placement is not None)
    eps = float(np.finfo(float).eps)
    return ROUNDOFF_FACTOR * eps * float(np.max(alpha, initial=0.0)) * arms


def _elements_at(r: ReferenceQuery, v: np.ndarray | None = None) -> np.ndarray:
    """Q of the model's force elements (:func:`symgen.reference.forces.element_forces`) at
    the rates ``v`` (default: the state's)."""
    return element_forces(r.model, r.q, r.v if v is None else v, params=r.params)


def _constrained(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """q̈ and λ from the saddle-point system [[M, −Gᵀ], [G, 0]] [q̈; λ] = [τ + Q − C; −Ġq̇],
    M and C of the reference dynamics, Q of the force elements (:mod:`symgen.reference.forces`),
    G and Ġq̇ of the numeric loop closure in the independent rows, solved as one dense
    system (numpy); with Options.baumgarte (α, β), −Ġq̇ − 2α G q̇ − β² Φ on the right."""
    loops = _loop(r)
    keep = list(r.context.loops.rows)
    g, gamma = loops["G"][keep], loops["gamma"][keep]
    if r.context.baumgarte is not None:
        alpha, beta = (float(x) for x in r.context.baumgarte)
        gamma = gamma + 2 * alpha * g @ r.v + beta ** 2 * loops["phi"][keep]
    m_matrix = ref.mass_matrix(r.model, r.q, params=r.params)
    c = ref.bias_forces(r.model, r.q, r.v, params=r.params)
    if r.f_ext:
        c = ref.inverse_dynamics(r.model, r.q, r.v, np.zeros(r.model.nv), f_ext=r.f_ext,
                                 params=r.params)
    c = c - _elements_at(r)
    nv, m = r.model.nv, len(keep)
    kkt = np.block([[m_matrix, -g.T], [g, np.zeros((m, m))]])
    x = np.linalg.solve(kkt, np.concatenate([r.tau - c, -gamma]))
    return {"a": x[:nv], "lam": x[nv:], "system": kkt}


def _actuated_inverse(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """u and λ from the square system [B, Gᵀ] [u; λ] = M a + C − Q (− Σ Jᵀ f_ext): the
    reference inverse dynamics and force elements, G of the numeric loop closure in the
    independent rows, B the columns of the identity of the actuated coordinates, solved
    densely (numpy)."""
    split = actuation(r.context.model, r.context.loops, r.context.actuated)
    keep = list(r.context.loops.rows)
    g = _loop(r)["G"][keep]
    tau = ref.inverse_dynamics(r.model, r.q, r.v, r.a, r.f_ext, params=r.params)
    tau = tau - _elements_at(r)
    system = np.hstack([np.eye(r.model.nv)[:, list(split.active)], g.T])
    x = np.linalg.solve(system, tau)
    n = len(split.active)
    return {"tau_act": x[:n], "lam": x[n:], "system": system}


def _consistent(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """q̈ of the closed loops at a consistent state (G v = 0): the saddle-point solve of
    :func:`_constrained`. The embedded and multiplier forward dynamics agree there
    (elsewhere the embedding replaces v by X v_R)."""
    return {"a": _constrained(r)["a"]}


# ---------------------------------------------------------------- derivatives
def _id_derivatives(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """Central differences of the reference inverse dynamics."""
    dq, dv = central_differences(r.model, r.q, r.v, lambda q, v: ref.inverse_dynamics(
        r.model, q, v, r.a, r.f_ext, params=r.params), r.params)
    return {"dtau_dq": dq, "dtau_dv": dv}


def _fd_derivatives(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """−M⁻¹ ∂ID/∂x at q̈ = FD(q, v, τ) (ID(q, v, FD(q, v, τ)) = τ differentiated), with
    ∂ID/∂x by central differences of the reference inverse dynamics (better conditioned
    than differences of forward dynamics, whose M⁻¹ amplifies them) and M⁻¹ for ∂q̈/∂τ."""
    a = ref.forward_dynamics(r.model, r.q, r.v, r.tau, r.f_ext, params=r.params)
    dq, dv = central_differences(r.model, r.q, r.v, lambda q, v: ref.inverse_dynamics(
        r.model, q, v, a, r.f_ext, params=r.params), r.params)
    minv = np.linalg.inv(ref.mass_matrix(r.model, r.q, params=r.params))
    return {"dqdd_dq": -minv @ dq, "dqdd_dv": -minv @ dv, "dqdd_dtau": minv}


def _linearization(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """[[−ad_v, I], [∂q̈/∂q, ∂q̈/∂v]] and [[0], [M⁻¹]] from the numpy references: the forward
    derivatives of :func:`_fd_derivatives` and −ad_v of each Lie-group joint."""
    d = _fd_derivatives(r)
    nv = r.model.nv
    lie = lie_term(r.model, np.asarray(r.v, float))
    a = np.block([[lie, np.eye(nv)], [d["dqdd_dq"], d["dqdd_dv"]]])
    return {"A": a, "B": np.vstack([np.zeros((nv, nv)), d["dqdd_dtau"]])}


def _jacobian_time_derivative(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """Central differences of the reference frame Jacobian along q ⊕ ±h v."""
    return {"Jdot": time_derivative(r.model, r.q, r.v, lambda q: ref.frame_jacobian(
        r.model, q, r.frame, r.context.jacobian_reference, params=r.params), r.params)}


# ---------------------------------------------------------------- identification
def _regressor(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """The numpy regressor (:mod:`symgen.reference.regressor`, Newton-Euler by unit
    parameters)."""
    return {"Y": regressor(r.model, r.q, r.v, r.a, params=r.params)}


def _base_regressor(r: ReferenceQuery) -> dict[str, np.ndarray]:
    return {"Y_base": _regressor(r)["Y"][:, list(r.context.base_parameters.columns)]}


# ---------------------------------------------------------------- constraint embedding
def _numeric_embedding(r: ReferenceQuery, v_ind: np.ndarray | None
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, θ̇, Ẋθ̇_R) at the state of ``r``, numerically: G and Ġq̇ of the numeric loop
    closure in the independent rows, X = [−G_D⁻¹G_R; I] over the dependent coordinates D
    and the independent ones R (numpy solves; no symbolic code). Not in
    :mod:`symgen.reference`: it needs the loop closure of :mod:`symgen.loops`, a higher
    stage."""
    emb = r.context.embedding
    nv = r.model.nv
    ind = list(emb.independent)
    dep = [i for i in range(nv) if i not in ind]
    x = np.zeros((nv, len(ind)))
    x[ind, range(len(ind))] = 1.0
    v = np.zeros(nv)
    xdot_v = np.zeros(nv)
    if r.model.loop_joints:
        keep = list(r.context.loops.rows)
        g = _loop(r)["G"][keep]
        x[dep] = -np.linalg.solve(g[:, dep], g[:, ind])
    if v_ind is not None:
        v = x @ np.asarray(v_ind, float)
        if r.model.loop_joints and dep:
            closure = LoopClosure(r.model, r.params)
            gamma = np.concatenate([u.selection @ b for u, b in zip(
                r.context.loops.loops, closure.biases(r.q, v), strict=True)])[keep]
            xdot_v[dep] = -np.linalg.solve(g[:, dep], gamma)
    return x, v, xdot_v


def _embedded_forward(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """a_R = (XᵀMX)⁻¹ Xᵀ(τ + Q − C − M Ẋθ̇_R) with the reference M, C and force elements:
    the projection of the tree's equations onto the independent coordinates (Jain 2009,
    §2.7's check), solved densely."""
    x, v, xdot_v = _numeric_embedding(r, r.state["v_ind"])
    m = ref.mass_matrix(r.model, r.q, params=r.params)
    c = ref.inverse_dynamics(r.model, r.q, v, np.zeros(r.model.nv), f_ext=r.f_ext,
                             params=r.params)
    q_el = _elements_at(r, v)
    a_ind = np.linalg.solve(x.T @ m @ x, x.T @ (r.tau + q_el - c - m @ xdot_v))
    return {"a_ind": a_ind, "v": v, "a": x @ a_ind + xdot_v}


def _embedded_inverse(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """T_R = Xᵀ(ID(q, θ̇, X a_R + Ẋθ̇_R) − Q) with the reference inverse dynamics."""
    x, v, xdot_v = _numeric_embedding(r, r.state["v_ind"])
    a = x @ np.asarray(r.state["a_ind"], float) + xdot_v
    tau = ref.inverse_dynamics(r.model, r.q, v, a, r.f_ext, params=r.params)
    return {"tau_ind": x.T @ (tau - _elements_at(r, v)), "a": a}


def _embedded_mass(r: ReferenceQuery) -> dict[str, np.ndarray]:
    x, _, _ = _numeric_embedding(r, None)
    return {"M": x.T @ ref.mass_matrix(r.model, r.q, params=r.params) @ x}


def _embedded_differences(r: ReferenceQuery, fn: Callable[[ReferenceQuery], np.ndarray]
                          ) -> tuple[np.ndarray, np.ndarray]:
    """(∂f/∂θ_R along the loop manifold, ∂f/∂θ̇_R) of ``fn`` (a reference evaluated at a
    modified query) by central differences: q ⊕ ±h X eₖ with X of the numeric loop
    closure and θ̇_R ± eₖ (:func:`symgen.reference.derivatives.central_differences`; the
    embedded dynamics are quadratic in θ̇_R, so a unit step is exact and free of the
    rounding ε|f|/h of a small one)."""
    x, _, _ = _numeric_embedding(r, None)

    def at(q: np.ndarray, v_ind: np.ndarray) -> np.ndarray:
        return fn(ReferenceQuery(r.model, {**r.state, "q": q, "v_ind": v_ind}, r.frame,
                                 r.context))

    return central_differences(r.model, r.q, np.asarray(r.state["v_ind"], float), at,
                               r.params, x, v_step=1.0)


def _embedded_id_derivatives(r: ReferenceQuery) -> dict[str, np.ndarray]:
    dq, dv = _embedded_differences(r, lambda s: _embedded_inverse(s)["tau_ind"])
    return {"dtau_dq": dq, "dtau_dv": dv}


def _embedded_fd_derivatives(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """Central differences of the reference embedded forward dynamics; ∂θ̈_R/∂τ =
    (XᵀMX)⁻¹Xᵀ with the reference M."""
    dq, dv = _embedded_differences(r, lambda s: _embedded_forward(s)["a_ind"])
    x, _, _ = _numeric_embedding(r, None)
    m = ref.mass_matrix(r.model, r.q, params=r.params)
    return {"dqdd_dq": dq, "dqdd_dv": dv,
            "dqdd_dtau": np.linalg.solve(x.T @ m @ x, x.T)}


def _embedded_linearization(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """[[−ad_v, I], [∂θ̈_R/∂θ_R, ∂θ̈_R/∂θ̇_R]] and [[0], [∂θ̈_R/∂τ]] from the references."""
    d = _embedded_fd_derivatives(r)
    ind = list(r.context.embedding.independent)
    n = len(ind)
    v = np.zeros(r.model.nv)
    v[ind] = r.state["v_ind"]
    lie = lie_term(r.model, v)[np.ix_(ind, ind)]
    return {"A": np.block([[lie, np.eye(n)], [d["dqdd_dq"], d["dqdd_dv"]]]),
            "B": np.vstack([np.zeros((n, r.model.nv)), d["dqdd_dtau"]])}


# ---------------------------------------------------------------- natural coordinates
def _tau(r: NaturalQuery) -> np.ndarray | None:
    return r.state.get("tau") if r.nm.actuated else None


def _params(r: NaturalQuery) -> np.ndarray | None:
    """The force elements' runtime parameters of the state (None: their defaults)."""
    return r.state.get("params") if r.nm.force_parameters else None


def _saddle(nm: NaturalModel, q: np.ndarray) -> np.ndarray:
    """[[M, Φ_qᵀ], [Φ_q, 0]] at q: the system q̈ and λ solve, singular with redundant
    constraints (the backward error then compares q̈ and Φ_qᵀλ, which are unique)."""
    pq = nm.phi_q(q)
    return np.block([[nm.mass_matrix, pq.T], [pq, np.zeros((nm.m, nm.m))]])


_TERMS: dict[int, tuple[NaturalModel, Callable[[np.ndarray], np.ndarray]]] = {}


def _constraint_terms(nm: NaturalModel, q: np.ndarray) -> np.ndarray:
    """Per constraint, the sum of the absolute values of its terms at q (Φ_i expanded into
    monomials): its evaluation in floating point errs by about ε times that."""
    if id(nm) not in _TERMS:
        import sympy

        rows = [sympy.Add(*[sympy.Abs(t) for t in sympy.Add.make_args(sympy.expand(c))])
                for c in nm.constraints]
        _TERMS[id(nm)] = (nm, sympy.lambdify([nm.symbols], rows, "numpy"))
    return np.array(_TERMS[id(nm)][1](np.asarray(q, float)), dtype=float).reshape(nm.m)


def _multiplier_roundoff(nm: NaturalModel, q: np.ndarray, alpha: np.ndarray) -> float:
    """How far the step's multipliers of two correct implementations may differ at q: each
    update λ* += α(Φ + μΦ̇) carries the rounding of Φ_i, ε Σ|terms of Φ_i|, times α_i (up
    to 1e15 on the double pendulum), and the multiplier filter spreads it over every
    multiplier; ``ROUNDOFF_FACTOR`` times ε max_i α_i Σ|terms of Φ_i|."""
    if nm.m == 0:
        return 0.0
    eps = float(np.finfo(float).eps)
    return ROUNDOFF_FACTOR * eps * float(np.max(alpha * _constraint_terms(nm, q)))


def _lagrange(r: NaturalQuery) -> dict[str, np.ndarray]:
    alpha = r.options.baumgarte
    qdd, lam = lagrange_accelerations(r.nm, r.state["q"], r.state["qd"], alpha, alpha,
                                      tau=_tau(r), params=_params(r))
    return {"qdd": qdd, "lam": lam, "system": _saddle(r.nm, r.state["q"])}


def _step(r: NaturalQuery) -> dict[str, np.ndarray]:
    o = r.options
    q, qd, qdd, lam = trapezoidal_step(
        r.nm, r.state["q"], r.state["qd"], r.state["qdd"],
        StepSettings(o.step, o.alpha, o.mu, o.iterations), r.state["lam"], _tau(r),
        _params(r))
    alpha = r.nm.step_penalty(o.step, o.damping, o.alpha, r.state["q"])
    return {"q_next": q, "qd_next": qd, "qdd_next": qdd, "lam_next": lam,
            "lam_next" + ROUNDOFF: np.array(_multiplier_roundoff(r.nm, q, alpha))}


def _rk4(r: NaturalQuery) -> dict[str, np.ndarray]:
    """The step from the state's multipliers; λ compared by its force Φ_qᵀλ (unique, while
    the multipliers of redundant constraints are the ones carried)."""
    q, qd, qdd, lam = rk4_step(r.nm, r.state["q"], r.state["qd"], r.state["qdd"],
                               float(np.ravel(r.state["dt"])[0]), _tau(r), _params(r),
                               lam=np.asarray(r.state["lam"], float))
    return {"q_next": q, "qd_next": qd, "qdd_next": qdd, "lam_next": lam,
            "lam_next" + THROUGH: r.nm.phi_q(q).T}


def _velocities(r: NaturalQuery) -> dict[str, np.ndarray]:
    """q̇ with Φ_q q̇ = 0 and ∇θ_j q̇ = ż_j for the independent joints, the least-squares
    solution of the stacked (consistent) system, ∇θ_j from the joint coordinates' values
    and gradients (:meth:`NaturalModel.joint_gradient_values`, not the derived
    expressions); compared by its backward error in the normal equations
    (Φ_qᵀΦ_q + GᵀG) q̇ = Gᵀż the kernel solves (their condition is the stacked matrix's
    squared)."""
    nm, q = r.nm, np.asarray(r.state["q"], float)
    rows = dict(zip(nm.actuated, nm.joint_gradient_values(q), strict=True))
    g = np.array([rows[name] for name in independent_joints(nm)])
    pq = nm.phi_q(q)
    stacked = np.vstack([pq, g])
    qd = np.linalg.lstsq(stacked, np.concatenate([np.zeros(nm.m), r.state["zd"]]),
                         rcond=None)[0]
    return {"qd": qd, "system": stacked.T @ stacked}


#: The numpy reference of each kernel that has one, by kernel name (catalogue order).
REFERENCES: dict[str, Reference] = {
    "forward_kinematics": _poses,
    "frame_jacobian": lambda r: {"J": ref.frame_jacobian(
        r.model, r.q, r.frame, r.context.jacobian_reference, params=r.params)},
    "frame_jacobian_dot_v": lambda r: {"Jdot_v": ref.frame_jacobian_dot_v(
        r.model, r.q, r.v, r.frame, r.context.jacobian_reference, params=r.params)},
    "inverse_dynamics": lambda r: {"tau": ref.inverse_dynamics(
        r.model, r.q, r.v, r.a, r.f_ext, params=r.params)},
    "mass_matrix": lambda r: {"M": ref.mass_matrix(r.model, r.q, params=r.params)},
    "bias_forces": lambda r: {"tau": ref.bias_forces(r.model, r.q, r.v, params=r.params)},
    "gravity_forces": lambda r: {"tau": ref.gravity_forces(r.model, r.q, params=r.params)},
    "forward_dynamics": _forward_dynamics,
    "forward_dynamics_aba": _forward_dynamics,
    "forward_dynamics_ltdl": _forward_dynamics,
    "mass_matrix_inverse": lambda r: {"Minv": np.linalg.inv(ref.mass_matrix(
        r.model, r.q, params=r.params))},
    "energy": lambda r: {"energy": np.array([
        ref.kinetic_energy(r.model, r.q, r.v, params=r.params),
        ref.potential_energy(r.model, r.q, params=r.params),
        ref.element_energy(r.model, r.q, params=r.params)])},
    "element_forces": lambda r: {"Q": _elements_at(r)},
    "integrate": lambda r: {"q_next": ref.integrate(r.model, r.q, r.v, float(r.dt),
                                                    params=r.params)},
    "configuration_rates": lambda r: {"qdot": ref.configuration_rates(r.model, r.q, r.v,
                                                                  params=r.params)},
    "loop_constraints": _loop,
    "loop_jacobian": _loop,
    "loop_bias": _loop,
    "constrained_forward_dynamics": _constrained,
    "loop_step": _loop_trapezoidal,
    "loop_step_rk4": _loop_rk4,
    "loop_project": _loop_project,
    "constrained_inverse_dynamics": _actuated_inverse,
    "inverse_dynamics_derivatives": _id_derivatives,
    "forward_dynamics_derivatives": _fd_derivatives,
    "frame_jacobian_time_derivative": _jacobian_time_derivative,
    "linearization": _linearization,
    "regressor": _regressor,
    "base_regressor": _base_regressor,
    "embedded_forward_dynamics": _embedded_forward,
    "embedded_inverse_dynamics": _embedded_inverse,
    "embedded_mass_matrix": _embedded_mass,
    "forward_dynamics_embedded": _consistent,
    "forward_dynamics_multipliers": _consistent,
    "embedded_inverse_dynamics_derivatives": _embedded_id_derivatives,
    "embedded_forward_dynamics_derivatives": _embedded_fd_derivatives,
    "embedded_linearization": _embedded_linearization,
    "nc_mass_matrix": lambda r: {"M": r.nm.mass_matrix},
    "nc_constraints": lambda r: {"phi": r.nm.phi(r.state["q"])},
    "nc_jacobian": lambda r: {"Phi_q": r.nm.phi_q(r.state["q"])},
    "nc_jacobian_dot_qdot": lambda r: {"phi_q_dot_qd": r.nm.phi_q_dot_qdot(r.state["q"],
                                                                           r.state["qd"])},
    "nc_forces": lambda r: {"Q": r.nm.generalized_forces(r.state["q"], r.state["qd"],
                                                         _tau(r), _params(r))},
    "nc_accelerations": _lagrange,
    "nc_step": _step,
    "nc_step_rk4": _rk4,
    "nc_velocities": _velocities,
}

#: The kernels verify compares with no reference, and why (their documentation says where
#: they are tested instead).
NO_REFERENCE: dict[str, str] = {
    "loop_assemble": "from verify's random, far guesses the Gauss-Newton map amplifies "
    "rounding (tests/kernels/test_loop_kernels.py)",
    "dependent_coordinates": "from random, far guesses Newton's map amplifies rounding "
    "(tests/kernels/test_constrained_inverse_dynamics.py)",
    "nc_assemble": "a setup kernel, Newton-Raphson from a guess: its result is checked to "
    "close the constraints from guesses near the assembled configuration "
    "(tests/kernels/test_natural_kernels.py)",
    "nc_body_poses": "compared with the joint-coordinate forward kinematics at states the "
    "natural modeller converts (tests/kernels/test_natural_kernels.py)",
    "nc_joint_values": "compared with the joint coordinates and rates the natural modeller "
    "converts, and continued across full turns (tests/kernels/test_natural_kernels.py, "
    "tests/kernels/test_element_energy.py)",
    "nc_energy": "compared with the joint-coordinate energies (symgen.reference.energy) at "
    "states the natural modeller converts (tests/kernels/test_element_energy.py)",
}


__all__ = ["NO_REFERENCE", "QUERIES", "REFERENCES", "ROUNDOFF", "STATES", "THROUGH", "NaturalQuery",
           "Reference", "ReferenceQuery", "natural_states", "reference_query"]
