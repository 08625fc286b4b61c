"""Batch throughput through the numpy wrapper: ``lib.<kernel>(Q, V, A)`` on arrays of ``n``
states (one batch call, :class:`symgen.build.compiler.KernelFunction`) from a build with the scalar
``*_batch`` loop (``compile(vectorize=None)``) against one with the SIMD batch
(``compile(vectorize=target)``, :mod:`symgen.backends.simd.emit`), states per second on one core.

The function :func:`measure` is :data:`bench.batch_throughput.NUMPY_HOOK`'s signature: the C
measurement hands it the same generated kernels and random states. Each pass times one batch
call of each build, in alternating order (scalar first on odd passes, SIMD first on even
ones), once with a preallocated ``out=`` (the headline figure: the kernels' throughput with
the wrapper's checks, nothing else) and once without (``*_alloc``: the result array allocated
by the call, its page faults included); a figure is the median pass. The largest difference
of the two builds' results is max|simd − scalar| / max(max|scalar|, 1) per state, the measure
of bench.common.relative_error and of the C program.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import symgen

from .batch_throughput import KERNELS
from .common import pin_to_one_cpu


def max_rel_diff(simd: np.ndarray, scalar: np.ndarray) -> float:
    """max over states of max|simd − scalar| / max(max|scalar|, 1) (leading axis: states);
    a NaN on either side counts as infinitely far."""
    s = np.asarray(scalar, dtype=float).reshape(len(scalar), -1)
    v = np.asarray(simd, dtype=float).reshape(len(simd), -1)
    if np.isnan(s).any() or np.isnan(v).any():
        return float("inf")
    diff = np.abs(v - s).max(axis=1)
    scale = np.maximum(np.abs(s).max(axis=1), 1.0)
    return float((diff / scale).max())


def _seconds(call: Callable[[], Any]) -> float:
    t0 = time.perf_counter_ns()
    call()
    return (time.perf_counter_ns() - t0) * 1e-9


def _outputs(f: Any, size: int) -> Any:
    """Preallocated ``out=`` of one batch call of ``f``: an array, or a tuple of them."""
    arrays = tuple(np.empty((size, *s.shape), dtype=f.dtype) for s in f.outputs)
    return arrays[0] if len(arrays) == 1 else arrays


def measure_kernel(scalar: Any, simd: Any, states: Mapping[str, np.ndarray], size: int,
                   repeats: int) -> dict[str, float]:
    """States/s of the two builds' kernel ``scalar`` / ``simd`` on the first ``size`` states:
    ``scalar``, ``simd`` (with ``out=``), ``scalar_alloc``, ``simd_alloc`` (without),
    ``ratio`` (simd / scalar with ``out=``), ``ratio_alloc`` and ``max_rel_diff``."""
    args = [np.ascontiguousarray(states[s.name][:size], dtype=scalar.dtype)
            for s in scalar.inputs]
    outs = {"scalar": _outputs(scalar, size), "simd": _outputs(simd, size)}
    funcs = {"scalar": scalar, "simd": simd}
    # first calls: warm-up, and the two results compared
    ref, got = scalar(*args, out=outs["scalar"]), simd(*args, out=outs["simd"])
    pairs = zip(ref, got, strict=True) if isinstance(ref, tuple) else [(ref, got)]
    diff = max(max_rel_diff(v, s) for s, v in pairs)
    times: dict[str, list[float]] = {k: [] for k in ("scalar", "simd", "scalar_alloc",
                                                     "simd_alloc")}
    enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(repeats):
            for which in ("scalar", "simd") if r % 2 else ("simd", "scalar"):
                f, out = funcs[which], outs[which]
                times[which].append(_seconds(lambda f=f, out=out: f(*args, out=out)))
                times[f"{which}_alloc"].append(_seconds(lambda f=f: f(*args)))
    finally:
        if enabled:
            gc.enable()
    rates = {k: size / float(np.median(v)) for k, v in times.items()}
    return {**rates, "ratio": rates["simd"] / rates["scalar"],
            "ratio_alloc": rates["simd_alloc"] / rates["scalar_alloc"], "max_rel_diff": diff}


def measure(ks: Any, states: Mapping[str, np.ndarray], target: str, sizes: Sequence[int],
            repeats: Mapping[int, int]) -> dict[str, dict[int, dict[str, float]]]:
    """{kernel label: {size: figures}} (:func:`measure_kernel`) of the kernel set ``ks``
    compiled with the scalar batch loop and with the SIMD batch for ``target``, on one pinned
    core; ``states`` holds at least ``max(sizes)`` states (bench.common.random_states)."""
    pin_to_one_cpu()
    scalar = symgen.compile_kernels(ks, vectorize=None)
    simd = symgen.compile_kernels(ks, vectorize=target)
    result: dict[str, dict[int, dict[str, float]]] = {}
    for label, name in KERNELS.items():
        result[label] = {n: measure_kernel(scalar[name], simd[name], states, n, repeats[n])
                         for n in sizes}
    return result
