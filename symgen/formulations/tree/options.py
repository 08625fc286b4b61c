"""The tree formulation's options and frames: :class:`Options` (``symgen.Options``), the
default frames of the per-frame kernels and their check."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from symgen.errors import SymgenError
from symgen.formulations.kinematics import REFERENCES
from symgen.formulations.tree.hinges import SNAP_TOLERANCE
from symgen.model import Model
from symgen.model.limbs import end_names, limb_ends

PARTITION_CHOICES = ("auto", "always", "never")
FD_METHODS = ("auto", "aba", "ltdl", "embedded", "multipliers")


@dataclass(frozen=True)
class Options:
    """Generation options.

    - ``partition``: split multi-DOF joints into 1-DOF sub-hinges (Jain, *Partitioning*):
      ``"auto"`` derives each kernel both ways and keeps the one with fewer operations.
    - ``forward_dynamics``: method of the ``forward_dynamics`` kernel, ``"aba"``
      (articulated body), ``"ltdl"`` (mass matrix + sparse LᵀDL) or ``"auto"`` (fewer ops);
      for a model with loop joints, whose ``forward_dynamics`` closes the loops,
      ``"embedded"`` (constraint embedding), ``"multipliers"`` or ``"auto"``, which also
      choose the method of ``constrained_forward_dynamics``.
    - ``frames``: frames (or bodies) of the per-frame kernels; default: the tips of the
      model (:func:`default_frames`); ``tuple(model.frame_names)`` for every frame.
      forward_kinematics reports every body and frame.
    - ``jacobian_reference``: ``"local_world_aligned"``, ``"local"`` or ``"world"``.
    - ``external_forces``: give inverse and forward dynamics an ``f_ext`` input.
    - ``cse``: run common-subexpression elimination.
    - ``snap``: rotation/axis entries within this of 0 or ±1 are taken as exact.
    - ``actuated``: the actuated joints of a model with loop joints (tree joints, by name),
      for ``constrained_inverse_dynamics``; default: the joints the model's ``actuator``
      force elements drive, else its ground joints when they have as many DOF as the
      mechanism (docs/loops.md).
    - ``independent``: the joints (tree joints, by name) whose coordinates are the
      independent coordinates of ``dependent_coordinates`` and of the constraint embedding
      (``embedded_*``, ``forward_dynamics_embedded``); default None: the actuated joints
      when they determine the motion, else chosen by pivoting the loop Jacobian.
    - ``baumgarte``: (α, β) in 1/s, Baumgarte's stabilisation of
      ``constrained_forward_dynamics``, G q̈ = −Ġq̇ − 2α G q̇ − β² Φ; None (default): off.
    - ``step``: the step h, s, of the implicit closed-loop step ``loop_step`` (its
      penalties are chosen for it, so it is baked in; default 1 ms).
    """

    partition: str = "auto"
    forward_dynamics: str = "auto"
    frames: tuple[str, ...] | None = None
    jacobian_reference: str = "local_world_aligned"
    external_forces: bool = False
    cse: bool = True
    snap: float = SNAP_TOLERANCE
    actuated: tuple[str, ...] | None = None
    independent: tuple[str, ...] | None = None
    baumgarte: tuple[float, float] | None = None
    step: float = 1e-3

    def __post_init__(self) -> None:
        # a single joint name, or lists where tuples are meant (e.g. from JSON)
        for name in ("actuated", "independent"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, (value,))
            elif isinstance(value, list):
                object.__setattr__(self, name, tuple(value))
        if isinstance(self.baumgarte, list):
            object.__setattr__(self, "baumgarte", tuple(self.baumgarte))

    def check(self) -> None:
        if self.partition not in PARTITION_CHOICES:
            raise SymgenError(
                f"partition must be one of {', '.join(PARTITION_CHOICES)}, got {self.partition!r}"
            )
        if self.forward_dynamics not in FD_METHODS:
            raise SymgenError(
                f"forward_dynamics must be one of {', '.join(FD_METHODS)}, "
                f"got {self.forward_dynamics!r}"
            )
        if self.jacobian_reference not in REFERENCES:
            raise SymgenError(
                f"jacobian_reference must be one of {', '.join(REFERENCES)}, "
                f"got {self.jacobian_reference!r}"
            )
        for name in ("actuated", "independent"):
            joints = getattr(self, name)
            if joints is not None and (
                    not isinstance(joints, tuple) or not joints
                    or not all(isinstance(n, str) and n for n in joints)
                    or len(set(joints)) != len(joints)):
                raise SymgenError(f"{name} must name distinct joints, got {joints!r}")
        if not (isinstance(self.step, (int, float)) and math.isfinite(self.step)
                and self.step > 0):
            raise SymgenError(f"step must be a positive number of seconds, got {self.step!r}")
        if self.baumgarte is not None:
            try:
                alpha, beta = (float(x) for x in self.baumgarte)
            except (TypeError, ValueError):
                raise SymgenError("baumgarte must be (alpha, beta) in 1/s, got "
                                  f"{self.baumgarte!r}") from None
            if not (math.isfinite(alpha) and math.isfinite(beta) and alpha >= 0 and beta >= 0):
                raise SymgenError("baumgarte (alpha, beta) must be finite and >= 0, got "
                                  f"{self.baumgarte!r}")


def default_frames(model: Model) -> tuple[str, ...]:
    """The frames of the per-frame kernels when none are given: the limb ends a user acts
    through (feet, hands, tool frames), found from the kinematic structure
    (:mod:`symgen.model.limbs`).

    - every declared frame (YAML ``frames:``, :meth:`ModelBuilder.frame`) not on the root;
    - for each limb end (a leaf body of the moving tree, or a *hand*: a body carrying two or
      more moving chains shorter than the chain leading to it, e.g. the Panda's link 7 with
      its fingers): the links merged into it that end the description's tree
      (:attr:`Frame.leaf`: soles, ``tool0``, the Panda's ``panda_hand_tcp``) but those
      named like sensors (a tie-break, :data:`symgen.model.limbs.SENSOR_WORDS`); else, for
      a hand, the link its fingers hang from (a palm); else, unless it has declared frames,
      the body itself (a head carrying only cameras). A bare leaf first walks up its
      unbranched chain to the nearest body with tree-ending links;
    - never a link fixed to a body in the middle of the tree (a torso's IMU, camera, logo or
      arm mounts) and never a frame fixed on the root (its Jacobian is zero).

    Frames first, in model order, then bodies. For every frame:
    ``Options(frames=tuple(model.frame_names))`` or ``--frame all``.
    """
    declared = {f.name for f in model.frames if not f.link and f.body != model.root}
    chosen = set(declared)
    for i in limb_ends(model):
        body = model.bodies[i].name
        if any(f.body == body for f in model.frames if f.name in declared):
            chosen.update(n for n in end_names(model, i) if n != body)
        else:
            chosen.update(end_names(model, i))
    frames = [f.name for f in model.frames if f.name in chosen]
    return tuple(frames + [b.name for b in model.bodies if b.name in chosen])


def check_frames(model: Model, frames: Sequence[str]) -> None:
    """Every name in ``frames`` is a body or frame of ``model`` (else a one-line error)."""
    known = set(model.frame_names) | set(model.body_names) | {model.root}
    for f in frames:
        if f not in known:
            raise SymgenError(f"model {model.name!r} has no body or frame named {f!r}")


__all__ = ["FD_METHODS", "Options", "PARTITION_CHOICES", "check_frames", "default_frames"]
