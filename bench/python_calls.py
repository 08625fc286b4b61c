"""Single calls from Python: ``lib.<kernel>(...)`` of a compiled symgen model against
Pinocchio's own Python call (``pin.rnea``, ``pin.crba``, ``pin.aba``) on the same robot and
state, and the per-call overhead of symgen's wrapper (its single-call time minus the C
kernel's time, measured through the ``*_batch`` loop over many states).

Every figure is the median over ``repeat`` runs of ``number`` calls, in µs per call
(``timeit``, the call statement compiled into the timing loop: no lambda in between). The
results are first checked against Pinocchio (relative error ≤ 1e-8) so that both sides
compute the same thing. The model is compiled with ``vectorize=None``, so that the batch
function timed for the C kernel is the scalar loop of the single-call kernel (a SIMD batch
would make the kernel look faster and the overhead larger); single calls take the same path
either way. ``python -m bench.python_calls [robot ...]`` prints the table.
"""

from __future__ import annotations

import importlib.util
import sys
import timeit
from collections.abc import Sequence
from typing import Any

import numpy as np

import symgen
from symgen.io.robots import robot_urdf

from .common import CHECK_TOLERANCE, pin_to_one_cpu, random_states, relative_error

#: Robots timed: name and whether it gets a free-flyer base (as in ``python -m bench``).
ROBOTS = (("ur5", False), ("panda", False), ("talos", True))
#: symgen kernel -> Pinocchio's Python function computing the same thing.
PAIRS = {"inverse_dynamics": "rnea", "mass_matrix": "crba", "forward_dynamics": "aba"}
#: Random states: the first is the one of the single calls, all of them the C kernel's
#: timing (the ``*_batch`` loop); few enough to stay in cache.
STATES = 32


def unavailable() -> str | None:
    """Why Pinocchio's Python bindings cannot be timed here, or None."""
    if importlib.util.find_spec("pinocchio") is None:
        return "Pinocchio's Python bindings are not installed (pip install pin)"
    return None


def _median_us(stmt: str, names: dict[str, Any], number: int, repeat: int) -> float:
    times = timeit.Timer(stmt, globals=names).repeat(repeat=repeat, number=number)
    return float(np.median(times)) / number * 1e6


def _kernel_us(f, arrays: Sequence[np.ndarray], repeat: int) -> float:
    """The C kernel's own time per call: ``f``'s batch loop over ``STATES`` states."""
    out = [np.empty((STATES, *s.shape)) for s in f.outputs]
    ptrs = [f._ffi.from_buffer("double[]", a) for a in arrays]
    ptrs += [f._ffi.from_buffer("double[]", o, require_writable=True) for o in out]
    names = {"batch": f._batch, "n": STATES, "ptrs": ptrs}
    return _median_us("batch(n, *ptrs)", names, 200, repeat) / STATES


def measure_robot(name: str, floating: bool, number: int = 20000, repeat: int = 15
                  ) -> dict[str, dict[str, float]]:
    """{kernel: times in µs} for one robot: ``symgen`` (``lib.<kernel>(...)``), ``general``
    (the wrapper's general path, what every call took before the fast path), ``kernel``
    (the C kernel alone), ``overhead`` (symgen - kernel), ``pinocchio`` and ``speedup``
    (pinocchio / symgen)."""
    import pinocchio as pin

    from symgen.peers.pinocchio import Bridge, pin_model_from_urdf

    model = symgen.load(robot_urdf(name), floating_base=floating, couplings=False)  # as the peers
    lib = symgen.compile_kernels(symgen.generate(model, list(PAIRS)), vectorize=None)
    bridge = Bridge(model, pin_model_from_urdf(model))
    pm, data = bridge.pin_model, bridge.data
    states = random_states(model, STATES, seed=0)
    q, v, a, tau = (np.ascontiguousarray(states[k][0]) for k in ("q", "v", "a", "tau"))
    qp, vp, ap, taup = bridge.q_to_pin(q), bridge.v_to_pin(v), bridge.v_to_pin(a), \
        bridge.v_to_pin(tau)
    calls = {
        "inverse_dynamics": ((q, v, a), (pm, data, qp, vp, ap), bridge.v_from_pin),
        "mass_matrix": ((q,), (pm, data, qp), None),
        "forward_dynamics": ((q, v, tau), (pm, data, qp, vp, taup), bridge.v_from_pin),
    }
    batches = {"inverse_dynamics": ("q", "v", "a"), "mass_matrix": ("q",),
               "forward_dynamics": ("q", "v", "tau")}
    results: dict[str, dict[str, float]] = {}
    for kernel, (args, pargs, back) in calls.items():
        f = lib[kernel]
        peer = getattr(pin, PAIRS[kernel])
        expected = peer(*pargs)
        if back is None:  # crba fills the upper triangle
            upper = np.triu(expected)
            expected = bridge.matrix_from_pin(upper + np.triu(upper, 1).T)
        else:
            expected = back(expected)
        error = relative_error(f(*args), expected)
        if error > CHECK_TOLERANCE:
            raise RuntimeError(f"{name} {kernel}: symgen and pinocchio differ ({error:.2e})")
        mine = {f"a{i}": x for i, x in enumerate(args)}
        call = "(" + ", ".join(mine) + ")"
        ours = _median_us("f" + call, {"f": f, **mine}, number, repeat)
        general = _median_us("g" + call, {"g": f._general, **mine}, max(1, number // 10), repeat)
        peers = {f"p{i}": x for i, x in enumerate(pargs)}
        theirs = _median_us("peer(" + ", ".join(peers) + ")", {"peer": peer, **peers}, number,
                            repeat)
        arrays = [np.ascontiguousarray(states[k]) for k in batches[kernel]]
        c_time = _kernel_us(f, arrays, repeat)
        results[kernel] = {"symgen": ours, "general": general, "kernel": c_time,
                           "overhead": ours - c_time, "pinocchio": theirs,
                           "speedup": theirs / ours, "nv": float(model.nv)}
    return results


def measure(robots: Sequence[tuple[str, bool]] = ROBOTS, number: int = 20000,
            repeat: int = 15) -> dict[str, dict[str, dict[str, float]]]:
    """{robot: {kernel: times}} (see :func:`measure_robot`), on one pinned core."""
    pin_to_one_cpu()
    return {name: measure_robot(name, floating, number, repeat) for name, floating in robots}


def table(results: dict[str, dict[str, dict[str, float]]]) -> str:
    """The results as a Markdown table (µs per call)."""
    lines = ["| robot | kernel | symgen | general path | C kernel | overhead | pinocchio "
             "| pin / symgen |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for robot, kernels in results.items():
        for kernel, t in kernels.items():
            lines.append(f"| {robot} | {kernel} ({PAIRS[kernel]}) | {t['symgen']:.3f} | "
                         f"{t['general']:.2f} | {t['kernel']:.3f} | {t['overhead']:.3f} | "
                         f"{t['pinocchio']:.3f} | {t['speedup']:.2f}x |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    names = list(sys.argv[1:] if argv is None else argv)
    robots = [r for r in ROBOTS if not names or r[0] in names]
    print(table(measure(robots)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
