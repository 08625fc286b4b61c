"""Derivatives of the dynamics with respect to the state, by differentiating the kernels'
own programs (forward and reverse mode, :mod:`symgen.ir.autodiff`).

**Tangent space.** A configuration is perturbed on its manifold, q ⊕ δ (the ``integrate``
program at v = δ, dt = 1), and derivatives are taken with respect to δ at δ = 0: for vector
joints ∂/∂δ = ∂/∂q; for spherical and free joints δ is the body-frame rotation (and, for a
free joint, body-frame translation) increment, as Pinocchio's derivatives are
(Carpentier & Mansard, "Analytical derivatives of rigid body dynamics algorithms", RSS 2018,
§II). Directions: δ (0 … nv − 1), v (nv … 2nv − 1), τ (2nv … 3nv − 1).

**Inverse dynamics**: ∂τ/∂q and ∂τ/∂v of the Newton-Euler program (∂τ/∂a = M, the
``mass_matrix`` kernel), by forward mode (2nv tangent directions), reverse mode (nv adjoint
directions, one per τᵢ) or the analytical recursions of Carpentier & Mansard 2018
(:mod:`symgen.formulations.analytical_derivatives`): the analytical, and where they decline,
the cheaper of the other two (:attr:`symgen.registry.Kernel.fallbacks`).

**Forward dynamics**, four derivations (``analytical``, and where it declines, the cheapest
of the other three): the tangents of the forward
dynamics program itself (``direct``), or through inverse dynamics: q̈ = FD(q, v, τ)
satisfies ID(q, v, q̈) = τ, so ∂q̈/∂x = −M⁻¹ ∂ID/∂x for x = q, v and ∂q̈/∂τ = M⁻¹
(Carpentier & Mansard 2018, eq. 7), with ∂ID/∂x at the computed q̈ (one reverse sweep of
the Newton-Euler program, which costs fewer operations than its 2nv tangent directions on
every robot measured: docs/derivatives.md) and M⁻¹ applied either
as the dense ``mass_matrix_inverse`` program times each column (``via_id``, q̈ by the
forward-dynamics program) or as the tree-sparse LᵀDL solve of all columns at once (``via_ltdl``,
q̈ by the same factor: Featherstone 2008, Tables 6.3-6.4), or ``analytical``: as
``via_ltdl`` with ∂ID/∂x by the analytical recursions. The factored derivations solve
for −M⁻¹ ∂ID/∂x by a :class:`~symgen.ir.solve.Solve` statement, the one part of a program
printed as loops (each row operation of the two sweeps one loop over the columns where its
operands can be nonzero): straight-line, the 2nv solves of Talos' 38 DOFs were 76,000
unrolled operations and 1.7 MB of machine code, which ran at 2.5 operations per ns; as loops
the kernel runs 2.3 times as fast (docs/derivatives.md). M⁻¹ (∂q̈/∂τ) = L⁻¹D⁻¹L⁻ᵀ is formed
once, one triangle.
"""

from __future__ import annotations

from collections.abc import Sequence

from symgen.errors import SymgenError
from symgen.formulations.tree.context import TreeContext, TreeTarget
from symgen.ir.autodiff import Tangent, adjoint, jacobian, replay, seeds
from symgen.ir.expr import ONE, ZERO, Expr, esum
from symgen.ir.optimize import optimize
from symgen.ir.program import Program, ProgramBuilder
from symgen.model import JointType, Model
from symgen.registry import get
from symgen.spatial import skew


def inner_program(context: TreeContext, kernel: str, name: str, method: str = "",
                  frame: str | None = None) -> Program:
    """The optimised program of registered kernel ``kernel`` for ``context`` (no
    partitioning; derivation ``method``, default ``""``: the derivation's own default;
    ``frame`` for a per-frame kernel), to be replayed."""
    spec = get(kernel)
    target = TreeTarget(f"{name}__{kernel}", frame=frame, method=method)
    return optimize(spec.derive(context, target, spec))


def _pass_through(inputs: dict[str, list[Expr]], program: Program) -> dict[str, list[Expr]]:
    """The inputs of ``program`` that are given as they are (f_ext, params)."""
    return {s.name: inputs[s.name] for s in program.inputs if s.name in inputs}


def perturbed_configuration(b: ProgramBuilder, context: TreeContext, name: str,
                            inputs: dict[str, list[Expr]],
                            directions: Sequence[Tangent] | None = None
                            ) -> tuple[list[Expr], list[Tangent]]:
    """(q ⊕ δ at δ = 0, its tangents along δ): the ``integrate`` program replayed. The
    tangent of δ is the identity, or ``directions`` (one tangent per velocity coordinate:
    the columns of a map such as the embedding's X)."""
    model = context.model
    program = inner_program(context, "integrate", name)
    values = {**_pass_through(inputs, program), "q": inputs["q"],
              "v": [ZERO] * model.nv, "dt": [ONE]}
    out, tangents = replay(b, program, values,
                           {"v": seeds(model.nv) if directions is None else directions})
    return out["q_next"], tangents["q_next"]


def _matrix(tangents: Sequence[Tangent], start: int, n: int) -> list[list[Expr]]:
    return jacobian(tangents, range(start, start + n))


def inverse_dynamics_derivatives(b: ProgramBuilder, context: TreeContext, name: str,
                                 inputs: dict[str, list[Expr]], method: str = "forward"
                                 ) -> dict[str, list[Expr]]:
    """∂τ/∂q (tangent space) and ∂τ/∂v of the Newton-Euler program, by ``method``
    ``"forward"`` (2nv tangent directions) or ``"reverse"`` (one adjoint direction per τᵢ;
    ∂τ/∂δ = ∂τ/∂q · ∂(q ⊕ δ)/∂δ with the second factor from the integrate program's
    tangents)."""
    nv = context.model.nv
    if method == "analytical":
        d_q, d_v = _analytical_rows(b, context, name, inputs, inputs["a"])
        return {"dtau_dq": _flat(d_q), "dtau_dv": _flat(d_v)}
    q, q_tangent = perturbed_configuration(b, context, name, inputs)
    program = inner_program(context, "inverse_dynamics", name)
    values = {**_pass_through(inputs, program), "q": q}
    if method == "reverse":
        d_q, d_v = _reverse_rows(b, program, values, nv, q_tangent)
        return {"dtau_dq": _flat(d_q), "dtau_dv": _flat(d_v)}
    _, tangents = replay(b, program, values, {"q": q_tangent, "v": seeds(nv, nv)})
    tau = tangents["tau"]
    return {"dtau_dq": _flat(_matrix(tau, 0, nv)), "dtau_dv": _flat(_matrix(tau, nv, nv))}


def _analytical_rows(b: ProgramBuilder, context: TreeContext, name: str,
                     inputs: dict[str, list[Expr]], a: Sequence[Expr]
                     ) -> tuple[list[list[Expr]], list[list[Expr]]]:
    """(∂τ/∂δ, ∂τ/∂v) at acceleration ``a`` by the analytical recursions
    (:mod:`symgen.formulations.analytical_derivatives`; SymgenError where they do not
    apply)."""
    from symgen.formulations import analytical_derivatives

    tree = analytical_derivatives.hinge_tree(context.model, b, inputs["q"],
                                             inputs.get("params") or (), context.snap)
    return analytical_derivatives.inverse_dynamics_derivatives(
        b, tree, inputs["v"], a, inputs.get("f_ext"))


def _reverse_rows(b: ProgramBuilder, program: Program, values: dict[str, list[Expr]],
                  nv: int, q_tangent: Sequence[Tangent]
                  ) -> tuple[list[list[Expr]], list[list[Expr]]]:
    """(∂τ/∂δ, ∂τ/∂v) of a program with output ``tau`` by one reverse sweep."""
    _, adj = adjoint(b, program, values, {"tau": seeds(nv)})
    d_v = [[adj["v"][j].get(i, ZERO) for j in range(nv)] for i in range(nv)]
    d_q = [[b.emit(esum([bar[i] * t[j] for bar, t in zip(adj["q"], q_tangent, strict=True)
                         if i in bar and j in t])) for j in range(nv)] for i in range(nv)]
    return d_q, d_v


def forward_dynamics_derivatives(b: ProgramBuilder, context: TreeContext, name: str,
                                 inputs: dict[str, list[Expr]], method: str
                                 ) -> dict[str, list[Expr]]:
    """∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ by ``method`` ``"direct"``, ``"via_id"`` or ``"via_ltdl"``
    (module docs)."""
    nv = context.model.nv
    q, q_tangent = perturbed_configuration(b, context, name, inputs)
    fd_kernel = "forward_dynamics_ltdl" if context.model.coupled else "forward_dynamics_aba"
    fd = inner_program(context, fd_kernel, name)
    values = {**_pass_through(inputs, fd), "q": q}
    if method == "direct":
        _, tangents = replay(b, fd, values, {"q": q_tangent, "v": seeds(nv, nv),
                                             "tau": seeds(nv, 2 * nv)})
        a = tangents["a"]
        return {"dqdd_dq": _flat(_matrix(a, 0, nv)), "dqdd_dv": _flat(_matrix(a, nv, nv)),
                "dqdd_dtau": _flat(_matrix(a, 2 * nv, nv))}
    inverse = inner_program(context, "inverse_dynamics", name)
    if method in ("via_ltdl", "analytical"):
        return _via_factor(b, context, name, inputs, q, q_tangent, inverse,
                           analytical=method == "analytical")
    out, _ = replay(b, fd, values)
    values = {**_pass_through(inputs, inverse), "q": q, "a": out["a"]}
    d_q, d_v = _reverse_rows(b, inverse, values, nv, q_tangent)
    minv_program = inner_program(context, "mass_matrix_inverse", name)
    minv_out, _ = replay(b, minv_program, {**_pass_through(inputs, minv_program), "q": q})
    minv = [minv_out["Minv"][i * nv:(i + 1) * nv] for i in range(nv)]

    def times(d_tau: list[list[Expr]]) -> list[Expr]:  # −M⁻¹ ∂τ
        return [b.emit(-esum([minv[i][k] * d_tau[k][j] for k in range(nv)
                              if d_tau[k][j] is not ZERO]))
                for i in range(nv) for j in range(nv)]

    return {"dqdd_dq": times(d_q), "dqdd_dv": times(d_v),
            "dqdd_dtau": [x for row in minv for x in row]}


def _via_factor(b: ProgramBuilder, context: TreeContext, name: str, inputs: dict[str, list[Expr]],
                q: list[Expr], q_tangent: Sequence[Tangent], inverse: Program,
                analytical: bool = False) -> dict[str, list[Expr]]:
    """``via_ltdl``: one LᵀDL factor of M(q) (Featherstone 2008, Table 6.3) solves for q̈
    itself (τ − ID(q, v, 0)), then, all columns at once, for −∂ID/∂x at q̈ (a
    :class:`~symgen.ir.solve.Solve`: loops over the columns, Table 6.4), and gives
    M⁻¹ = L⁻¹D⁻¹L⁻ᵀ (one triangle, :func:`~symgen.formulations.ltdl.ltdl_inverse`); ∂ID/∂x
    by one reverse sweep, or (``analytical``) by the analytical recursions
    (:mod:`symgen.formulations.analytical_derivatives`)."""
    from symgen.formulations.ltdl import (
        dof_parents,
        ltdl,
        ltdl_inverse,
        ltdl_solve,
        ltdl_solve_rows,
    )
    from symgen.formulations.tree.hinges import build_tree

    nv = context.model.nv
    mass = inner_program(context, "mass_matrix", name)
    m_out, _ = replay(b, mass, {**_pass_through(inputs, mass), "q": q})
    m = [m_out["M"][i * nv:(i + 1) * nv] for i in range(nv)]
    parent = dof_parents(build_tree(context.model, ProgramBuilder(f"{name}__dofs"), q,
                                    inputs.get("params") or ()))
    factor = ltdl(b, m, parent)
    inverse_d = [b.emit(1 / factor[i][i]) for i in range(nv)]
    bias, _ = replay(b, inverse, {**_pass_through(inputs, inverse), "q": q,
                                  "a": [ZERO] * nv})
    qdd = ltdl_solve(b, factor, parent, [b.emit(t - c) for t, c in zip(
        inputs["tau"], bias["tau"], strict=True)], inverse_d)
    if analytical:
        d_q, d_v = _analytical_rows(b, context, name, inputs, qdd)
    else:
        d_q, d_v = _reverse_rows(b, inverse, {**_pass_through(inputs, inverse), "q": q,
                                              "a": qdd}, nv, q_tangent)

    solved = ltdl_solve_rows(b, factor, parent, [[-x for x in (*d_q[i], *d_v[i])]
                                                 for i in range(nv)], inverse_d)
    minv = ltdl_inverse(b, factor, parent)
    return {"dqdd_dq": [solved[i][j] for i in range(nv) for j in range(nv)],
            "dqdd_dv": [solved[i][nv + j] for i in range(nv) for j in range(nv)],
            "dqdd_dtau": [x for row in minv for x in row]}


def lie_term(model: Model, v: Sequence[Expr]) -> list[list[Expr]]:
    """∂δ̇/∂δ (nv × nv): −ad_V on the joints whose configuration is a Lie group (spherical:
    −[ω]×; free: −[[ω×, 0], [v×, ω×]] in [ω; v] order), zero on vector joints.

    With q_true = q ⊕ δ and the body rates v_true = v + ν, q_true's rate is
    Ad_{exp(−δ)} v + J_r(δ) δ̇, so to first order δ̇ = ν − ad_v δ (Murray, Li & Sastry 1994,
    §2.4, the adjoint map; Sola, Deray & Atchuthan, "A micro Lie theory", 2018, §IV)."""

    nv = model.nv
    out: list[list[Expr]] = [[ZERO] * nv for _ in range(nv)]

    def minus_cross(rows: range, cols: range, w: Sequence[Expr]) -> None:
        for i, row in enumerate(skew(w)):  # −[w]× into the block (rows, cols)
            for j, x in enumerate(row):
                out[rows[i]][cols[j]] = -x

    for joint in model.independent_joints:
        vs = range(nv)[model.v_slices[joint.name]]
        if joint.type is JointType.SPHERICAL:
            minus_cross(vs, vs, [v[d] for d in vs])
        elif joint.type is JointType.FREE:
            w, u = [v[d] for d in vs[:3]], [v[d] for d in vs[3:]]
            minus_cross(vs[:3], vs[:3], w)
            minus_cross(vs[3:], vs[:3], u)
            minus_cross(vs[3:], vs[3:], w)
    return out


def linearization(b: ProgramBuilder, context: TreeContext, name: str, inputs: dict[str, list[Expr]],
                  method: str) -> dict[str, list[Expr]]:
    """A and B of ẋ = f(x, u), x = (q ⊕ δ, v) in the tangent space at δ = 0, u = τ:
    A = [[−ad_v, I], [∂q̈/∂q, ∂q̈/∂v]], B = [[0], [M⁻¹]] (:func:`lie_term`)."""
    d = forward_dynamics_derivatives(b, context, name, inputs, method)
    return _state_space(lie_term(context.model, inputs["v"]), d)


def _state_space(lie: Sequence[Sequence[Expr]], d: dict[str, list[Expr]]
                 ) -> dict[str, list[Expr]]:
    """A = [[lie, I], [∂q̈/∂q, ∂q̈/∂v]] and B = [[0], [∂q̈/∂τ]] from the forward
    derivatives ``d`` (n × n, n × n, n × m, row-major) and the n × n block ``lie``."""
    n = len(lie)
    m = len(d["dqdd_dtau"]) // n
    a_rows = [[*lie[i], *(ONE if j == i else ZERO for j in range(n))] for i in range(n)]
    a_rows += [[*d["dqdd_dq"][i * n:(i + 1) * n], *d["dqdd_dv"][i * n:(i + 1) * n]]
               for i in range(n)]
    b_rows = [[ZERO] * m for _ in range(n)] + [d["dqdd_dtau"][i * m:(i + 1) * m]
                                               for i in range(n)]
    return {"A": _flat(a_rows), "B": _flat(b_rows)}


def frame_jacobian_time_derivative(b: ProgramBuilder, context: TreeContext, name: str,
                                   inputs: dict[str, list[Expr]], frame: str
                                   ) -> dict[str, list[Expr]]:
    """J̇ = dJ(q ⊕ t v)/dt at t = 0: the ``frame_jacobian`` program's tangent along the one
    direction δ = v (the configuration moving with the joint rates; the columns of J̇ are
    those of J, in the same reference)."""
    directions = [{0: x} for x in inputs["v"]]
    q, q_tangent = perturbed_configuration(b, context, name, inputs, directions)
    program = inner_program(context, "frame_jacobian", name, frame=frame)
    _, tangents = replay(b, program, {**_pass_through(inputs, program), "q": q},
                         {"q": q_tangent})
    return {"Jdot": [t.get(0, ZERO) for t in tangents["J"]]}


# ---------------------------------------------------------------- constraint embedding
def embedding_directions(b: ProgramBuilder, context: TreeContext, q: Sequence[Expr],
                         params: Sequence[Expr]) -> list[Tangent]:
    """The columns of X_S over every coordinate, as tangents (one per velocity coordinate,
    direction k = independent coordinate k): on the loop manifold q(θ_R) moves as
    q ⊕ (X_S δ_R) to first order, since Φ(q) = 0 and Y X_S = 0 (Jain 2009, eq. 11)."""
    from symgen.formulations import embedded
    from symgen.formulations.tree.hinges import build_tree

    tree = build_tree(context.model, b, q, params, snap=context.snap)
    emb = embedded.embedding_map(b, tree, context.loop_rows,
                                 embedded.nodes(tree, context.embedding, context.loop_keep),
                                 context.embedding.independent, None)
    r = len(emb.independent)
    columns = [embedded.expand(b, emb, [ONE if j == k else ZERO for j in range(r)])
               for k in range(r)]
    return [{k: columns[k][i] for k in range(r) if columns[k][i] is not ZERO}
            for i in range(context.model.nv)]


def _embedded_tangents(b: ProgramBuilder, context: TreeContext, name: str,
                       inputs: dict[str, list[Expr]], kernel: str, rates: str, last: str,
                       last_size: int, method: str = "") -> dict[str, list[Tangent]]:
    """Tangents of embedded kernel ``kernel``'s outputs along δ_R (directions 0 … r − 1:
    the configuration moved on the loop manifold), its independent rates ``rates``
    (r … 2r − 1) and its input ``last`` (2r …)."""
    r = len(context.embedding.independent)
    directions = embedding_directions(b, context, inputs["q"], inputs.get("params", []))
    q, q_tangent = perturbed_configuration(b, context, name, inputs, directions)
    program = inner_program(context, kernel, name, method)
    values = {**_pass_through(inputs, program), "q": q}
    seeded = {"q": q_tangent, rates: seeds(r, r)}
    if last_size:
        seeded[last] = seeds(last_size, 2 * r)
    _, tangents = replay(b, program, values, seeded)
    return tangents


def embedded_inverse_dynamics_derivatives(b: ProgramBuilder, context: TreeContext, name: str,
                                          inputs: dict[str, list[Expr]]
                                          ) -> dict[str, list[Expr]]:
    """∂T_R/∂θ_R (along the loop manifold) and ∂T_R/∂θ̇_R of embedded inverse dynamics
    (∂T_R/∂θ̈_R = XᵀMX, the ``embedded_mass_matrix`` kernel)."""
    r = len(context.embedding.independent)
    tau = _embedded_tangents(b, context, name, inputs, "embedded_inverse_dynamics", "v_ind",
                             "a_ind", 0)["tau_ind"]
    return {"dtau_dq": _flat(_matrix(tau, 0, r)), "dtau_dv": _flat(_matrix(tau, r, r))}


def embedded_forward_dynamics_derivatives(b: ProgramBuilder, context: TreeContext, name: str,
                                          inputs: dict[str, list[Expr]], method: str = ""
                                          ) -> dict[str, list[Expr]]:
    """∂θ̈_R/∂θ_R (along the loop manifold), ∂θ̈_R/∂θ̇_R and ∂θ̈_R/∂τ = (XᵀMX)⁻¹Xᵀ of
    embedded forward dynamics, its program differentiated (derivation ``method`` of the
    forward dynamics: the embedded recursion or the reduced mass matrix)."""
    nv, r = context.model.nv, len(context.embedding.independent)
    a = _embedded_tangents(b, context, name, inputs, "embedded_forward_dynamics", "v_ind",
                           "tau", nv, method)["a_ind"]
    return {"dqdd_dq": _flat(_matrix(a, 0, r)), "dqdd_dv": _flat(_matrix(a, r, r)),
            "dqdd_dtau": _flat(_matrix(a, 2 * r, nv))}


def embedded_linearization(b: ProgramBuilder, context: TreeContext, name: str,
                           inputs: dict[str, list[Expr]], method: str = ""
                           ) -> dict[str, list[Expr]]:
    """A and B of ẋ = f(x, τ) in the independent coordinates, x = (θ_R ⊕ δ_R, θ̇_R):
    A = [[−ad_v, I], [∂θ̈_R/∂θ_R, ∂θ̈_R/∂θ̇_R]], B = [[0], [∂θ̈_R/∂τ]] (r × nv blocks of B:
    τ are the forces of every joint, as ``embedded_forward_dynamics`` takes them)."""
    independent = list(context.embedding.independent)
    d = embedded_forward_dynamics_derivatives(b, context, name, inputs, method)
    rates = [ZERO] * context.model.nv
    for k, i in enumerate(independent):
        rates[i] = inputs["v_ind"][k]
    _check_lie_joints(context.model, set(independent))
    lie = lie_term(context.model, rates)
    return _state_space([[lie[i][j] for j in independent] for i in independent], d)


def _check_lie_joints(model: Model, independent: set[int]) -> None:
    """A spherical or free joint must be wholly independent or wholly dependent: the
    first-order error dynamics −ad_v of one split between the two are not derived."""
    for joint in model.independent_joints:
        if joint.type not in (JointType.SPHERICAL, JointType.FREE):
            continue
        coords = set(range(model.nv)[model.v_slices[joint.name]])
        if coords & independent and coords - independent:
            raise SymgenError(f"model {model.name!r}: joint {joint.name!r} ({joint.type.value}) "
                              "has both independent and dependent coordinates in the "
                              "embedding: linearization in independent coordinates is not "
                              "available (choose Options.independent to make it wholly one)")


def _flat(rows: Sequence[Sequence[Expr]]) -> list[Expr]:
    return [x for row in rows for x in row]


__all__ = ["embedded_forward_dynamics_derivatives", "embedded_inverse_dynamics_derivatives",
           "embedded_linearization", "embedding_directions", "forward_dynamics_derivatives",
           "frame_jacobian_time_derivative",
           "inner_program", "inverse_dynamics_derivatives", "lie_term", "linearization",
           "perturbed_configuration"]
