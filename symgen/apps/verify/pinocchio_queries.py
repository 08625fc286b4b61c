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

from symgen.model import JointType

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


def _derivatives_apply(bridge: Bridge) -> bool:
    """Whether Pinocchio's analytical derivatives are a peer for the bridge's model: not with
    mimic joints (rejected), nor with composite joints (symgen's universal joints, the
    multi-joint bodies of Pinocchio's MJCF reading), where Pinocchio 4.1's
    computeRNEADerivatives disagrees with central differences of its own rnea (by up to 7e-2
    on random tree 19 of the tests, columns of the universal joint; by 2.5 on
    tests/data/mjcf/arm.xml, 3 random states), while symgen's agree with them
    (tests/kernels/test_derivatives.py)."""
    model = bridge.model
    return not model.coupled and not bridge.composite and all(
        j.type is not JointType.UNIVERSAL for j in model.joints)


def _id_derivatives(p: PinocchioQuery) -> dict[str, np.ndarray] | None:
    if not _derivatives_apply(p.bridge):
        return None
    out = _with_forces(p.pin.computeRNEADerivatives, p, p.q, p.vector("v"), p.vector("a"))
    return {"dtau_dq": p.bridge.matrix_from_pin(np.asarray(out[0])),
            "dtau_dv": p.bridge.matrix_from_pin(np.asarray(out[1]))}


def _fd_derivatives(p: PinocchioQuery) -> dict[str, np.ndarray] | None:
    if not _derivatives_apply(p.bridge):
        return None
    out = _with_forces(p.pin.computeABADerivatives, p, p.q, p.vector("v"), p.vector("tau"))
    return {"dqdd_dq": p.bridge.matrix_from_pin(np.asarray(out[0])),
            "dqdd_dv": p.bridge.matrix_from_pin(np.asarray(out[1])),
            "dqdd_dtau": p.matrix_out(out[2])}


def _regressor(p: PinocchioQuery) -> dict[str, np.ndarray] | None:
    if p.external_forces or p.bridge.model.coupled or p.bridge.composite:
        return None  # Pinocchio's regressor has no external forces; mimic joints differ; a
        # composite joint (MJCF reading) has one body where symgen has a chain
    y = np.asarray(p.pin.computeJointTorqueRegressor(p.model, p.data, p.q, p.vector("v"),
                                                     p.vector("a")))
    return {"Y": p.bridge.regressor_from_pin(y)}


#: Pinocchio's counterpart of each kernel that has one, by kernel name (catalogue order).
PINOCCHIO: dict[str, Counterpart] = {
    "inverse_dynamics": lambda p: {"tau": p.v_out(_with_forces(
        p.pin.rnea, p, p.q, p.vector("v"), p.vector("a")))},
    "mass_matrix": lambda p: {"M": p.bridge.matrix_from_pin(p.bridge.mass_matrix(p.q))},
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
