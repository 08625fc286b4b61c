"""The generated C's own sine and cosine (:mod:`symgen.backends.c99.trig`), compiled alone by
gcc and compared with libm (Python's ``math.sin``/``math.cos``, glibc's, within 1 ulp).

Bounds, from the method: fdlibm's and Cephes' kernels are within 1 ulp of the result on
|r| ≤ π/4 and the reduction's one rounding adds half an ulp of r (≤ 1), so against a reference
within 1 ulp the difference is at most 2.5 ulp of 1: 2.5·2^-53 for ``double`` and, against the
double-precision value of the float input, 1.5·2^-24 + 2^-24 for ``float``. Seed 0.
"""

from __future__ import annotations

import ctypes
import math
import shutil
import subprocess

import numpy as np
import pytest

from symgen.backends.c99 import trig

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

#: Absolute bounds on the difference from libm, per real type (module docstring).
BOUND = {"double": 2.5 * 2.0**-53, "float": 2.5 * 2.0**-24}

DRIVER = """
void sincos_many(size_t n, const double *x, double *s, double *c)
{{
    size_t i;
    for (i = 0; i < n; ++i) {{
        {real} si, ci;
        symgen_sincos{suffix}(({real})x[i], &si, &ci);
        s[i] = (double)si;
        c[i] = (double)ci;
    }}
}}

void sincos2_many(size_t n, const double *x0, const double *x1, double *out)
{{
    size_t i;
    for (i = 0; i < n; ++i) {{
        {real} s0, c0, s1, c1;
        symgen_sincos2{suffix}(({real})x0[i], ({real})x1[i], &s0, &c0, &s1, &c1);
        out[4 * i] = (double)s0;
        out[4 * i + 1] = (double)c0;
        out[4 * i + 2] = (double)s1;
        out[4 * i + 3] = (double)c1;
    }}
}}
"""


def build(real: str, tmp_path, flags: tuple[str, ...] = ()) -> ctypes.CDLL:
    source = tmp_path / f"trig_{real}.c"
    source.write_text("#include <math.h>\n#include <stddef.h>\n" + trig.source(real)
                      + DRIVER.format(real=real, suffix="f" if real == "float" else ""))
    library = tmp_path / f"trig_{real}{len(flags)}.so"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion",
                    "-Werror", *flags, "-fPIC", "-c", str(source), "-o", f"{library}.o"],
                   check=True)
    # linked without the flags: -ffast-math at link time would add crtfastmath.o, which sets
    # flush-to-zero for the whole test process
    subprocess.run(["gcc", "-shared", f"{library}.o", "-o", str(library), "-lm"], check=True)
    return ctypes.CDLL(str(library))


def run(lib: ctypes.CDLL, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.ascontiguousarray(x, dtype=np.float64)
    s, c = np.empty_like(x), np.empty_like(x)
    pointer = ctypes.POINTER(ctypes.c_double)
    lib.sincos_many(ctypes.c_size_t(len(x)), *(a.ctypes.data_as(pointer) for a in (x, s, c)))
    return s, c


def run_pairs(lib: ctypes.CDLL, x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    """(sin x0, cos x0, sin x1, cos x1) per row, from ``symgen_sincos2``."""
    x0, x1 = (np.ascontiguousarray(x, dtype=np.float64) for x in (x0, x1))
    out = np.empty((len(x0), 4))
    pointer = ctypes.POINTER(ctypes.c_double)
    lib.sincos2_many(ctypes.c_size_t(len(x0)),
                     *(a.ctypes.data_as(pointer) for a in (x0, x1, out)))
    return out


def arguments(real: str) -> np.ndarray:
    """Random angles in ±100 and ±0.1, multiples of π/4 and their neighbours, the values
    around the reduction's limit, signed zeros."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-100, 100, 100_000), rng.uniform(-0.1, 0.1, 50_000),
                        np.arange(-400, 401) * math.pi / 4, [0.0, -0.0, 1e-300, 5e-324]])
    x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])
    limit = float(trig.TRIG[real].limit.rstrip("f"))
    x = np.concatenate([x, limit * np.array([0.999, 1.0, -1.0, 1.001]), [1e7, -3e12]])
    return x.astype(np.float32).astype(np.float64) if real == "float" else np.append(x, 1e300)


@pytest.mark.parametrize("real", ["double", "float"])
def test_sincos_within_the_bound_of_libm(real: str, tmp_path) -> None:
    x = arguments(real)
    s, c = run(build(real, tmp_path), x)
    assert np.max(np.abs(s - np.array([math.sin(v) for v in x]))) <= BOUND[real]
    assert np.max(np.abs(c - np.array([math.cos(v) for v in x]))) <= BOUND[real]
    # odd and even exactly (the rounding of the quadrant is symmetric; sin(-0) is +0)
    s_minus, c_minus = run(build(real, tmp_path), -x)
    assert np.array_equal(s_minus, -s) and np.array_equal(c_minus, c)


@pytest.mark.parametrize("real", ["double", "float"])
def test_non_finite_arguments_give_nan(real: str, tmp_path) -> None:
    s, c = run(build(real, tmp_path), np.array([np.nan, np.inf, -np.inf]))
    assert np.isnan(s).all() and np.isnan(c).all()


def test_fast_math_falls_back_to_libm(tmp_path) -> None:
    """Under ``-ffast-math`` the compiler may reassociate the reduction, so libm is called:
    the results are libm's, bit for bit (the polynomials differ from it in the last bit on
    part of the arguments, checked first)."""
    x = arguments("double")
    libm_sin = np.array([math.sin(v) for v in x])
    assert not np.array_equal(run(build("double", tmp_path), x)[0], libm_sin)
    s, c = run(build("double", tmp_path, ("-ffast-math",)), x)
    assert np.array_equal(s, libm_sin) and np.array_equal(c, [math.cos(v) for v in x])


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values with equal signs (of zeros too), NaN where the other has NaN."""
    return bool(np.array_equal(a, b, equal_nan=True)
                and np.array_equal(np.signbit(a), np.signbit(b)))


@pytest.mark.parametrize("flags", [(), ("-ffast-math",)], ids=["vector", "fast-math"])
@pytest.mark.parametrize("real", ["double", "float"])
def test_two_angles_at_once_equal_one_at_a_time(real: str, flags: tuple[str, ...],
                                                tmp_path) -> None:
    """``symgen_sincos2`` (two lanes of a vector on SSE2 and AArch64, the scalar function
    twice elsewhere and under -ffast-math) gives ``symgen_sincos``'s results bit for bit, in
    either lane, also beside an angle out of range (NaN, infinite, beyond the limit: the
    libm fallback). Pairs: every argument with a shuffled one (seed 1)."""
    x = np.concatenate([arguments(real), [np.nan, np.inf, -np.inf]])
    partner = np.random.default_rng(1).permutation(x)
    lib = build(real, tmp_path, flags)
    s, c = run(lib, x)
    s_partner, c_partner = run(lib, partner)
    out = run_pairs(lib, x, partner)
    for column, expected in enumerate((s, c, s_partner, c_partner)):
        assert same_bits(out[:, column], expected), column
