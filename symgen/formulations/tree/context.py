"""What every tree derivation of one model shares: the inputs a tree kernel may take
(:data:`INPUT_DOCS`, :func:`input_shape`), the context (:class:`TreeContext`: the model, the
options that shape programs, and the loop analysis, constraint embedding and base parameters,
computed when a kernel first needs them) and the target of one derivation
(:class:`TreeTarget`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from symgen.formulations.loop_step import LoopSystem, loop_system
from symgen.formulations.tree.hinges import SNAP_TOLERANCE
from symgen.loops import LoopAnalysis, analyse_loops
from symgen.loops.embedding import Embedding, embedding
from symgen.model import Model
from symgen.reference.base_parameters import BaseParameters, base_parameters

FORMULATION = "tree"

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
    "lam": "augmented-Lagrangian multipliers of the independent loop rows, from the previous "
    "step (zeros at the start)",
}


def input_shape(model: Model, name: str, count: int = 0) -> tuple[int, ...]:
    """Shape of tree input ``name`` for ``model`` (``count``: the number of independent
    coordinates for ``v_ind`` and ``a_ind``, of independent loop rows for ``lam``)."""
    if name in ("v_ind", "a_ind", "lam"):
        return (count,)
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
    #: Options.actuated, Options.independent and Options.baumgarte (the closed-loop kernels).
    actuated: tuple[str, ...] | None = None
    baumgarte: tuple[float, float] | None = None
    #: Options.step: the step of the integration kernels, s
    step: float = 1e-3
    independent: tuple[str, ...] | None = None

    @cached_property
    def loops(self) -> LoopAnalysis | None:
        """The loop analysis (:func:`symgen.loops.analyse_loops`) of a model with loop
        joints (None without), run when a loop kernel first needs it: a model whose loops
        cannot be closed still has its tree kernels."""
        if not self.model.loop_joints:
            return None
        return analyse_loops(self.model)

    @cached_property
    def embedding(self) -> Embedding:
        """The aggregates and independent coordinates of the constraint embedding
        (:func:`symgen.loops.embedding.embedding`): Options.independent, else
        Options.actuated when valid, else chosen by pivoting."""
        return embedding(self.model, self.loops, self.actuated, self.independent)

    @cached_property
    def base_parameters(self) -> BaseParameters:
        """The base inertial parameters (:func:`symgen.reference.base_parameters.base_parameters`,
        Gautier 1991), found when the base regressor first needs them."""
        return base_parameters(self.model)

    @cached_property
    def loop_system(self) -> LoopSystem:
        """The loop rows and the penalties of the integration steps
        (:func:`symgen.formulations.loop_step.loop_system`)."""
        assert self.loops is not None
        return loop_system(self.model, self.loop_rows, tuple(range(self.loop_count)),
                           np.asarray(self.loops.reference, float), self.snap)

    @property
    def loop_rows(self) -> tuple[np.ndarray, ...]:
        """K_α = Ū_α W_α of every loop joint (the rows the loop kernels keep); Ū_α alone
        for a universal cut, whose W_α turns with the joint (:mod:`..loop_constraints`)."""
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


__all__ = ["FORMULATION", "INPUT_DOCS", "TreeContext", "TreeTarget", "input_shape"]
