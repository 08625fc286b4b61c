"""Pinocchio's counterparts of the registered kernels, by kernel name (:data:`PINOCCHIO`):
each reads one state through a :class:`PinocchioQuery` (the state converted to Pinocchio's
layout by :class:`symgen.peers.pinocchio.Bridge`) and returns Pinocchio's values in symgen's
layout, or None where Pinocchio has no counterpart for the model. This module does not
import Pinocchio: the caller passes its module in the query."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from symgen.model import JointType, Model

if TYPE_CHECKING:
    from symgen.peers.pinocchio import Bridge


@dataclass
class PinocchioQuery:
    """One state for Pinocchio: its module, model, data, the :class:`Bridge` converting
    symgen's q, v and matrices, and the state converted (``forces`` only with external
    forces)."""

    pin: Any
    model: Any
    data: Any
    bridge: Bridge
    state: Mapping[str, Any]
    external_forces: bool

    @property
    def q(self) -> np.ndarray:
        return self.bridge.q_to_pin(self.state["q"])

    def vector(self, name: str) -> np.ndarray:
        return self.bridge.v_to_pin(self.state[name])

    @property
    def forces(self) -> Any:
        return self.bridge.forces_to_pin(self.state["f_ext_dict"]) if self.external_forces \
            else None

    def v_out(self, x: Any) -> np.ndarray:
        return self.bridge.v_from_pin(x)

    def matrix_out(self, m: Any) -> np.ndarray:
        """A symmetric matrix Pinocchio filled in its upper triangle, in symgen's order."""
        m = np.asarray(m)
        return self.bridge.matrix_from_pin(np.triu(m) + np.triu(m, 1).T)


Counterpart = Callable[[PinocchioQuery], Mapping[str, np.ndarray] | None]


def _with_forces(fn: Callable, query: PinocchioQuery, *args: Any) -> Any:
    forces = query.forces
    return fn(query.model, query.data, *args, forces) if forces else fn(query.model, query.data,
                                                                        *args)


def _forward_dynamics(p: PinocchioQuery) -> dict[str, np.ndarray] | None:
    if p.bridge.model.loop_joints:  # Pinocchio's is the spanning tree's
        return None
    return {"a": p.v_out(p.bridge.forward_dynamics(p.q, p.vector("v"), p.vector("tau"),
                                                   p.forces))}


def _mass_matrix_inverse(p: PinocchioQuery) -> dict[str, np.ndarray]:
    return {"Minv": p.bridge.matrix_from_pin(p.bridge.mass_matrix_inverse(p.q))}


def _derivatives_apply(model: Model) -> bool:
    """Whether Pinocchio's analytical derivatives are a peer for ``model``: not with mimic
    joints (rejected), nor with universal joints, where Pinocchio 4.1's
    computeRNEADerivatives disagrees with central differences of its own rnea by up to
    7e-2 (random tree 19 of the tests, columns of the universal joint), while symgen's
    agree with them (tests/kernels/test_derivatives.py)."""
    return not model.coupled and all(j.type is not JointType.UNIVERSAL for j in model.joints)


def _id_derivatives(p: PinocchioQuery) -> dict[str, np.ndarray] | None:
    if not _derivatives_apply(p.bridge.model):
        return None
    out = _with_forces(p.pin.computeRNEADerivatives, p, p.q, p.vector("v"), p.vector("a"))
    return {"dtau_dq": p.bridge.matrix_from_pin(np.asarray(out[0])),
            "dtau_dv": p.bridge.matrix_from_pin(np.asarray(out[1]))}


def _fd_derivatives(p: PinocchioQuery) -> dict[str, np.ndarray] | None:
    if not _derivatives_apply(p.bridge.model):
        return None
    out = _with_forces(p.pin.computeABADerivatives, p, p.q, p.vector("v"), p.vector("tau"))
    return {"dqdd_dq": p.bridge.matrix_from_pin(np.asarray(out[0])),
            "dqdd_dv": p.bridge.matrix_from_pin(np.asarray(out[1])),
            "dqdd_dtau": p.matrix_out(out[2])}


def _regressor(p: PinocchioQuery) -> dict[str, np.ndarray] | None:
    if p.external_forces or p.bridge.model.coupled:
        return None  # Pinocchio's regressor has no external forces; mimic joints differ
    y = np.asarray(p.pin.computeJointTorqueRegressor(p.model, p.data, p.q, p.vector("v"),
                                                     p.vector("a")))
    return {"Y": p.bridge.regressor_from_pin(y)}


#: Pinocchio's counterpart of each kernel that has one, by kernel name (catalogue order).
PINOCCHIO: dict[str, Counterpart] = {
    "inverse_dynamics": lambda p: {"tau": p.v_out(_with_forces(
        p.pin.rnea, p, p.q, p.vector("v"), p.vector("a")))},
    "mass_matrix": lambda p: {"M": p.matrix_out(p.pin.crba(p.model, p.data, p.q))},
    "bias_forces": lambda p: {"tau": p.v_out(p.pin.nonLinearEffects(
        p.model, p.data, p.q, p.vector("v")))},
    "gravity_forces": lambda p: {"tau": p.v_out(p.pin.computeGeneralizedGravity(
        p.model, p.data, p.q))},
    "forward_dynamics": _forward_dynamics,
    "forward_dynamics_aba": _forward_dynamics,
    "forward_dynamics_ltdl": _forward_dynamics,
    "mass_matrix_inverse": _mass_matrix_inverse,
    "inverse_dynamics_derivatives": _id_derivatives,
    "forward_dynamics_derivatives": _fd_derivatives,
    "regressor": _regressor,
}


__all__ = ["PINOCCHIO", "Counterpart", "PinocchioQuery"]
