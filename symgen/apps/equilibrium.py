"""Static equilibria under gravity and given joint forces, by Newton's method on the
generated kernels.

A configuration q is in static equilibrium under the joint forces τ when the dynamics at
rest need no acceleration: g(q) = τ, g the gravity (and force-element) forces. Open trees:
Newton on r(q) = g(q) − τ along q ⊕ δ, with ∂r/∂δ from ``inverse_dynamics_derivatives`` at
v = a = 0 (docs/derivatives.md). Closed loops: in the independent coordinates q_R of the
constraint embedding (docs/loops.md), r(q_R) = T_R(q) − τ_R with T_R from
``embedded_inverse_dynamics`` at rest, its Jacobian along the loop manifold from
``embedded_inverse_dynamics_derivatives``; a step moves the independent coordinates
(``integrate``) and closes the loops again (``dependent_coordinates``). Each step
is halved until |r| decreases (backtracking), so the iteration converges to the
equilibrium of the basin it starts in (stable or not: r = 0 is all it asks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symgen.build.compiler import compile_kernels
from symgen.build.wrappers import CompiledKernels
from symgen.errors import SymgenError
from symgen.generate import generate
from symgen.model import Model


@dataclass(frozen=True)
class Equilibrium:
    """An equilibrium: the configuration, the largest |r| left and the Newton iterations."""

    q: np.ndarray
    residual: float
    iterations: int


#: The kernels Newton's method runs on: open trees, closed loops (independent coordinates).
TREE_KERNELS = ("gravity_forces", "inverse_dynamics_derivatives", "integrate")
LOOP_KERNELS = ("embedded_inverse_dynamics", "embedded_inverse_dynamics_derivatives",
                "dependent_coordinates", "integrate")


def _tree_kernels(model: Model) -> CompiledKernels:
    return compile_kernels(generate(model, list(TREE_KERNELS)), vectorize=None)


def _loop_kernels(model: Model) -> CompiledKernels:
    return compile_kernels(generate(model, list(LOOP_KERNELS)), vectorize=None)


def static_equilibrium(model: Model, q0, tau=None, tolerance: float = 1e-10,
                       iterations: int = 50, kernels=None) -> Equilibrium:
    """The equilibrium nearest to ``q0`` (Newton with backtracking; module documentation).
    ``tau``: joint forces (nv; for a model with loop joints, forces of the independent
    coordinates of the embedding); default zero. ``kernels``: compiled kernels to reuse
    (those this function generates otherwise). Raises when it does not converge to
    ``tolerance`` (N·m) within ``iterations``."""
    if model.loop_joints:
        return _closed(model, q0, tau, tolerance, iterations, kernels or _loop_kernels(model))
    lib = kernels or _tree_kernels(model)
    tau = _forces(model, tau, model.nv)
    zero = np.zeros(model.nv)
    return _newton(model, np.array(q0, float), lambda x: lib.gravity_forces(x) - tau,
                   lambda x: lib.inverse_dynamics_derivatives(x, zero, zero)[0],
                   lambda x, step, s: lib.integrate(x, step, [s]), tolerance, iterations)


def _closed(model: Model, q0, tau, tolerance: float, iterations: int, lib) -> Equilibrium:
    ind = list(lib.kernel_set.context.embedding.independent)
    tau = _forces(model, tau, len(ind))
    zero = np.zeros(len(ind))

    def close(x: np.ndarray) -> np.ndarray:
        closed, status = lib.dependent_coordinates(x)
        if status[0] > 1e-9:
            raise SymgenError(f"model {model.name!r}: the loops do not close there "
                              f"(residual {status[0]:.1e})")
        return closed

    def moved(x: np.ndarray, step: np.ndarray, size: float) -> np.ndarray:
        """The independent coordinates moved by ``size`` ``step`` on their manifolds, the
        loops closed again."""
        full = np.zeros(model.nv)
        full[ind] = step
        return close(lib.integrate(x, full, [size]))

    return _newton(model, close(np.array(q0, float)),
                   lambda x: lib.embedded_inverse_dynamics(x, zero, zero)[0] - tau,
                   lambda x: lib.embedded_inverse_dynamics_derivatives(x, zero, zero)[0],
                   moved, tolerance, iterations)


def _forces(model: Model, tau, size: int) -> np.ndarray:
    """The given joint forces as an array of ``size`` (default zero); a clear error else."""
    out = np.zeros(size) if tau is None else np.asarray(tau, float).reshape(-1)
    if out.shape != (size,):
        raise SymgenError(f"model {model.name!r}: tau must have {size} entries "
                          f"({'independent coordinates' if model.loop_joints else 'nv'}), "
                          f"got {out.size}")
    return out


def _newton(model: Model, q: np.ndarray, residual, jacobian, move, tolerance: float,
            iterations: int) -> Equilibrium:
    """Newton on r(q) = 0 with steps ``move(q, step, size)`` (least squares on the
    Jacobian, then :func:`_backtrack`)."""
    r = residual(q)
    for k in range(iterations):
        if np.max(np.abs(r)) <= tolerance:
            return Equilibrium(q, float(np.max(np.abs(r))), k)
        step = -np.linalg.lstsq(jacobian(q), r, rcond=None)[0]
        q, r = _backtrack(lambda s, q=q, step=step: move(q, step, s), residual, r)
    raise _failed(model, r, iterations)


def _backtrack(move, residual, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first of the steps 1, 1/2, 1/4, ... that lowers |r| (a step where the loops do
    not close counts as not lowering it)."""
    size = 1.0
    for _ in range(40):
        try:
            q = move(size)
        except SymgenError:  # outside the workspace: a shorter step
            size /= 2
            continue
        r_new = residual(q)
        if np.linalg.norm(r_new) < np.linalg.norm(r):
            return q, r_new
        size /= 2
    raise SymgenError("no Newton step lowers the equilibrium residual (a singular "
                      "configuration?): start elsewhere")


def _failed(model: Model, r: np.ndarray, iterations: int) -> SymgenError:
    return SymgenError(f"model {model.name!r}: no static equilibrium reached in {iterations} "
                       f"Newton iterations (residual {np.max(np.abs(r)):.1e}); start nearer")


__all__ = ["Equilibrium", "static_equilibrium"]
