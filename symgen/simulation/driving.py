"""What every simulation method shares: the joint forces a user gives (:data:`Forces`,
:func:`forces_function`), the progress lines of long runs (:class:`Progress`) and the step
size control of the generated RK4 steps (:class:`StepDoubling`)."""

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
#: The first step of the adaptive runs, s.
INITIAL_STEP = 1e-4


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


class StepDoubling:
    """Step-size control of a fourth-order one-step method by step doubling (Hairer, Nørsett
    & Wanner, *Solving ODEs I*, §II.4): each step of size h is also taken as two of h/2, the
    local error of the two halves estimated by Richardson's (halves − full)/15, as an RMS
    norm relative to ``tolerance``·(1 + |y|); the halves are kept when it is ≤ 1, else the
    step is retried from the same state with a shorter h (h·max(0.2, 0.9·error^-1/5));
    after an accepted step h grows by min(5, 0.9·error^-1/5)."""

    def __init__(self, duration: float, tolerance: float,
                 initial: float = INITIAL_STEP) -> None:
        self.duration, self.tolerance = duration, tolerance
        self.h, self.rejected = min(duration, initial), 0

    def step(self, t: float) -> float:
        """The next step from t (not past the end)."""
        self.h = min(self.h, self.duration - t)
        return self.h

    def accept(self, t: float, start: Array, full: Array, halves: Array) -> bool:
        """Whether the halves of the step from t are kept; sets the next step either way (a
        one-line error when it underflows)."""
        scale = self.tolerance * (1.0 + np.maximum(np.abs(start), np.abs(halves)))
        error = float(np.sqrt(np.mean(((halves - full) / 15.0 / scale) ** 2)))
        if not np.isfinite(error) or error > 1.0:
            self.rejected += 1
            self.h *= 0.2 if not np.isfinite(error) else max(0.2, 0.9 * error ** -0.2)
            if self.h < 1e-14 * max(1.0, self.duration):
                raise SymgenError(f"simulate: the step size underflowed at t = {t:.6g} s")
            return False
        self.h *= min(5.0, 0.9 * error ** -0.2) if error > 0 else 5.0
        return True


__all__ = ["BRANCH_FRACTION", "Forces", "INITIAL_STEP", "PROGRESS_AFTER", "Progress",
           "StepDoubling", "forces_function"]
