"""The tree formulation's kernels (Jain's spatial operator algebra on the hinge tree),
registered in :mod:`symgen.registry`: inputs, outputs, derivation, numpy reference and
Pinocchio counterpart of each, in one declaration per kernel.

A derivation here is one line naming the recursion of :mod:`.recursions`,
:mod:`.articulated`, :mod:`.ltdl`, :mod:`.kinematics` or :mod:`.integrate` that computes the
kernel's outputs; :func:`tree_program` wraps it into a program (inputs declared from the
registry, the symbolic hinge tree built, outputs shaped from the registry).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from symgen.errors import SymgenError
from symgen.formulations import (
    articulated,
    constrained,
    derivatives,
    embedded,
    kinematics,
    loop_constraints,
    ltdl,
    recursions,
    regressor,
)
from symgen.formulations.element_forces import element_forces
from symgen.formulations.integrate import integrate
from symgen.formulations.tree import SNAP_TOLERANCE, SymbolicTree, build_tree, has_partitionable
from symgen.formulations.tree_options import Options, check_frames, default_frames
from symgen.ir.expr import Expr
from symgen.ir.program import Program, ProgramBuilder
from symgen.loops.actuation import actuation, independent_coordinates
from symgen.model import JointType, Model
from symgen.registry import Kernel, Output, get, register, register_formulation

FORMULATION = "tree"

#: Kernels derived by the articulated-body recursion only: a model with couplings (several
#: hinges on one DOF) has none of them (:func:`.articulated.articulated_factors`).
ARTICULATED = frozenset({"forward_dynamics_aba"})

#: The inputs a tree kernel may take, with their documentation (shapes: :func:`input_shape`).
INPUT_DOCS = {
    "q": "joint configuration (nq): angles in rad, displacements in m, unit quaternions "
    "(x, y, z, w) for spherical and free joints",
    "v": "joint velocity (nv): rates, body-frame angular (and linear) velocity of spherical "
    "and free joints",
    "a": "joint acceleration (nv)",
    "tau": "joint forces and torques (nv), N and N·m",
    "f_ext": "external spatial force on each moving body (nbodies × 6): [moment; force] in "
    "the body frame, moment about the body-frame origin",
    "dt": "time step (1), s",
    "params": "runtime parameters, in the model's declaration order",
    "v_ind": "rates of the independent coordinates (the embedding's; docs/loops.md)",
    "a_ind": "accelerations of the independent coordinates",
}


def input_shape(model: Model, name: str, independent: int = 0) -> tuple[int, ...]:
    """Shape of tree input ``name`` for ``model`` (``independent``: the number of
    independent coordinates, for ``v_ind`` and ``a_ind``)."""
    if name in ("v_ind", "a_ind"):
        return (independent,)
    return {
        "q": (model.nq,),
        "v": (model.nv,),
        "a": (model.nv,),
        "tau": (model.nv,),
        "f_ext": (model.nbodies, 6),
        "dt": (1,),
        "params": (len(model.parameters),),
    }[name]


@dataclass(frozen=True)
class TreeContext:
    """What a tree derivation needs beyond the kernel: the model, the bodies and frames
    forward kinematics reports, and the generation options that shape programs."""

    model: Model
    pose_names: tuple[str, ...] = ()
    jacobian_reference: str = "local_world_aligned"
    external_forces: bool = False
    snap: float = SNAP_TOLERANCE
    frames: tuple[str, ...] = ()
    #: Options.actuated and Options.baumgarte (the closed-loop kernels).
    actuated: tuple[str, ...] | None = None
    baumgarte: tuple[float, float] | None = None

    @cached_property
    def loops(self) -> Any:
        """The loop analysis (:func:`symgen.loops.analyse_loops`) of a model with loop
        joints (None without), run when a loop kernel first needs it: a model whose loops
        cannot be closed still has its tree kernels."""
        if not self.model.loop_joints:
            return None
        from symgen.loops import analyse_loops

        return analyse_loops(self.model)

    @cached_property
    def embedding(self) -> Any:
        """The aggregates and independent coordinates of the constraint embedding
        (:func:`symgen.loops.embedding.embedding`)."""
        from symgen.loops.embedding import embedding

        return embedding(self.model, self.loops, self.actuated)

    @cached_property
    def base_parameters(self) -> Any:
        """The base inertial parameters (:func:`symgen.apps.identification.base_parameters`),
        found when the base regressor first needs them."""
        from symgen.apps.identification import base_parameters

        return base_parameters(self.model)

    @property
    def loop_rows(self) -> tuple[np.ndarray, ...]:
        """K_α = Ū_α W_α of every loop joint (the rows the loop kernels keep); Ū_α alone
        for a universal cut, whose W_α turns with the joint (:mod:`.loop_constraints`)."""
        if self.loops is None:
            return ()
        return tuple(loop.selection if loop.constraint_rows is None else loop.constraint_rows
                     for loop in self.loops.loops)

    @property
    def loop_rank(self) -> int:
        """Independent loop constraints (the rank the loop analysis found)."""
        return 0 if self.loops is None else self.loops.rank

    @property
    def loop_keep(self) -> tuple[int, ...]:
        """The independent rows of the stacked kept rows (constant selection)."""
        return () if self.loops is None else tuple(self.loops.rows)

    @property
    def loop_count(self) -> int:
        """Rows of the loop-closure kernels: the kept constraints of every loop."""
        return 0 if self.loops is None else self.loops.constraints_kept


@dataclass(frozen=True)
class TreeTarget:
    """One program to derive: its name, its frame (per-frame kernels) and whether multi-DOF
    joints are partitioned into 1-DOF hinges."""

    name: str
    frame: str | None = None
    partition: bool = False
    method: str = ""


@dataclass
class Derivation:
    """The state of one derivation: the program builder, the symbolic tree (None for a
    kernel that needs none), the input symbols by name, the frame, the Jacobian reference,
    the model and the bodies and frames forward kinematics reports."""

    b: ProgramBuilder
    tree: SymbolicTree | None
    inputs: dict[str, list[Expr]]
    frame: str | None
    reference: str
    model: Model
    pose_names: tuple[str, ...] = ()
    loop_rows: tuple[np.ndarray, ...] = ()
    loop_keep: tuple[int, ...] = ()
    snap: float = SNAP_TOLERANCE
    method: str = ""

    def get(self, name: str) -> list[Expr] | None:
        return self.inputs.get(name)

    @property
    def frame_name(self) -> str:
        if self.frame is None:
            raise SymgenError("a per-frame kernel needs a frame name")
        return self.frame


Values = Callable[[Derivation], Sequence[Expr] | Mapping[str, Sequence[Expr]]]


def tree_program(values: Values) -> Callable[[TreeContext, TreeTarget, Kernel], Program]:
    """The derivation of a tree kernel: ``values(derivation)`` gives the elements of its
    output (flattened row-major), or, for a kernel with several outputs, a mapping from
    each output's name to its elements."""

    def derive(ctx: TreeContext, target: TreeTarget, kernel: Kernel) -> Program:
        model = ctx.model
        b = ProgramBuilder(target.name, kernel.summary)
        names = list(kernel.inputs)
        if ctx.external_forces and kernel.takes_forces:
            names.append("f_ext")
        if model.parameters:
            names.append("params")
        sym = {n: b.input(n, input_shape(model, n, _independent_count(ctx, n)), INPUT_DOCS[n])
               for n in names}
        tree = None
        if kernel.uses_tree:
            tree = build_tree(model, b, sym["q"], sym.get("params", ()),
                              partition=target.partition, snap=ctx.snap)
        d = Derivation(b, tree, sym, target.frame, ctx.jacobian_reference, model,
                       ctx.pose_names, *((ctx.loop_rows, ctx.loop_keep)
                                         if kernel.loops or kernel.embedding else ((), ())),
                       ctx.snap, target.method)
        result = values(d)
        by_name = result if isinstance(result, Mapping) else {kernel.output: result}
        for out in kernel.outputs:
            b.output(out.name, out.shape(ctx), by_name[out.name])
        return b.build()

    return derive


def _independent_count(ctx: TreeContext, name: str) -> int:
    """The number of independent coordinates when input ``name`` needs it."""
    return len(ctx.embedding.independent) if name in ("v_ind", "a_ind") else 0


def _flat(rows: Sequence[Sequence[Expr]]) -> list[Expr]:
    return [x for row in rows for x in row]


def _tree(d: Derivation) -> SymbolicTree:
    assert d.tree is not None
    return d.tree


def _element_forces(d: Derivation, v: Sequence[Expr] | None = None) -> list[Expr] | None:
    """Q(q, q̇) of the model's force elements at the rates ``v`` (default: the input v;
    None: it has none)."""
    return element_forces(d.b, _tree(d), d.get("q"), d.get("v") if v is None else v,
                          d.get("params") or (), d.snap)


# ---------------------------------------------------------------- reference and Pinocchio
@dataclass
class ReferenceQuery:
    """One state at which a kernel's reference value is wanted (:mod:`symgen.apps.verify`)."""

    model: Model
    state: Mapping[str, Any]
    frame: str | None
    context: Any

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
class PinocchioQuery:
    """One state for Pinocchio: its module, model, data, the :class:`Bridge` converting
    symgen's q, v and matrices, and the state converted (``forces`` only with external
    forces)."""

    pin: Any
    model: Any
    data: Any
    bridge: Any
    state: Mapping[str, Any]
    external_forces: bool

    @property
    def q(self) -> np.ndarray:
        return self.bridge.q_to_pin(self.state["q"])

    def vector(self, name: str) -> np.ndarray:
        return self.bridge.v_to_pin(self.state[name])

    @property
    def forces(self):
        return self.bridge.forces_to_pin(self.state["f_ext_dict"]) if self.external_forces \
            else None

    def v_out(self, x) -> np.ndarray:
        return self.bridge.v_from_pin(x)

    def matrix_out(self, m) -> np.ndarray:
        """A symmetric matrix Pinocchio filled in its upper triangle, in symgen's order."""
        m = np.asarray(m)
        return self.bridge.matrix_from_pin(np.triu(m) + np.triu(m, 1).T)


def _with_forces(fn: Callable, query: PinocchioQuery, *args):
    forces = query.forces
    return fn(query.model, query.data, *args, forces) if forces else fn(query.model, query.data,
                                                                        *args)


def _ref():
    from symgen import reference

    return reference


def _poses_reference(r: ReferenceQuery) -> np.ndarray:
    poses = _ref().forward_kinematics(r.model, r.q, params=r.params)
    return np.array([poses[n][:3, :] for n in r.context.pose_names]).reshape(-1, 3, 4)


# ---------------------------------------------------------------- the kernels
def _one(name: str, shape: Callable[[TreeContext], tuple[int, ...]], doc: str) -> tuple[Output]:
    return (Output(name, shape, doc),)


def _nv(c: TreeContext) -> tuple[int, ...]:
    return (c.model.nv,)


def _nv_nv(c: TreeContext) -> tuple[int, ...]:
    return (c.model.nv, c.model.nv)


_TAU = "joint forces and torques (nv), N and N·m"
_ACC = "joint accelerations (nv)"

register(Kernel(
    "forward_kinematics", FORMULATION,
    "world pose [R | p] (3×4, row-major) of every body and named frame",
    ("q",),
    _one("poses", lambda c: (len(c.pose_names), 3, 4),
         "world pose [R | p] (3×4, row-major) of every body, then every named frame"),
    tree_program(lambda d: kinematics.forward_kinematics(d.b, _tree(d), d.pose_names)),
    reference=lambda r: {"poses": _poses_reference(r)},
))
register(Kernel(
    "frame_jacobian", FORMULATION, "6×nv Jacobian [angular; linear] of a frame", ("q",),
    _one("J", lambda c: (6, c.model.nv), "Jacobian, rows [angular; linear] (6 × nv, row-major)"),
    tree_program(lambda d: _flat(kinematics.frame_jacobian(d.b, _tree(d), d.frame_name,
                                                           d.reference))),
    reference=lambda r: {"J": _ref().frame_jacobian(
        r.model, r.q, r.frame, r.context.jacobian_reference, params=r.params)},
    per_frame=True,
))
register(Kernel(
    "frame_jacobian_dot_v", FORMULATION,
    "J̇(q, v)·v: classical acceleration [ω̇; p̈] of a frame at zero joint acceleration",
    ("q", "v"),
    _one("Jdot_v", lambda c: (6,),
         "J̇(q, v)·v: classical acceleration [ω̇; p̈] at zero joint acceleration"),
    tree_program(lambda d: kinematics.frame_jacobian_dot_v(d.b, _tree(d), d.get("v"),
                                                          d.frame_name, d.reference)),
    reference=lambda r: {"Jdot_v": _ref().frame_jacobian_dot_v(
        r.model, r.q, r.v, r.frame, r.context.jacobian_reference, params=r.params)},
    per_frame=True,
))
register(Kernel(
    "inverse_dynamics", FORMULATION,
    "joint forces M(q) a + C(q, v) v + g(q) − Σ Jᵀ f_ext (Newton-Euler)", ("q", "v", "a"),
    _one("tau", _nv, _TAU),
    tree_program(lambda d: recursions.inverse_dynamics(d.b, _tree(d), d.get("v"), d.get("a"),
                                                       d.get("f_ext"))),
    reference=lambda r: {"tau": _ref().inverse_dynamics(r.model, r.q, r.v, r.a, r.f_ext,
                                                        params=r.params)},
    pinocchio=lambda p: {"tau": p.v_out(_with_forces(p.pin.rnea, p, p.q, p.vector("v"),
                                                     p.vector("a")))},
    takes_forces=True,
    without_elements=True,
))
register(Kernel(
    "mass_matrix", FORMULATION, "joint-space mass matrix M(q), nv×nv", ("q",),
    _one("M", _nv_nv, "joint-space mass matrix (nv × nv, row-major)"),
    tree_program(lambda d: _flat(recursions.mass_matrix(d.b, _tree(d)))),
    reference=lambda r: {"M": _ref().mass_matrix(r.model, r.q, params=r.params)},
    pinocchio=lambda p: {"M": p.matrix_out(p.pin.crba(p.model, p.data, p.q))},
))
register(Kernel(
    "bias_forces", FORMULATION, "C(q, v) v + g(q)", ("q", "v"),
    _one("tau", _nv, _TAU),
    tree_program(lambda d: recursions.inverse_dynamics(d.b, _tree(d), d.get("v"), None)),
    reference=lambda r: {"tau": _ref().bias_forces(r.model, r.q, r.v, params=r.params)},
    pinocchio=lambda p: {"tau": p.v_out(p.pin.nonLinearEffects(p.model, p.data, p.q,
                                                               p.vector("v")))},
    without_elements=True,
))
register(Kernel(
    "gravity_forces", FORMULATION, "g(q)", ("q",),
    _one("tau", _nv, _TAU),
    tree_program(lambda d: recursions.inverse_dynamics(d.b, _tree(d), None, None)),
    reference=lambda r: {"tau": _ref().gravity_forces(r.model, r.q, params=r.params)},
    pinocchio=lambda p: {"tau": p.v_out(p.pin.computeGeneralizedGravity(p.model, p.data,
                                                                        p.q))},
    without_elements=True,
))


def _forward_dynamics_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """The tree's forward dynamics; with loop joints, the constrained accelerations (at
    consistent states, where every method agrees: :func:`_consistent_reference`)."""
    if r.model.loop_joints:
        return _consistent_reference(r)
    return {"a": _ref().forward_dynamics(r.model, r.q, r.v, r.tau, r.f_ext, params=r.params)}


def _forward_dynamics_pinocchio(p: PinocchioQuery) -> dict[str, np.ndarray] | None:
    if p.bridge.model.loop_joints:  # Pinocchio's is the spanning tree's
        return None
    return {"a": p.v_out(p.bridge.forward_dynamics(p.q, p.vector("v"), p.vector("tau"),
                                                   p.forces))}


def _mass_matrix_inverse_pinocchio(p: PinocchioQuery) -> dict[str, np.ndarray]:
    return {"Minv": p.bridge.matrix_from_pin(p.bridge.mass_matrix_inverse(p.q))}


register(Kernel(
    "forward_dynamics", FORMULATION,
    "joint accelerations M⁻¹(τ − C v − g) by the cheaper of the two methods",
    ("q", "v", "tau"), _one("a", _nv, _ACC),
    tree_program(lambda d: articulated.forward_dynamics(d.b, _tree(d), d.get("v"),
                                                        d.get("tau"), d.get("f_ext"))),
    reference=_forward_dynamics_reference, pinocchio=_forward_dynamics_pinocchio,
    comparison="solve", takes_forces=True,
    variants=("forward_dynamics_aba", "forward_dynamics_ltdl"),
    loop_variants=("forward_dynamics_embedded", "forward_dynamics_multipliers"),
    doc="For a model with loop joints it closes the loops: the cheaper of "
    "forward_dynamics_embedded and forward_dynamics_multipliers (docs/loops.md).",
    without_elements=True,
))
register(Kernel(
    "forward_dynamics_aba", FORMULATION,
    "forward dynamics by the O(N) articulated-body (innovations) recursion",
    ("q", "v", "tau"), _one("a", _nv, _ACC),
    tree_program(lambda d: articulated.forward_dynamics(d.b, _tree(d), d.get("v"),
                                                        d.get("tau"), d.get("f_ext"))),
    reference=_forward_dynamics_reference, pinocchio=_forward_dynamics_pinocchio,
    comparison="solve", takes_forces=True, default=False,
    without_elements=True,
))
register(Kernel(
    "forward_dynamics_ltdl", FORMULATION,
    "forward dynamics by the mass matrix and a sparse LᵀDL solve",
    ("q", "v", "tau"), _one("a", _nv, _ACC),
    tree_program(lambda d: ltdl.forward_dynamics(d.b, _tree(d), d.get("v"), d.get("tau"),
                                                 d.get("f_ext"))),
    reference=_forward_dynamics_reference, pinocchio=_forward_dynamics_pinocchio,
    comparison="solve", takes_forces=True, default=False,
    without_elements=True,
))
register(Kernel(
    "mass_matrix_inverse", FORMULATION,
    "M(q)⁻¹ from the innovations factorization, without inverting M", ("q",),
    _one("Minv", _nv_nv, "inverse of the mass matrix (nv × nv, row-major)"),
    tree_program(lambda d: _flat((ltdl if _tree(d).coupled else articulated)
                                 .mass_matrix_inverse(d.b, _tree(d)))),
    reference=lambda r: {"Minv": np.linalg.inv(_ref().mass_matrix(r.model, r.q,
                                                                  params=r.params))},
    pinocchio=_mass_matrix_inverse_pinocchio,
    comparison="solve",
))
register(Kernel(
    "energy", FORMULATION, "[kinetic, potential] energy, J", ("q", "v"),
    _one("energy", lambda c: (2,), "[kinetic, potential] energy, J"),
    tree_program(lambda d: list(kinematics.energy(d.b, _tree(d), d.get("v")))),
    reference=lambda r: {"energy": np.array([
        _ref().kinetic_energy(r.model, r.q, r.v, params=r.params),
        _ref().potential_energy(r.model, r.q, params=r.params)])},
    without_elements=True,
))
register(Kernel(
    "integrate", FORMULATION, "q ⊕ v·dt on the joint manifolds", ("q", "v", "dt"),
    _one("q_next", lambda c: (c.model.nq,), "configuration q ⊕ v·dt (nq)"),
    tree_program(lambda d: integrate(d.b, d.model, d.inputs["q"], d.inputs["v"],
                                     d.inputs["dt"][0])),
    reference=lambda r: {"q_next": _ref().integrate(r.model, r.q, r.v, float(r.dt),
                                                    params=r.params)},
    uses_tree=False,
))



def _loop_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """Φ, G and Ġq̇ of the loop kernels from the numeric loop closure
    (:class:`symgen.loops.LoopClosure`, written from Müller 2014 with the reference
    kinematics), in the rows the analysis keeps."""
    from symgen.loops import LoopClosure

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


def _loops(c: TreeContext) -> tuple[int, ...]:
    return (c.loop_count,)


register(Kernel(
    "loop_constraints", FORMULATION,
    "loop-closure residual Φ(q) in the rows kept by the loop analysis", ("q",),
    _one("phi", _loops, "loop-closure residual (rows kept by the loop analysis)"),
    tree_program(lambda d: loop_constraints.constraints(d.b, _tree(d), d.loop_rows)),
    reference=_loop_reference, loops=True,
))
register(Kernel(
    "loop_jacobian", FORMULATION,
    "loop constraint Jacobian G(q), kept rows × nv", ("q",),
    _one("G", lambda c: (c.loop_count, c.model.nv),
         "loop constraint Jacobian (kept rows × nv, row-major): G q̇ = 0"),
    tree_program(lambda d: _flat(loop_constraints.jacobian(d.b, _tree(d), d.loop_rows))),
    reference=_loop_reference, loops=True,
))
register(Kernel(
    "loop_bias", FORMULATION,
    "loop constraint bias Ġ q̇: the constraints read G q̈ + Ġ q̇ = 0", ("q", "v"),
    _one("gamma", _loops, "Ġ q̇ (kept rows)"),
    tree_program(lambda d: loop_constraints.bias(d.b, _tree(d), d.get("v"), d.loop_rows)),
    reference=_loop_reference, loops=True,
))


register(Kernel(
    "loop_assemble", FORMULATION,
    "close the loops from a guess: damped Gauss-Newton, least-norm correction", ("q",),
    _one("q_assembled", lambda c: (c.model.nq,),
         "configuration closing the loops near the guess (nq)"),
    tree_program(lambda d: loop_constraints.assemble(
        d.b, d.model, d.get("q"), d.get("params") or (), d.loop_rows, d.loop_keep, d.snap)),
    uses_tree=False, loops=True, setup=True,
    doc="No reference in verify: from verify's random, far guesses the Gauss-Newton map "
    "amplifies rounding, so two implementations part (1e-5 on Bricard's linkage); "
    "tests/kernels/test_loop_kernels.py compares it with the numeric steps "
    "(LoopClosure.least_norm_steps) from guesses near the closed loops.",
))


def _with_context(values: Callable[[Derivation, TreeContext], Any]
                  ) -> Callable[[TreeContext, TreeTarget, Kernel], Program]:
    """:func:`tree_program` for a derivation that also reads the context (the closed-loop
    kernels' options)."""

    def derive(ctx: TreeContext, target: TreeTarget, kernel: Kernel) -> Program:
        return tree_program(lambda d: values(d, ctx))(ctx, target, kernel)

    return derive


def _reference_element_forces(r: ReferenceQuery) -> np.ndarray:
    """Q of the model's force elements from :func:`symgen.reference.forces.element_forces`."""
    from symgen.reference.forces import element_forces as reference_forces

    return reference_forces(r.model, r.q, r.v, params=r.params)


def _constrained_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """q̈ and λ from the saddle-point system [[M, −Gᵀ], [G, 0]] [q̈; λ] = [τ + Q − C; −Ġq̇],
    M and C of the reference dynamics, Q of the force elements (:mod:`symgen.reference.forces`),
    G and Ġq̇ of the numeric loop closure in the independent rows, solved as one dense
    system (numpy); with Options.baumgarte (α, β), −Ġq̇ − 2α G q̇ − β² Φ on the right."""
    ref = _ref()
    loops = _loop_reference(r)
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
    c = c - _reference_element_forces(r)
    nv, m = r.model.nv, len(keep)
    kkt = np.block([[m_matrix, -g.T], [g, np.zeros((m, m))]])
    x = np.linalg.solve(kkt, np.concatenate([r.tau - c, -gamma]))
    return {"a": x[:nv], "lam": x[nv:], "system": kkt}


register(Kernel(
    "constrained_forward_dynamics", FORMULATION,
    "forward dynamics of the closed loops: M q̈ + C = τ + Gᵀλ, G q̈ + Ġ q̇ = 0",
    ("q", "v", "tau"),
    (Output("a", _nv, _ACC + " satisfying the loop constraints"),
     Output("lam", lambda c: (c.loop_rank,),
            "constraint forces λ of the independent loop rows (Gᵀλ in joint space)")),
    _with_context(lambda d, c: dict(zip(("a", "lam"), constrained.forward_dynamics(
        d.b, _tree(d), d.get("v"), d.get("tau"), d.loop_rows, d.loop_keep, d.get("f_ext"),
        c.baumgarte, _element_forces(d)), strict=True))),
    reference=_constrained_reference, comparison="system", takes_forces=True, loops=True,
    doc="Options.baumgarte = (α, β) adds Baumgarte's stabilisation: G q̈ = −Ġq̇ − 2α G q̇ "
    "− β² Φ (off by default; docs/loops.md).",
))


def _actuation(c: TreeContext) -> Any:
    return actuation(c.model, c.loops, c.actuated)


def _actuated_inverse_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """u and λ from the square system [B, Gᵀ] [u; λ] = M a + C − Q (− Σ Jᵀ f_ext): the
    reference inverse dynamics and force elements, G of the numeric loop closure in the
    independent rows, B the columns of the identity of the actuated coordinates, solved
    densely (numpy)."""
    split = _actuation(r.context)
    keep = list(r.context.loops.rows)
    g = _loop_reference(r)["G"][keep]
    tau = _ref().inverse_dynamics(r.model, r.q, r.v, r.a, r.f_ext, params=r.params)
    tau = tau - _reference_element_forces(r)
    system = np.hstack([np.eye(r.model.nv)[:, list(split.active)], g.T])
    x = np.linalg.solve(system, tau)
    n = len(split.active)
    return {"tau_act": x[:n], "lam": x[n:], "system": system}


def _consistent_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """q̈ of the closed loops at a consistent state (G v = 0): the saddle-point solve of
    :func:`_constrained_reference`. The embedded and multiplier forward dynamics agree
    there (elsewhere the embedding replaces v by X v_R)."""
    return {"a": _constrained_reference(r)["a"]}


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
    _with_context(lambda d, c: dict(zip(("tau_act", "lam"), constrained.inverse_dynamics(
        d.b, _tree(d), d.get("v"), d.get("a"), d.loop_rows, d.loop_keep, _actuation(c),
        d.get("f_ext"), _element_forces(d)), strict=True))),
    reference=_actuated_inverse_reference, comparison="system", takes_forces=True,
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
    _with_context(lambda d, c: loop_constraints.dependent_coordinates(
        d.b, d.model, d.get("q"), d.get("params") or (), d.loop_rows, d.loop_keep,
        independent_coordinates(c.model, c.loops, c.actuated).passive, d.snap)),
    uses_tree=False, loops=True, setup=True, default=False, float_check=False,
    doc="No reference in verify (like loop_assemble: from random, far guesses Newton's "
    "map amplifies rounding); tests/kernels/test_constrained_inverse_dynamics.py compares "
    "it with the same steps in numpy from guesses near closed configurations. No float "
    "check either: verify's random independent coordinates often admit no closed "
    "configuration (outside the workspace), where Newton does not converge and the float "
    "and double iterations part.",
))


# ---------------------------------------------------------------- derivatives
#: Step of the central differences of the numpy reference derivatives (relative error
#: ~ h² |∂³f| + ε |f| / h ≈ 1e-10 on unit-scale states).
DIFFERENCE_STEP = 1e-6
#: verify's bound against that reference: the differences' truncation and rounding, over
#: random states whose velocities reach a few rad/s (Pinocchio is compared to 1e-10).
DIFFERENCE_TOLERANCE = 1e-6


def _central_differences(r: ReferenceQuery, fn: Callable[[np.ndarray, np.ndarray],
                                                          np.ndarray]) -> tuple[np.ndarray,
                                                                                np.ndarray]:
    """(∂f/∂q on the tangent space, ∂f/∂v) of ``fn(q, v)`` by central differences:
    q ⊕ ±h eᵢ (the reference ``integrate``) and v ± h eᵢ."""
    ref, h, nv = _ref(), DIFFERENCE_STEP, r.model.nv
    q, v = np.asarray(r.q, float), np.asarray(r.v, float)
    dq, dv = [], []
    for e in np.eye(nv):
        plus = ref.integrate(r.model, q, e, h, params=r.params)
        minus = ref.integrate(r.model, q, e, -h, params=r.params)
        dq.append((fn(plus, v) - fn(minus, v)) / (2 * h))
        dv.append((fn(q, v + h * e) - fn(q, v - h * e)) / (2 * h))
    return np.array(dq).T, np.array(dv).T


def _id_derivatives_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """Central differences of the reference inverse dynamics."""
    ref = _ref()
    dq, dv = _central_differences(r, lambda q, v: ref.inverse_dynamics(
        r.model, q, v, r.a, r.f_ext, params=r.params))
    return {"dtau_dq": dq, "dtau_dv": dv}


def _fd_derivatives_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """−M⁻¹ ∂ID/∂x at q̈ = FD(q, v, τ) (ID(q, v, FD(q, v, τ)) = τ differentiated), with
    ∂ID/∂x by central differences of the reference inverse dynamics (better conditioned
    than differences of forward dynamics, whose M⁻¹ amplifies them) and M⁻¹ for ∂q̈/∂τ."""
    ref = _ref()
    a = ref.forward_dynamics(r.model, r.q, r.v, r.tau, r.f_ext, params=r.params)
    dq, dv = _central_differences(r, lambda q, v: ref.inverse_dynamics(
        r.model, q, v, a, r.f_ext, params=r.params))
    minv = np.linalg.inv(ref.mass_matrix(r.model, r.q, params=r.params))
    return {"dqdd_dq": -minv @ dq, "dqdd_dv": -minv @ dv, "dqdd_dtau": minv}


#: How forward-dynamics derivatives are derived (symgen.formulations.derivatives).
DERIVATIVE_METHODS = ("direct", "via_id", "via_ltdl")


def _pinocchio_derivatives_apply(model: Model) -> bool:
    """Whether Pinocchio's analytical derivatives are a peer for ``model``: not with mimic
    joints (rejected), nor with universal joints, where Pinocchio 4.1's
    computeRNEADerivatives disagrees with central differences of its own rnea by up to
    7e-2 (random tree 19 of the tests, columns of the universal joint), while symgen's
    agree with them (tests/kernels/test_derivatives.py)."""
    return not model.coupled and all(j.type is not JointType.UNIVERSAL for j in model.joints)


def _id_derivatives_pinocchio(p: PinocchioQuery) -> dict[str, np.ndarray] | None:
    if not _pinocchio_derivatives_apply(p.bridge.model):
        return None
    out = _with_forces(p.pin.computeRNEADerivatives, p, p.q, p.vector("v"), p.vector("a"))
    return {"dtau_dq": p.bridge.matrix_from_pin(np.asarray(out[0])),
            "dtau_dv": p.bridge.matrix_from_pin(np.asarray(out[1]))}


def _fd_derivatives_pinocchio(p: PinocchioQuery) -> dict[str, np.ndarray] | None:
    if not _pinocchio_derivatives_apply(p.bridge.model):
        return None
    out = _with_forces(p.pin.computeABADerivatives, p, p.q, p.vector("v"), p.vector("tau"))
    return {"dqdd_dq": p.bridge.matrix_from_pin(np.asarray(out[0])),
            "dqdd_dv": p.bridge.matrix_from_pin(np.asarray(out[1])),
            "dqdd_dtau": p.matrix_out(out[2])}


register(Kernel(
    "inverse_dynamics_derivatives", FORMULATION,
    "∂τ/∂q (tangent space) and ∂τ/∂v of inverse dynamics (∂τ/∂a = M)", ("q", "v", "a"),
    (Output("dtau_dq", _nv_nv, "∂τ/∂q (nv × nv, row-major): columns along q ⊕ δ, δ in the "
            "tangent space (docs/derivatives.md)"),
     Output("dtau_dv", _nv_nv, "∂τ/∂v (nv × nv, row-major)")),
    _with_context(lambda d, c: derivatives.inverse_dynamics_derivatives(
        d.b, c, d.b.name, d.inputs, d.method)),
    reference=_id_derivatives_reference, pinocchio=_id_derivatives_pinocchio,
    takes_forces=True, uses_tree=False, default=False, on_request=True,
    tolerance=DIFFERENCE_TOLERANCE, methods=("forward", "reverse"), schedule=True,
    doc="The numpy reference is central differences (step 1e-6): verify bounds it by 1e-6; "
    "Pinocchio's computeRNEADerivatives is compared to 1e-10.",
))
register(Kernel(
    "forward_dynamics_derivatives", FORMULATION,
    "∂q̈/∂q (tangent space), ∂q̈/∂v and ∂q̈/∂τ = M⁻¹ of forward dynamics",
    ("q", "v", "tau"),
    (Output("dqdd_dq", _nv_nv, "∂q̈/∂q (nv × nv, row-major), tangent space"),
     Output("dqdd_dv", _nv_nv, "∂q̈/∂v (nv × nv, row-major)"),
     Output("dqdd_dtau", _nv_nv, "∂q̈/∂τ = M⁻¹ (nv × nv, row-major)")),
    _with_context(lambda d, c: derivatives.forward_dynamics_derivatives(
        d.b, c, d.b.name, d.inputs, d.method)),
    reference=_fd_derivatives_reference, pinocchio=_fd_derivatives_pinocchio,
    takes_forces=True, uses_tree=False, default=False, on_request=True,
    tolerance=DIFFERENCE_TOLERANCE, methods=DERIVATIVE_METHODS, comparison="solve",
    schedule=True,
    doc="Three derivations, the cheapest kept: the forward-dynamics program differentiated, "
    "or −M⁻¹ ∂ID with a dense or a factored M⁻¹ (docs/derivatives.md). The numpy "
    "reference is −M⁻¹ times central differences of inverse dynamics (step 1e-6, bound "
    "1e-6); Pinocchio's computeABADerivatives is compared to 1e-10. Every output solves "
    "M X = Y (Y = −∂ID/∂q, −∂ID/∂v, I), so the comparison is the backward error, as for "
    "forward dynamics: the forward error of the differences grows with cond(M).",
))


def _lie_reference(model: Model, v: np.ndarray) -> np.ndarray:
    """−ad_v on the rows and columns of each spherical and free joint, zero elsewhere."""
    nv = model.nv
    lie = np.zeros((nv, nv))

    def skew(w: np.ndarray) -> np.ndarray:
        return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])

    for joint in model.independent_joints:
        s = model.v_slices[joint.name]
        if joint.type is JointType.SPHERICAL:
            lie[s, s] = -skew(v[s])
        elif joint.type is JointType.FREE:
            k = s.start
            w, u = v[k:k + 3], v[k + 3:k + 6]
            lie[k:k + 3, k:k + 3] = lie[k + 3:k + 6, k + 3:k + 6] = -skew(w)
            lie[k + 3:k + 6, k:k + 3] = -skew(u)
    return lie


def _linearization_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """[[−ad_v, I], [∂q̈/∂q, ∂q̈/∂v]] and [[0], [M⁻¹]] from the numpy references: the forward
    derivatives of :func:`_fd_derivatives_reference` and −ad_v of each Lie-group joint."""
    d = _fd_derivatives_reference(r)
    nv = r.model.nv
    lie = _lie_reference(r.model, np.asarray(r.v, float))
    a = np.block([[lie, np.eye(nv)], [d["dqdd_dq"], d["dqdd_dv"]]])
    return {"A": a, "B": np.vstack([np.zeros((nv, nv)), d["dqdd_dtau"]])}


def _jacobian_time_derivative_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """Central differences of the reference frame Jacobian along q ⊕ ±h v."""
    ref, h = _ref(), DIFFERENCE_STEP
    q, v = np.asarray(r.q, float), np.asarray(r.v, float)

    def jacobian(x: np.ndarray) -> np.ndarray:
        return ref.frame_jacobian(r.model, x, r.frame, r.context.jacobian_reference,
                                  params=r.params)

    plus = ref.integrate(r.model, q, v, h, params=r.params)
    minus = ref.integrate(r.model, q, v, -h, params=r.params)
    return {"Jdot": (jacobian(plus) - jacobian(minus)) / (2 * h)}


register(Kernel(
    "frame_jacobian_time_derivative", FORMULATION,
    "J̇(q, v): time derivative of a frame's Jacobian (6×nv) as q moves with v", ("q", "v"),
    _one("Jdot", lambda c: (6, c.model.nv),
         "dJ/dt (6 × nv, row-major), rows and reference as frame_jacobian"),
    _with_context(lambda d, c: derivatives.frame_jacobian_time_derivative(
        d.b, c, d.b.name, d.inputs, d.frame_name)),
    reference=_jacobian_time_derivative_reference, per_frame=True, uses_tree=False,
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
    _with_context(lambda d, c: derivatives.linearization(d.b, c, d.b.name, d.inputs,
                                                               d.method)),
    reference=_linearization_reference, takes_forces=True, uses_tree=False, default=False,
    on_request=True, tolerance=DIFFERENCE_TOLERANCE, methods=DERIVATIVE_METHODS,
    schedule=True,
    doc="The numpy reference is central differences (bound 1e-6); the Lie-group rows of "
    "spherical and free joints hold −ad_v (docs/derivatives.md).",
))


# ---------------------------------------------------------------- identification
def _n_params(c: TreeContext) -> int:
    return regressor.PARAMETERS_PER_BODY * c.model.nbodies


def _regressor_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """The numpy regressor (:mod:`symgen.reference.regressor`, Newton-Euler by unit
    parameters)."""
    from symgen.reference.regressor import regressor as reference_regressor

    return {"Y": reference_regressor(r.model, r.q, r.v, r.a, params=r.params)}


def _regressor_pinocchio(p: PinocchioQuery) -> dict[str, np.ndarray] | None:
    if p.external_forces or p.bridge.model.coupled:
        return None  # Pinocchio's regressor has no external forces; mimic joints differ
    y = np.asarray(p.pin.computeJointTorqueRegressor(p.model, p.data, p.q, p.vector("v"),
                                                     p.vector("a")))
    return {"Y": p.bridge.regressor_from_pin(y)}


def _base_regressor_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    return {"Y_base": _regressor_reference(r)["Y"][:, list(r.context.base_parameters.columns)]}


register(Kernel(
    "regressor", FORMULATION,
    "inertial-parameter regressor Y(q, v, a): τ = Y π (armature left out)", ("q", "v", "a"),
    _one("Y", lambda c: (c.model.nv, _n_params(c)),
         "regressor (nv × 10·nbodies, row-major); per body m, m c, I about the body origin "
         "(xx, xy, yy, xz, yz, zz) (docs/identification.md)"),
    _with_context(lambda d, c: regressor.regressor(d.b, c.model, d.inputs, c.snap)),
    reference=_regressor_reference, pinocchio=_regressor_pinocchio, uses_tree=False,
    default=False, on_request=True,
))
register(Kernel(
    "base_regressor", FORMULATION,
    "regressor of the base inertial parameters: τ = Y_base π_base", ("q", "v", "a"),
    _one("Y_base", lambda c: (c.model.nv, c.base_parameters.count),
         "regressor of the base parameters (nv × base, row-major): the independent columns "
         "of Y, found at generation (symgen.apps.identification.base_parameters)"),
    _with_context(lambda d, c: [
        x for row in _rows(regressor.regressor(d.b, c.model, d.inputs, c.snap), _n_params(c))
        for x in (row[j] for j in c.base_parameters.columns)]),
    reference=_base_regressor_reference, uses_tree=False, default=False, on_request=True,
))


def _rows(flat: Sequence[Expr], width: int) -> list[Sequence[Expr]]:
    return [flat[i:i + width] for i in range(0, len(flat), width)]


# ---------------------------------------------------------------- constraint embedding
def _embedding_map(d: Derivation, c: TreeContext, v_ind: Sequence[Expr] | None
                   ) -> embedded.EmbeddingMap:
    """X_S of every aggregate at the configuration of ``d`` and, given ``v_ind``, the full
    rates and Ẋ_S θ̇_R (:func:`.embedded.embedding_map`)."""
    tree = _tree(d)
    return embedded.embedding_map(d.b, tree, c.loop_rows,
                                  embedded.nodes(tree, c.embedding, c.loop_keep),
                                  c.embedding.independent, v_ind)


def _plus_elements(d: Derivation, tau: Sequence[Expr], v: Sequence[Expr]) -> list[Expr]:
    """τ + Q(q, q̇): the joint forces and the model's force elements."""
    forces = _element_forces(d, v)
    if forces is None:
        return list(tau)
    return [d.b.emit(t + f) for t, f in zip(tau, forces, strict=True)]


#: The derivations of embedded forward dynamics: the embedded articulated-body recursion
#: and the reduced mass matrix (:mod:`.embedded`); the cheaper is kept.
EMBEDDED_METHODS = ("aba", "reduced")


def _embedded_solve(d: Derivation, emb: embedded.EmbeddingMap) -> tuple[list[Expr], list[Expr]]:
    """(θ̈_R, θ̈) by the derivation method ``d.method``."""
    tau = _plus_elements(d, d.get("tau"), emb.v)
    solve = embedded.reduced_forward_dynamics if d.method == "reduced" \
        else embedded.forward_dynamics
    return solve(d.b, _tree(d), emb, tau, d.get("f_ext"))


def _embedded_forward(d: Derivation, c: TreeContext) -> dict[str, list[Expr]]:
    emb = _embedding_map(d, c, d.get("v_ind"))
    a_ind, a = _embedded_solve(d, emb)
    return {"a_ind": a_ind, "v": emb.v, "a": a}


def _embedded_inverse(d: Derivation, c: TreeContext) -> dict[str, list[Expr]]:
    emb = _embedding_map(d, c, d.get("v_ind"))
    forces = _element_forces(d, emb.v)
    tau_ind, a = embedded.inverse_dynamics(d.b, _tree(d), emb, d.get("a_ind"), d.get("f_ext"),
                                           forces)
    return {"tau_ind": tau_ind, "a": a}


def _embedded_forward_full(d: Derivation, c: TreeContext) -> list[Expr]:
    """``forward_dynamics`` of a model with loops by embedding: q̈ from (q, v, τ), the
    independent entries of v taken as θ̇_R."""
    v = d.get("v")
    return _embedded_solve(d, _embedding_map(d, c, [v[i] for i in c.embedding.independent]))[1]


def _numeric_embedding(r: ReferenceQuery, v_ind) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, θ̇, Ẋθ̇_R) at the state of ``r``, numerically: G and Ġq̇ of the numeric loop
    closure in the independent rows, X = [−G_D⁻¹G_R; I] over the dependent coordinates D
    and the independent ones R (numpy solves; no symbolic code)."""
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
        g = _loop_reference(r)["G"][keep]
        x[dep] = -np.linalg.solve(g[:, dep], g[:, ind])
    if v_ind is not None:
        v = x @ np.asarray(v_ind, float)
        if r.model.loop_joints and dep:
            from symgen.loops import LoopClosure

            closure = LoopClosure(r.model, r.params)
            gamma = np.concatenate([u.selection @ b for u, b in zip(
                r.context.loops.loops, closure.biases(r.q, v), strict=True)])[keep]
            xdot_v[dep] = -np.linalg.solve(g[:, dep], gamma)
    return x, v, xdot_v


def _embedded_forward_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """a_R = (XᵀMX)⁻¹ Xᵀ(τ + Q − C − M Ẋθ̇_R) with the reference M, C and force elements:
    the projection of the tree's equations onto the independent coordinates (Jain 2009,
    §2.7's check), solved densely."""
    ref = _ref()
    x, v, xdot_v = _numeric_embedding(r, r.state["v_ind"])
    m = ref.mass_matrix(r.model, r.q, params=r.params)
    c = ref.inverse_dynamics(r.model, r.q, v, np.zeros(r.model.nv), f_ext=r.f_ext,
                             params=r.params)
    q_el = _reference_forces_at(r, v)
    a_ind = np.linalg.solve(x.T @ m @ x, x.T @ (r.tau + q_el - c - m @ xdot_v))
    return {"a_ind": a_ind, "v": v, "a": x @ a_ind + xdot_v}


def _reference_forces_at(r: ReferenceQuery, v: np.ndarray) -> np.ndarray:
    from symgen.reference.forces import element_forces as reference_forces

    return reference_forces(r.model, r.q, v, params=r.params)


def _embedded_inverse_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """T_R = Xᵀ(ID(q, θ̇, X a_R + Ẋθ̇_R) − Q) with the reference inverse dynamics."""
    x, v, xdot_v = _numeric_embedding(r, r.state["v_ind"])
    a = x @ np.asarray(r.state["a_ind"], float) + xdot_v
    tau = _ref().inverse_dynamics(r.model, r.q, v, a, r.f_ext, params=r.params)
    return {"tau_ind": x.T @ (tau - _reference_forces_at(r, v)), "a": a}


def _embedded_mass_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    x, _, _ = _numeric_embedding(r, None)
    return {"M": x.T @ _ref().mass_matrix(r.model, r.q, params=r.params) @ x}


def _n_ind(c: TreeContext) -> tuple[int, ...]:
    return (len(c.embedding.independent),)


_EMBEDDING_DOC = ("The independent coordinates: Options.actuated when valid, else chosen "
                  "at generation by pivoting G at the reference configuration "
                  "(docs/loops.md, 'Constraint embedding').")

register(Kernel(
    "embedded_forward_dynamics", FORMULATION,
    "forward dynamics in the independent coordinates by the embedded articulated-body "
    "recursion (constraint embedding)",
    ("q", "v_ind", "tau"),
    (Output("a_ind", _n_ind, "accelerations of the independent coordinates"),
     Output("v", _nv, "joint velocity (nv) of every coordinate: θ̇ = X θ̇_R"),
     Output("a", _nv, _ACC + ": θ̈ = X θ̈_R + Ẋ θ̇_R")),
    _with_context(_embedded_forward), reference=_embedded_forward_reference,
    takes_forces=True, embedding=True, default=False, methods=EMBEDDED_METHODS,
    doc=_EMBEDDING_DOC,
))
register(Kernel(
    "embedded_inverse_dynamics", FORMULATION,
    "generalized forces of the independent coordinates T_R = Xᵀ T (constraint embedding)",
    ("q", "v_ind", "a_ind"),
    (Output("tau_ind", _n_ind, "generalized forces of the independent coordinates (the "
            "actuator forces when they are the actuated joints)"),
     Output("a", _nv, _ACC + ": θ̈ = X θ̈_R + Ẋ θ̇_R")),
    _with_context(_embedded_inverse), reference=_embedded_inverse_reference,
    takes_forces=True, embedding=True, default=False, doc=_EMBEDDING_DOC,
))
register(Kernel(
    "embedded_mass_matrix", FORMULATION,
    "mass matrix of the independent coordinates Xᵀ M X (constraint embedding)", ("q",),
    _one("M", lambda c: _n_ind(c) * 2, "Xᵀ M X (independent × independent, row-major)"),
    _with_context(lambda d, c: _flat(embedded.reduced_mass_matrix(
        d.b, _tree(d), _embedding_map(d, c, None)))),
    reference=_embedded_mass_reference, embedding=True, default=False, doc=_EMBEDDING_DOC,
))


register(Kernel(
    "forward_dynamics_embedded", FORMULATION,
    "forward dynamics of the closed loops by constraint embedding (v consistent: its "
    "independent entries are used)",
    ("q", "v", "tau"), _one("a", _nv, _ACC + " satisfying the loop constraints"),
    _with_context(_embedded_forward_full), reference=_consistent_reference,
    takes_forces=True, loops=True, embedding=True, default=False, methods=EMBEDDED_METHODS,
    consistent=True, doc=_EMBEDDING_DOC,
))
register(Kernel(
    "forward_dynamics_multipliers", FORMULATION,
    "forward dynamics of the closed loops with multipliers (q̈ of "
    "constrained_forward_dynamics)",
    ("q", "v", "tau"), _one("a", _nv, _ACC + " satisfying the loop constraints"),
    _with_context(lambda d, c: constrained.forward_dynamics(
        d.b, _tree(d), d.get("v"), d.get("tau"), d.loop_rows, d.loop_keep, d.get("f_ext"),
        c.baumgarte, _element_forces(d))[0]),
    reference=_consistent_reference, takes_forces=True, loops=True, default=False,
    consistent=True,
))


# ---------------------------------------------------------------- embedding derivatives
def _embedded_differences(r: ReferenceQuery, fn: Callable[[ReferenceQuery], np.ndarray]
                          ) -> tuple[np.ndarray, np.ndarray]:
    """(∂f/∂θ_R along the loop manifold, ∂f/∂θ̇_R) of ``fn`` (a reference evaluated at a
    modified query) by central differences: q ⊕ ±h X eₖ with X of the numeric loop
    closure (the second-order departures from the manifold cancel in the central
    difference) and θ̇_R ± h eₖ."""
    ref, h = _ref(), DIFFERENCE_STEP
    x, _, _ = _numeric_embedding(r, None)
    q, v_ind = np.asarray(r.q, float), np.asarray(r.state["v_ind"], float)

    def at(q_: np.ndarray, v_: np.ndarray) -> np.ndarray:
        return fn(ReferenceQuery(r.model, {**r.state, "q": q_, "v_ind": v_}, r.frame,
                                 r.context))

    dq, dv = [], []
    for k, e in enumerate(np.eye(x.shape[1])):
        plus = ref.integrate(r.model, q, x[:, k], h, params=r.params)
        minus = ref.integrate(r.model, q, x[:, k], -h, params=r.params)
        dq.append((at(plus, v_ind) - at(minus, v_ind)) / (2 * h))
        dv.append((at(q, v_ind + h * e) - at(q, v_ind - h * e)) / (2 * h))
    return np.array(dq).T, np.array(dv).T


def _embedded_id_derivatives_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    dq, dv = _embedded_differences(r, lambda s: _embedded_inverse_reference(s)["tau_ind"])
    return {"dtau_dq": dq, "dtau_dv": dv}


def _embedded_fd_derivatives_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """Central differences of the reference embedded forward dynamics; ∂θ̈_R/∂τ =
    (XᵀMX)⁻¹Xᵀ with the reference M."""
    dq, dv = _embedded_differences(r, lambda s: _embedded_forward_reference(s)["a_ind"])
    x, _, _ = _numeric_embedding(r, None)
    m = _ref().mass_matrix(r.model, r.q, params=r.params)
    return {"dqdd_dq": dq, "dqdd_dv": dv,
            "dqdd_dtau": np.linalg.solve(x.T @ m @ x, x.T)}


def _embedded_linearization_reference(r: ReferenceQuery) -> dict[str, np.ndarray]:
    """[[−ad_v, I], [∂θ̈_R/∂θ_R, ∂θ̈_R/∂θ̇_R]] and [[0], [∂θ̈_R/∂τ]] from the references."""
    d = _embedded_fd_derivatives_reference(r)
    ind = list(r.context.embedding.independent)
    n = len(ind)
    v = np.zeros(r.model.nv)
    v[ind] = r.state["v_ind"]
    lie = _lie_reference(r.model, v)[np.ix_(ind, ind)]
    return {"A": np.block([[lie, np.eye(n)], [d["dqdd_dq"], d["dqdd_dv"]]]),
            "B": np.vstack([np.zeros((n, r.model.nv)), d["dqdd_dtau"]])}


def _ind_ind(c: TreeContext) -> tuple[int, ...]:
    return _n_ind(c) * 2


_EMBEDDED_DERIVATIVES_DOC = (
    "Derivatives along the loop manifold: θ_R ⊕ δ_R moves every coordinate by X δ_R to first "
    "order (docs/derivatives.md, 'Closed loops'). The numpy reference is central differences "
    "(step 1e-6, bound 1e-6). " + _EMBEDDING_DOC)
register(Kernel(
    "embedded_inverse_dynamics_derivatives", FORMULATION,
    "∂T_R/∂θ_R (along the loop manifold) and ∂T_R/∂θ̇_R of embedded inverse dynamics "
    "(∂T_R/∂θ̈_R = XᵀMX)", ("q", "v_ind", "a_ind"),
    (Output("dtau_dq", _ind_ind, "∂T_R/∂θ_R (independent × independent, row-major)"),
     Output("dtau_dv", _ind_ind, "∂T_R/∂θ̇_R (independent × independent, row-major)")),
    _with_context(lambda d, c: derivatives.embedded_inverse_dynamics_derivatives(
        d.b, c, d.b.name, d.inputs)),
    reference=_embedded_id_derivatives_reference, takes_forces=True, embedding=True,
    uses_tree=False, default=False, on_request=True, tolerance=DIFFERENCE_TOLERANCE,
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
    _with_context(lambda d, c: derivatives.embedded_forward_dynamics_derivatives(
        d.b, c, d.b.name, d.inputs, d.method)),
    reference=_embedded_fd_derivatives_reference, takes_forces=True, embedding=True,
    uses_tree=False, default=False, on_request=True, tolerance=DIFFERENCE_TOLERANCE,
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
    _with_context(lambda d, c: derivatives.embedded_linearization(
        d.b, c, d.b.name, d.inputs, d.method)),
    reference=_embedded_linearization_reference, takes_forces=True, embedding=True,
    uses_tree=False, default=False, on_request=True, tolerance=DIFFERENCE_TOLERANCE,
    methods=EMBEDDED_METHODS, doc=_EMBEDDED_DERIVATIVES_DOC,
))


class TreeFormulation:
    """The tree formulation for :func:`symgen.generate.generate` (options:
    :class:`symgen.generate.Options`). A per-frame kernel gives one program per frame; a
    kernel is derived with and without partitioning multi-DOF joints (``partition``), and a
    kernel with variants by each variant the option named like the kernel allows
    (``forward_dynamics="auto"``: both; ``"aba"``: ``forward_dynamics_aba``)."""

    name = FORMULATION

    def default_options(self) -> Options:
        return Options()

    def check_options(self, options) -> None:
        options.check()

    def context(self, model: Model, options) -> TreeContext:
        frames = tuple(options.frames) if options.frames is not None else default_frames(model)
        check_frames(model, frames)
        frames = tuple(dict.fromkeys(frames))  # a frame named twice gives one program
        return TreeContext(model, tuple(model.body_names) + tuple(model.frame_names),
                           options.jacobian_reference, options.external_forces, options.snap,
                           frames, actuated=options.actuated, baumgarte=options.baumgarte)

    def frames(self, kernel: Kernel, context: TreeContext) -> list[str | None]:
        if kernel.loops and not context.model.loop_joints:
            return []  # the loop-closure kernels of a model without loop joints: none
        if kernel.embedding and not (context.model.loop_joints or context.model.coupled):
            return []  # nothing to embed
        if kernel.name in ARTICULATED and context.model.coupled:
            return []  # the articulated-body recursion needs one hinge per DOF
        return list(context.frames) if kernel.per_frame else [None]

    def candidates(self, kernel: Kernel, context: TreeContext, name: str, frame: str | None,
                   options) -> list[tuple[str, Program]]:
        model = context.model
        partitions = [False]
        if kernel.uses_tree and has_partitionable(model):
            partitions = {"auto": [False, True], "always": [True], "never": [False]}[
                options.partition]
        methods = [kernel]
        variants = kernel.loop_variants if kernel.loop_variants and model.loop_joints \
            else kernel.variants
        if variants:
            choice = getattr(options, kernel.name, "auto")
            methods = [get(v) for v in variants
                       if choice == "auto" or v == f"{kernel.name}_{choice}"]
            if not methods:
                known = ", ".join(v.removeprefix(f"{kernel.name}_") for v in variants)
                raise SymgenError(f"{kernel.name}='{choice}' does not apply to model "
                                  f"{model.name!r} (choose auto or one of {known})")
            if model.coupled:  # the articulated-body recursion needs one hinge per DOF
                methods = [m for m in methods if m.name not in ARTICULATED]
                if not methods:
                    raise SymgenError(f"model {model.name!r} has coupled joints: "
                                      f"{kernel.name}='{choice}' does not apply to them "
                                      "(use 'ltdl' or 'auto')")
        out = []
        failures = []
        for method in methods:
            for way in method.methods or ("",):
                for partition in partitions:
                    target = TreeTarget(name, frame, partition, way)
                    try:
                        program = method.derive(context, target, method)
                    except SymgenError as exc:  # e.g. no embedding: the other methods
                        failures.append(exc)
                        continue
                    label = _label(kernel.name, method.name, partition,
                                   len(partitions) > 1 or partition, way)
                    out.append((label, program))
        if not out and failures:
            raise failures[0]
        return out

    def finish(self, kernel_set, context: TreeContext) -> None:
        model = context.model
        without = sorted({k for k in kernel_set.kernel_of.values() if get(k).without_elements
                          # with loop joints forward_dynamics closes them, elements included
                          and not (get(k).loop_variants and model.loop_joints)})
        if model.force_elements and without:
            import warnings

            names = ", ".join(e.name for e in model.force_elements)
            warnings.warn(f"model {model.name!r}: {', '.join(without)} leave out the force "
                          f"elements ({names}): the spanning tree's dynamics take joint "
                          "torques as inputs; constrained_forward_dynamics, "
                          "constrained_inverse_dynamics and the natural-coordinate kernels "
                          "include them", stacklevel=3)
        kernel_set.sizes = [
            ("NQ", model.nq, "length of q"),
            ("NV", model.nv, "length of v, a, tau"),
            ("NBODIES", model.nbodies, "moving bodies (rows of f_ext)"),
            ("NPARAMS", len(model.parameters), "runtime parameters"),
        ]


def _label(kernel: str, method: str, partition: bool, mention_partition: bool,
           way: str = "") -> str:
    parts = []
    if method != kernel:
        parts.append(method.removeprefix(f"{kernel}_"))
    if way:
        parts.append(way)
    if mention_partition:
        parts.append("partitioned" if partition else "unpartitioned")
    return ", ".join(parts)


register_formulation(TreeFormulation())

__all__ = [
    "Derivation",
    "FORMULATION",
    "INPUT_DOCS",
    "PinocchioQuery",
    "ReferenceQuery",
    "TreeContext",
    "TreeFormulation",
    "TreeTarget",
    "input_shape",
    "tree_program",
]
