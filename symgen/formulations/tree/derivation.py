"""One tree derivation wrapped into a program: :func:`tree_program` declares the kernel's
inputs from the registry, builds the symbolic hinge tree and shapes the outputs, around a
function of the :class:`Derivation` that names the recursion computing them; and the small
helpers the catalogue modules share (output shapes, flattening, the force elements)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from symgen.errors import SymgenError
from symgen.formulations import embedded
from symgen.formulations.element_forces import element_forces, element_potential
from symgen.formulations.tree.context import INPUT_DOCS, TreeContext, TreeTarget, input_shape
from symgen.formulations.tree.hinges import SNAP_TOLERANCE, SymbolicTree, build_tree
from symgen.ir.expr import ZERO, Expr
from symgen.ir.program import Program, ProgramBuilder
from symgen.model import Model
from symgen.registry import Kernel, Output

#: How the registry derives a tree kernel (:attr:`symgen.registry.Kernel.derive`).
Derive = Callable[[TreeContext, TreeTarget, Kernel], Program]


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


def tree_program(values: Values) -> Derive:
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


def with_context(values: Callable[[Derivation, TreeContext], Any]) -> Derive:
    """:func:`tree_program` for a derivation that also reads the context (the closed-loop
    kernels' options)."""

    def derive(ctx: TreeContext, target: TreeTarget, kernel: Kernel) -> Program:
        return tree_program(lambda d: values(d, ctx))(ctx, target, kernel)

    return derive


def _independent_count(ctx: TreeContext, name: str) -> int:
    """The number of independent coordinates (``v_ind``, ``a_ind``) or loop rows (``lam``)
    when input ``name`` needs it."""
    if name == "lam":
        return ctx.loop_count
    return len(ctx.embedding.independent) if name in ("v_ind", "a_ind") else 0


# ---------------------------------------------------------------- shared by the catalogue
TAU_DOC = "joint forces and torques (nv), N and N·m"
ACC_DOC = "joint accelerations (nv)"


def one(name: str, shape: Callable[[TreeContext], tuple[int, ...]], doc: str) -> tuple[Output]:
    """The outputs of a kernel with one output."""
    return (Output(name, shape, doc),)


def nv_shape(c: TreeContext) -> tuple[int, ...]:
    return (c.model.nv,)


def nv_nv_shape(c: TreeContext) -> tuple[int, ...]:
    return (c.model.nv, c.model.nv)


def flat(rows: Sequence[Sequence[Expr]]) -> list[Expr]:
    """The elements of a matrix, row-major."""
    return [x for row in rows for x in row]


def tree_of(d: Derivation) -> SymbolicTree:
    """The symbolic tree of a kernel that uses one."""
    assert d.tree is not None
    return d.tree


def elements_of(d: Derivation, v: Sequence[Expr] | None = None) -> list[Expr] | None:
    """Q(q, q̇) of the model's force elements at the rates ``v`` (default: the input v;
    None: it has none)."""
    return element_forces(d.b, tree_of(d), d.get("q"), d.get("v") if v is None else v,
                          d.get("params") or (), d.snap)


def plus_elements(d: Derivation, tau: Sequence[Expr], v: Sequence[Expr]) -> list[Expr]:
    """τ + Q(q, q̇): the joint forces and the model's force elements at the rates ``v``."""
    forces = elements_of(d, v)
    if forces is None:
        return list(tau)
    return [d.b.emit(t + f) for t, f in zip(tau, forces, strict=True)]


def element_forces_of(d: Derivation) -> list[Expr]:
    """Q(q, q̇) of the model's force elements at the input v, zeros when it has none (the
    ``element_forces`` kernel)."""
    return elements_of(d) or [ZERO] * tree_of(d).nv


def embedding_of(d: Derivation, c: TreeContext, v_ind: Sequence[Expr] | None = None, *,
                 v: Sequence[Expr] | None = None,
                 baumgarte: tuple[float, float] | None = None) -> embedded.EmbeddingMap:
    """X_S of every aggregate at the configuration of ``d`` and, given the independent rates
    ``v_ind`` or every rate ``v``, the full rates and Ẋ_S θ̇_R
    (:func:`symgen.formulations.embedded.embedding_map`)."""
    tree = tree_of(d)
    return embedded.embedding_map(d.b, tree, c.loop_rows,
                                  embedded.nodes(tree, c.embedding, c.loop_keep),
                                  c.embedding.independent, v_ind, v=v, baumgarte=baumgarte)


def potential_of(d: Derivation) -> Expr:
    """V(q) of the model's force elements (½k(L − L₀)², ½k(θ − rest)², −F θ; 0 when it has
    none: :func:`symgen.formulations.element_forces.element_potential`)."""
    return element_potential(d.b, tree_of(d), d.get("q"), d.get("params") or (), d.snap)


__all__ = [
    "ACC_DOC",
    "Derivation",
    "Derive",
    "TAU_DOC",
    "Values",
    "element_forces_of",
    "elements_of",
    "embedding_of",
    "flat",
    "nv_nv_shape",
    "nv_shape",
    "one",
    "plus_elements",
    "potential_of",
    "tree_of",
    "tree_program",
    "with_context",
]
