"""MuJoCo as a peer of ``symgen verify`` for models read from MJCF: MuJoCo compiles the
source file again and gives its values, in symgen's coordinates, for the kernels it has
(:data:`MUJOCO`, by kernel name).

MuJoCo's tree quantities are taken with its constraints (equalities, contacts, limits),
springs, dampers, actuators, fluid forces and gravity compensation off, so that
``mj_inverse`` is M(q) q̈ + bias (armature included) and ``mj_forward`` solves it.

The map is generic (:mod:`symgen.io.mjcf_state`): at fixed q, MuJoCo's velocity is linear in
symgen's, qvel = T v with T the nv_mj × nv matrix of columns ``to_mujoco(q, e_k)`` (free
joints rotate, coupled joints follow their master, locked joints stay), and qacc = T a + c
with c = ``to_mujoco(q, v, 0)`` (a free joint's ω × v). Equal power gives τ = Tᵀ τ_mj, so

- M = Tᵀ M_mj T (``mj_fullM``);
- τ(q, v, a) = Tᵀ τ_mj(q_mj, T v, T a + c) (``mj_inverse``), bias forces at a = 0 (qacc
  = c) and gravity forces at v = a = 0;
- forward dynamics: MuJoCo's ``qacc`` (``mj_forward``, qfrc_applied = T⁻ᵀ τ) mapped back
  when T is square (no couplings, no locks), else the solve of M a = τ − bias; not for
  models with loop joints, whose forward dynamics closes the loops;
- M⁻¹ = T⁻¹ M_mj⁻¹ T⁻ᵀ (``mj_solveM``) when T is square, else the inverse of M;
- energy: ``mj_energyVel`` and ``mj_energyPos`` less the bodies welded to the world (symgen
  lumps them into its root); the elements' entry: ``mj_energyPos`` with springs on less
  with them off (none compared when MuJoCo has springs symgen does not read: tendons,
  multi-DOF joints).

This module does not import MuJoCo at load: :func:`mujoco_peer` does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from symgen.io.mjcf_state import forces_to_mujoco, from_mujoco, to_mujoco
from symgen.kernel_set import KernelSet
from symgen.model import Model


@dataclass
class MujocoQuery:
    """One state for MuJoCo: its module, compiled model and data, symgen's model and the
    state (``q``, ``v``, ``a``, ``tau``) in symgen's coordinates."""

    mujoco: Any
    mj: Any
    data: Any
    model: Model
    state: Mapping[str, Any]

    @property
    def q(self) -> np.ndarray:
        return np.asarray(self.state["q"], dtype=float)

    def rates(self) -> np.ndarray:
        """T: MuJoCo's qvel per unit of each of symgen's velocity coordinates, at q."""
        columns = [to_mujoco(self.model, self.q, e)[1] for e in np.eye(self.model.nv)]
        return np.array(columns).T.reshape(self.mj.nv, self.model.nv)

    def square(self) -> bool:
        """Whether T is invertible (square: no couplings, no locked joints)."""
        return self.mj.nv == self.model.nv

    def forward(self, v: np.ndarray) -> None:
        """``mj_forward`` at (q, T v)."""
        qpos, qvel, _ = to_mujoco(self.model, self.q, v)
        self.data.qpos[:], self.data.qvel[:] = qpos, qvel
        self.data.qacc[:] = 0.0
        self.data.qfrc_applied[:] = 0.0
        self.mujoco.mj_forward(self.mj, self.data)

    def mass_matrix(self) -> np.ndarray:
        """M = Tᵀ M_mj T at q."""
        self.forward(np.zeros(self.model.nv))
        full = np.zeros((self.mj.nv, self.mj.nv))
        self.mujoco.mj_fullM(self.mj, self.data, full)
        t = self.rates()
        return t.T @ full @ t

    def inverse(self, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """τ = Tᵀ qfrc_inverse(q_mj, T v, T a + c)."""
        _, _, qacc = to_mujoco(self.model, self.q, v, a)
        self.forward(v)
        self.data.qacc[:] = qacc
        self.mujoco.mj_inverse(self.mj, self.data)
        return self.rates().T @ np.array(self.data.qfrc_inverse)

    def bias(self, v: np.ndarray) -> np.ndarray:
        return self.inverse(v, np.zeros(self.model.nv))

    def forward_dynamics(self) -> np.ndarray:
        """a: MuJoCo's qacc under qfrc_applied = T⁻ᵀ τ mapped back (T square), else the solve
        of M a = τ − bias."""
        v, tau = np.asarray(self.state["v"], float), np.asarray(self.state["tau"], float)
        if not self.square():
            return np.linalg.solve(self.mass_matrix(), tau - self.bias(v))
        self.forward(v)
        self.data.qfrc_applied[:] = forces_to_mujoco(self.model, self.q, tau)
        self.mujoco.mj_forward(self.mj, self.data)
        qpos, qvel, qacc = (np.array(x) for x in (self.data.qpos, self.data.qvel,
                                                    self.data.qacc))
        return from_mujoco(self.model, qpos, qvel, qacc)[2]

    def mass_matrix_inverse(self) -> np.ndarray:
        """T⁻¹ M_mj⁻¹ T⁻ᵀ by MuJoCo's factorization (``mj_solveM``) when T is square."""
        if not self.square():
            return np.linalg.inv(self.mass_matrix())
        self.forward(np.zeros(self.model.nv))
        solved = np.zeros((self.mj.nv, self.mj.nv))
        self.mujoco.mj_solveM(self.mj, self.data, solved, np.eye(self.mj.nv))
        inverse_t = np.linalg.inv(self.rates())
        return inverse_t @ solved.T @ inverse_t.T

    def spring_energy(self) -> float | None:
        """The joint springs' energy: ``mj_energyPos`` with springs on less with them off
        (at the state of the last :meth:`forward`); None when MuJoCo has springs that
        symgen's model has no joint spring for (tendon springs, springs of multi-DOF or
        locked joints)."""
        from symgen.model.elements import JointSpring

        read = {e.joint for e in self.model.force_elements if isinstance(e, JointSpring)}
        stiff = [self.mj.joint(j).name for j in range(self.mj.njnt) if self.mj.jnt_stiffness[j]]
        if any(name not in read for name in stiff) or np.any(self.mj.tendon_stiffness):
            return None
        spring = int(self.mujoco.mjtDisableBit.mjDSBL_SPRING)
        flags = self.mj.opt.disableflags
        self.mujoco.mj_energyPos(self.mj, self.data)
        without = float(self.data.energy[0])
        self.mj.opt.disableflags = flags & ~spring
        try:
            self.mujoco.mj_energyPos(self.mj, self.data)
            return float(self.data.energy[0]) - without
        finally:
            self.mj.opt.disableflags = flags

    def energy(self) -> np.ndarray | None:
        """[kinetic, potential, elements]: ``mj_energyVel``, ``mj_energyPos`` less the
        potential of the bodies welded to the world, and the springs' energy
        (:meth:`spring_energy`; None when MuJoCo has springs symgen does not read)."""
        self.forward(np.asarray(self.state["v"], float))
        self.mujoco.mj_energyPos(self.mj, self.data)
        self.mujoco.mj_energyVel(self.mj, self.data)
        kinetic, potential = float(self.data.energy[1]), float(self.data.energy[0])
        if not self.mj.opt.disableflags & self.mujoco.mjtDisableBit.mjDSBL_GRAVITY:
            gravity = np.asarray(self.mj.opt.gravity, dtype=float)
            for b in np.flatnonzero(np.asarray(self.mj.body_weldid) == 0)[1:]:
                potential += float(self.mj.body_mass[b]) * float(gravity @ self.data.xipos[b])
        springs = self.spring_energy()
        return None if springs is None else np.array([kinetic, potential, springs])


Counterpart = Callable[[MujocoQuery], Mapping[str, np.ndarray] | None]


def _forward_dynamics(p: MujocoQuery) -> dict[str, np.ndarray] | None:
    if p.model.loop_joints:  # symgen's closes the loops; MuJoCo's constraints are soft
        return None
    return {"a": p.forward_dynamics()}


def _energy(p: MujocoQuery) -> dict[str, np.ndarray] | None:
    energy = p.energy()
    return None if energy is None else {"energy": energy}


#: MuJoCo's counterpart of each kernel that has one, by kernel name (catalogue order).
MUJOCO: dict[str, Counterpart] = {
    "inverse_dynamics": lambda p: {"tau": p.inverse(np.asarray(p.state["v"], float),
                                                    np.asarray(p.state["a"], float))},
    "mass_matrix": lambda p: {"M": p.mass_matrix()},
    "bias_forces": lambda p: {"tau": p.bias(np.asarray(p.state["v"], float))},
    "gravity_forces": lambda p: {"tau": p.bias(np.zeros(p.model.nv))},
    "forward_dynamics": _forward_dynamics,
    "forward_dynamics_aba": _forward_dynamics,
    "forward_dynamics_ltdl": _forward_dynamics,
    "mass_matrix_inverse": lambda p: {"Minv": p.mass_matrix_inverse()},
    "energy": _energy,
}

#: The kernels of :data:`MUJOCO` that take external forces (not mapped onto MuJoCo's
#: ``xfrc_applied``: symgen's chain bodies of a multi-joint MuJoCo body have no MuJoCo body).
TAKES_FORCES = ("inverse_dynamics", "forward_dynamics", "forward_dynamics_aba",
                "forward_dynamics_ltdl")


@dataclass
class MujocoPeer:
    """MuJoCo as a peer of ``symgen verify``: ``value(program, state)`` (MuJoCo's value per
    output, None where it has no counterpart), ``model`` (one line: what MuJoCo compiled)
    and, when it could not compile the file, ``error`` (one line; ``value`` is then None)."""

    value: Callable[[str, Mapping], dict[str, np.ndarray] | None] | None
    model: str
    error: str | None = None


def mujoco_unavailable(model: Model) -> str | None:
    """Why MuJoCo is no peer of ``model`` (one line), None when it is."""
    layout = model.file_coordinates
    if layout is None or layout.convention != "mujoco" or model.source is None:
        return "the model was not read from an MJCF file"
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return "the mujoco package is not installed (pip install mujoco)"
    if model.parameters:
        return "the model has runtime parameters"
    return None


def tree_model(model: Model) -> tuple[Any, Any]:
    """MuJoCo's compiled model of ``model``'s MJCF source, its constraints, springs,
    dampers, actuators, fluid forces and gravity compensation off, and its data. Raises
    (a ModelError, one line) when the file does not compile, ValueError when it no longer
    has the model's coordinates."""
    import mujoco

    from symgen.io.mjcf import compile_mjcf

    assert model.source is not None and model.file_coordinates is not None
    path = Path(model.source.file)
    mj, _warnings = compile_mjcf(path)
    layout = model.file_coordinates
    if (mj.nq, mj.nv) != (layout.nq, layout.nv):
        raise ValueError(f"{path.name} compiles to nq {mj.nq}, nv {mj.nv}, the model was "
                         f"read with nq {layout.nq}, nv {layout.nv}")
    off = mujoco.mjtDisableBit
    mj.opt.disableflags |= int(off.mjDSBL_CONSTRAINT | off.mjDSBL_SPRING | off.mjDSBL_DAMPER
                               | off.mjDSBL_ACTUATION)
    mj.opt.enableflags &= ~int(mujoco.mjtEnableBit.mjENBL_INVDISCRETE)
    mj.opt.density, mj.opt.viscosity = 0.0, 0.0
    mj.opt.wind[:] = 0.0
    mj.body_gravcomp[:] = 0.0
    return mj, mujoco.MjData(mj)


def mujoco_peer(ks: KernelSet) -> MujocoPeer:
    """MuJoCo's counterpart of ``ks`` (:func:`tree_model`). A failure to compile the file is
    reported in ``error``, never raised."""
    import mujoco

    model = ks.model
    try:
        mj, data = tree_model(model)
    except Exception as exc:  # noqa: BLE001 - a peer's failure is reported, not raised
        return MujocoPeer(None, "none", " ".join(str(exc).split()))
    forces = bool(getattr(ks.options, "external_forces", False))

    def value(name: str, state: Mapping) -> dict[str, np.ndarray] | None:
        kernel = ks.kernel_of[name]
        counterpart = MUJOCO.get(kernel)
        if counterpart is None:
            return None
        if forces and kernel in TAKES_FORCES:
            raise ValueError("external forces are not mapped onto MuJoCo's bodies")
        out = counterpart(MujocoQuery(mujoco, mj, data, model, state))
        return None if out is None else dict(out)

    assert model.source is not None
    return MujocoPeer(value, f"{Path(model.source.file).name} compiled by MuJoCo "
                      f"{mujoco.__version__} (constraints, springs, dampers and actuators off)")


__all__ = ["MUJOCO", "Counterpart", "MujocoPeer", "MujocoQuery", "mujoco_peer",
           "mujoco_unavailable", "tree_model"]
