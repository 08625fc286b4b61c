"""The single-call fast path of compiled kernels (symgen.backends.c99.fastcall): it gives the
general path's results bit for bit, takes ``out=``, hands every other call (batches, conversions,
odd layouts, errors) to the general path unchanged, and is safe from several threads."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import threading
from functools import cache

import numpy as np
import pytest
from random_models import parametric_arm

import symgen
from symgen import reference as ref
from symgen.apps.verify import random_states
from symgen.backends.c99.emit import CFunction, CSource, emit_c
from symgen.backends.c99.fastcall import fastcall_source
from symgen.build.compiler import DEFAULT_FLAGS, compile_kernels, load_modules
from symgen.build.wrappers import KernelFunction
from symgen.io.robots import robot_urdf
from symgen.ir.program import ArraySpec

KERNELS = ["inverse_dynamics", "mass_matrix", "forward_dynamics", "integrate", "energy"]


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@cache
def panda() -> symgen.KernelSet:
    forces = symgen.Options(external_forces=True)
    return symgen.generate(symgen.load(robot_urdf("panda")), KERNELS, forces)


@cache
def arm() -> symgen.KernelSet:
    """Runtime parameters: ``params`` is a trailing argument with a default."""
    return symgen.generate(parametric_arm(), ["mass_matrix", "integrate"])


def state(ks: symgen.KernelSet, seed: int = 3) -> dict[str, np.ndarray]:
    s = random_states(ks, 1, seed=seed)[0]
    s["dt"] = [s["dt"]]
    return {k: np.ascontiguousarray(s[k], dtype=float)
            for k in ("q", "v", "a", "tau", "dt", "params", "f_ext")}


def arguments(f: KernelFunction, s: dict) -> list[np.ndarray]:
    return [s[spec.name] for spec in f.inputs]


def spy_bind(ks: symgen.KernelSet, name: str, real: str = "double"):
    """The fast function of ``name`` bound to a general path that records its calls."""
    lib = compile_kernels(ks, real)
    _, fast = load_modules(lib.source, DEFAULT_FLAGS, real)
    calls = []

    def general(*args, **kwargs):
        calls.append((args, kwargs))
        return lib[name]._general(*args, **kwargs)

    return fast.bind(name, general, lib[name]._fast_defaults()), calls


STRICT = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Werror"]


@pytest.mark.parametrize("real", ["double", "float"])
def test_fast_call_c_compiles_without_warnings(real, tmp_path):
    """numpy's headers come in as system headers (-isystem), as in the build."""
    src = emit_c(panda(), real=real)
    path = tmp_path / "fast.c"
    path.write_text(fastcall_source(src, real, "_symgen_fast_test"))
    paths = sysconfig.get_paths()
    run = subprocess.run(["gcc", *STRICT, "-O2", "-fPIC", f"-I{paths['include']}",
                          f"-isystem{np.get_include()}", "-c", str(path), "-o",
                          str(tmp_path / "fast.o")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_fast_path_equals_general_path_bit_for_bit_and_the_reference():
    ks = panda()
    lib = compile_kernels(ks)
    s = state(ks)
    for name in KERNELS:
        f = lib[name]
        fast, calls = spy_bind(ks, name)
        args = arguments(f, s)
        result = fast(*args)
        assert calls == []  # taken by C
        np.testing.assert_array_equal(result, f._general(*args))
        np.testing.assert_array_equal(lib[name](*args), result)
        assert result.dtype == np.float64 and result.flags.c_contiguous
        assert result.shape == f.outputs[0].shape
    tau = lib.inverse_dynamics(s["q"], s["v"], s["a"], np.zeros((ks.model.nbodies, 6)))
    np.testing.assert_allclose(tau, ref.inverse_dynamics(ks.model, s["q"], s["v"], s["a"]),
                               rtol=1e-10, atol=1e-10)


def test_layouts_the_fast_path_takes():
    """Flat multi-dimensional arguments, 0-d arrays and Python floats for size-1 arguments
    (double build), read-only arrays: same results, no general call."""
    ks = panda()
    lib = compile_kernels(ks)
    s = state(ks)
    fast, calls = spy_bind(ks, "inverse_dynamics")
    expected = lib.inverse_dynamics._general(s["q"], s["v"], s["a"], s["f_ext"])
    flat = s["f_ext"].reshape(-1)
    np.testing.assert_array_equal(fast(s["q"], s["v"], s["a"], flat), expected)
    frozen = s["q"].copy()
    frozen.setflags(write=False)
    np.testing.assert_array_equal(fast(frozen, s["v"], s["a"], s["f_ext"]), expected)
    step, calls_dt = spy_bind(ks, "integrate")
    by_array = lib.integrate._general(s["q"], s["v"], np.array([0.01]))
    np.testing.assert_array_equal(step(s["q"], s["v"], 0.01), by_array)
    np.testing.assert_array_equal(step(s["q"], s["v"], np.array(0.01)), by_array)
    assert calls == [] and calls_dt == []


def test_other_calls_go_to_the_general_path_with_the_same_results():
    ks = panda()
    lib = compile_kernels(ks)
    s = state(ks)
    fast, calls = spy_bind(ks, "mass_matrix")
    q = s["q"]
    expected = lib.mass_matrix._general(q)
    wide = np.zeros(2 * q.size)
    wide[::2] = q
    others = [wide[::2], q.tolist(), q.astype(">f8"), q.astype(np.float32).astype(np.float64)]
    np.testing.assert_array_equal(fast(others[0]), expected)  # strided
    np.testing.assert_array_equal(fast(others[1]), expected)  # a list
    np.testing.assert_array_equal(fast(others[2]), expected)  # big-endian
    assert len(calls) == 3
    np.testing.assert_array_equal(fast(q=q), expected)  # by keyword
    Q = np.stack([q, q[::-1].copy()])
    batch = fast(Q)  # a batch
    np.testing.assert_array_equal(batch[0], expected)
    assert len(calls) == 5
    ints = np.arange(q.size)
    np.testing.assert_array_equal(fast(ints), lib.mass_matrix._general(ints.astype(float)))


def test_errors_are_those_of_the_general_path():
    ks = panda()
    lib = compile_kernels(ks)
    nv = ks.model.nv
    assert nv == 8  # the second finger mimics the first
    with pytest.raises(ValueError, match=r"^mass_matrix: q must have shape \(8,\) for one call "
                                         r"or \(n, 8\) for a batch of n, got shape \(9,\)$"):
        lib.mass_matrix(np.zeros(nv + 1))
    with pytest.raises(TypeError, match="takes 1 arrays"):
        lib.mass_matrix(np.zeros(nv), np.zeros(nv))
    with pytest.raises(TypeError, match="missing the argument 'v'"):
        lib.energy(np.zeros(nv))
    with pytest.raises(TypeError, match="unexpected argument 'x'"):
        lib.mass_matrix(np.zeros(nv), x=1)
    with pytest.raises(TypeError, match="real numeric array"):
        lib.mass_matrix(np.zeros(nv, dtype=complex))


def test_out_receives_the_result_and_is_checked():
    ks = panda()
    lib = compile_kernels(ks)
    s = state(ks)
    nv = ks.model.nv
    fast, calls = spy_bind(ks, "mass_matrix")
    out = np.full((nv, nv), np.nan)
    assert fast(s["q"], out=out) is out
    assert calls == []
    np.testing.assert_array_equal(out, lib.mass_matrix(s["q"]))
    assert lib.mass_matrix(s["q"], out=None).shape == (nv, nv)
    Q = np.stack([s["q"], s["q"] * 0.5])
    batch_out = np.empty((2, nv, nv))
    assert lib.mass_matrix(Q, out=batch_out) is batch_out
    np.testing.assert_array_equal(batch_out, lib.mass_matrix(Q))
    bad = {
        "shape": np.empty((nv * nv,)),
        "dtype": np.empty((nv, nv), dtype=np.float32),
        "C-contiguous": np.empty((nv, nv)).T,
        "read-only": np.empty((nv, nv)),
        "list": [[0.0] * nv] * nv,
    }
    bad["read-only"].setflags(write=False)
    for what, array in bad.items():
        with pytest.raises(ValueError, match=r"^mass_matrix: out \(M\) must be a writable "
                                             rf"C-contiguous float64 array of shape \({nv}, "
                                             rf"{nv}\), got "):
            lib.mass_matrix(s["q"], out=array)
        assert what


def test_an_input_overlapping_out_is_read_first():
    """``tau`` written over ``a``: as if ``a`` had been copied (the general path copies)."""
    ks = panda()
    lib = compile_kernels(ks)
    s = state(ks)
    args = [s["q"], s["v"], s["a"], s["f_ext"]]
    expected = lib.inverse_dynamics(*args)
    a = s["a"].copy()
    assert lib.inverse_dynamics(s["q"], s["v"], a, s["f_ext"], out=a) is a
    np.testing.assert_array_equal(a, expected)


def test_trailing_defaults_and_float_builds():
    ks = arm()
    lib = compile_kernels(ks)
    model = ks.model
    q = np.random.default_rng(5).standard_normal(model.nq)
    defaults = np.array([p.default for p in model.parameters])
    fast, calls = spy_bind(ks, "mass_matrix")
    np.testing.assert_array_equal(fast(q), lib.mass_matrix._general(q, defaults))
    assert calls == []
    np.testing.assert_allclose(fast(q), ref.mass_matrix(model, q), rtol=1e-12, atol=1e-14)
    low = compile_kernels(ks, "float")
    fast32, calls32 = spy_bind(ks, "mass_matrix", "float")
    q32 = q.astype(np.float32)
    np.testing.assert_array_equal(fast32(q32), low.mass_matrix._general(q32))
    assert calls32 == [] and fast32(q32).dtype == np.float32
    np.testing.assert_array_equal(fast32(q), fast32(q32))  # float64: converted, general path
    assert len(calls32) == 1
    with pytest.raises(ValueError, match="beyond the float32 range"):
        low.integrate(q32, q32[: model.nv], 1e300)


def test_references_are_not_leaked():
    ks = panda()
    lib = compile_kernels(ks)
    s = state(ks)
    args = arguments(lib.inverse_dynamics, s)
    out = np.empty(ks.model.nv)
    before = [sys.getrefcount(a) for a in [*args, out]]
    for _ in range(1000):
        lib.inverse_dynamics(*args)
        lib.inverse_dynamics(*args, out=out)
    assert [sys.getrefcount(a) for a in [*args, out]] == before
    assert sys.getrefcount(lib.inverse_dynamics(*args)) == 2  # the call's own reference


def test_calls_from_several_threads_agree_with_one_thread():
    ks = panda()
    lib = compile_kernels(ks)
    states = [state(ks, seed) for seed in range(8)]
    expected = [lib.forward_dynamics(*arguments(lib.forward_dynamics, s)) for s in states]
    errors = []

    def work(offset: int) -> None:
        out = np.empty(ks.model.nv)
        for i in range(400):
            k = (i + offset) % len(states)
            args = arguments(lib.forward_dynamics, states[k])
            result = lib.forward_dynamics(*args, out=out) if i % 2 else lib.forward_dynamics(*args)
            if not np.array_equal(result, expected[k]):
                errors.append((offset, i))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


TWO_OUTPUTS_C = """#include "tw.h"
void tw_split(const double x[3], double head[2], double tail[1])
{
    const double s = x[0] + x[1] + x[2];
    head[0] = x[0] / s; head[1] = x[1] / s; tail[0] = x[2] / s;
}
void tw_split_batch(size_t count, const double *x, double *head, double *tail)
{
    size_t i;
    for (i = 0; i < count; ++i) tw_split(x + 3 * i, head + 2 * i, tail + i);
}
"""


def test_a_kernel_with_two_outputs():
    """``out`` is a tuple; the fast path fills both arrays (hand-written kernel: x / sum x)."""
    x_spec, head, tail = ArraySpec("x", (3,)), ArraySpec("head", (2,)), ArraySpec("tail", (1,))
    function = CFunction("tw_split", "tw_split_batch", "split", (x_spec,), (head, tail),
                         "void tw_split(const tw_real x[3], tw_real head[2], tw_real tail[1])",
                         "void tw_split_batch(size_t count, const tw_real *x, tw_real *head, "
                         "tw_real *tail)")
    header = ("#include <stddef.h>\ntypedef double tw_real;\n"
              f"{function.prototype};\n{function.batch_prototype};\n")
    src = CSource("tw", "tw.h", "tw.c", header, TWO_OUTPUTS_C.replace("double", "tw_real"),
                  typedef="typedef double tw_real;", functions=(function,))
    module, fast = load_modules(src, DEFAULT_FLAGS, "double")
    f = KernelFunction("split", (x_spec,), (head, tail), module.ffi, module.lib, "tw_split",
                       "double", {}, fast)
    x = np.array([1.0, 2.0, 5.0])
    h, t = f(x)
    np.testing.assert_array_equal(h, [1 / 8, 2 / 8])
    np.testing.assert_array_equal(t, [5 / 8])
    out = (np.empty(2), np.empty(1))
    assert f(x, out=out) is out
    np.testing.assert_array_equal(out[0], h)
    np.testing.assert_array_equal(out[1], t)
    assert f(x, out=list(out))[1] is out[1]  # a list: general path
    with pytest.raises(TypeError, match=r"out must be a tuple of 2 arrays \(head, tail\)"):
        f(x, out=out[0])
    H, T = f(np.stack([x, 2 * x]))
    np.testing.assert_array_equal(H, [h, h])
    np.testing.assert_array_equal(T, [t, t])
