"""What every simulation method shares: the joint forces a user gives (:data:`Forces`,
:func:`forces_function`) and the progress lines of long runs (:class:`Progress`)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

from symgen.errors import SymgenError

Array = np.ndarray
#: Joint forces: None (zero), a constant vector (nv), or a function (t, q, v) -> τ.
Forces = None | Sequence[float] | Array | Callable[[float, Array, Array], Array]
#: A correction closing the loops after a step may move q by at most this fraction of the
#: step's own motion (plus 1e-8): a larger one means the loops closed on another assembly
#: branch.
BRANCH_FRACTION = 0.5
#: Wall-clock seconds after which progress lines are printed (``progress=None``).
PROGRESS_AFTER = 2.0


def forces_function(tau: Forces, nv: int) -> Callable[[float, Array, Array], Array]:
    """``tau`` as a function (t, q, v) -> τ (nv), checked: one-line errors for a wrong
    length, also of what a user's function returns."""
    if tau is None:
        zero = np.zeros(nv)
        return lambda t, q, v: zero
    if callable(tau):
        def call(t: float, q: Array, v: Array) -> Array:
            out = np.asarray(tau(t, q, v), dtype=float).reshape(-1)
            if out.shape != (nv,):
                raise SymgenError(f"the joint-force function returned {out.size} values, "
                                  f"expected nv = {nv}")
            return out
        return call
    constant = np.asarray(tau, dtype=float).reshape(-1)
    if constant.shape != (nv,):
        raise SymgenError(f"tau has {constant.size} values, expected nv = {nv}")
    return lambda t, q, v: constant


class Progress:
    """Progress lines on stderr once a second (``enabled`` None: after a few seconds)."""

    def __init__(self, name: str, duration: float, enabled: bool | None) -> None:
        self.name, self.duration, self.enabled = name, duration, enabled
        self.started = self.last = time.monotonic()

    def report(self, t: float) -> None:
        now = time.monotonic()
        if self.enabled is False or now - self.last < 1.0 or (
                not self.enabled and now - self.started < PROGRESS_AFTER):
            return
        self.last = now
        print(f"simulate {self.name}: t = {t:.4g} of {self.duration:.4g} s "
              f"({100 * t / self.duration:.0f} %, {now - self.started:.0f} s)",
              file=sys.stderr)


__all__ = ["BRANCH_FRACTION", "Forces", "PROGRESS_AFTER", "Progress", "forces_function"]
