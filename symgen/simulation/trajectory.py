"""The result of :func:`symgen.simulate`: states over time, constraint drift and the energy
balance, with a plot helper."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from symgen.errors import SymgenError
from symgen.model import Model

Array = np.ndarray


@dataclass
class Trajectory:
    """Recorded states ``t`` (n), ``q`` (n × nq), ``v`` (n × nv) of ``model``.

    ``position_residual`` and ``velocity_residual`` are max |Φ(q)| and max |Φ_q v| of the
    loop constraints (zeros for open trees). ``energy`` is the mechanical energy: kinetic,
    gravitational and the potential of the springs and actuators (the ``energy`` kernel's
    three entries); ``work`` the work done on the system since ``t[0]`` by what ``energy``
    does not hold: the applied joint forces and the dampers. :attr:`energy_balance`
    (energy − energy[0] − work) is zero for the exact motion: its size is the integrator's
    energy error. ``method`` names the integrator and
    ``notes`` what it did (branch checks, re-assemblies, ...)."""

    model: Model
    method: str
    t: Array
    q: Array
    v: Array
    position_residual: Array
    velocity_residual: Array
    energy: Array
    work: Array
    notes: list[str] = field(default_factory=list)

    @property
    def energy_balance(self) -> Array:
        """energy − energy[0] − work (J): the integration's energy error over time."""
        return self.energy - self.energy[0] - self.work

    def joint(self, name: str) -> Array:
        """The coordinates of joint ``name`` over time (n × its nq)."""
        if name not in self.model.q_slices:
            known = ", ".join(self.model.q_slices)
            raise SymgenError(f"model {self.model.name!r} has no independent joint {name!r} "
                              f"(joints: {known})")
        return self.q[:, self.model.q_slices[name]]

    def plot(self, path: str | Path | None = None, joints: list[str] | None = None):
        """A figure of the joint coordinates (``joints``, default: the first six), the energy
        balance and the constraint drift; saved to ``path`` when given. Needs matplotlib."""
        try:
            import matplotlib

            if path is not None:
                matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise SymgenError("Trajectory.plot needs matplotlib (pip install matplotlib)"
                              ) from None
        names = joints or list(self.model.q_slices)[:6]
        rows = 3 if self.model.loop_joints else 2
        fig, axes = plt.subplots(rows, 1, figsize=(8, 2.6 * rows), sharex=True)
        for name in names:
            values = self.joint(name)
            for k in range(values.shape[1]):
                suffix = f"[{k}]" if values.shape[1] > 1 else ""
                axes[0].plot(self.t, values[:, k], label=name + suffix)
        axes[0].set_ylabel("q")
        axes[0].legend(fontsize="small", ncol=2)
        axes[1].plot(self.t, self.energy_balance)
        axes[1].set_ylabel("energy balance [J]")
        if rows == 3:
            axes[2].semilogy(self.t, np.maximum(self.position_residual, 1e-300), label="|Φ|")
            axes[2].semilogy(self.t, np.maximum(self.velocity_residual, 1e-300),
                             label="|Φ_q v|")
            axes[2].set_ylabel("constraint drift")
            axes[2].legend(fontsize="small")
        axes[-1].set_xlabel("t [s]")
        fig.suptitle(f"{self.model.name}: {self.method}")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120)
            plt.close(fig)
        return fig


__all__ = ["Trajectory"]
