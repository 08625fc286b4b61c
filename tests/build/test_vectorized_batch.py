"""The numpy wrappers' batch calls through the SIMD batch backend (``compile(vectorize=...)``):
the same results as the scalar batch loop to 1e-12 relative (libmvec's sin and cos are
within 4 ulp of libm's, every other operation is the same IEEE operation in the same order),
for batch sizes around the vector width, and clear errors for a bad target."""

from __future__ import annotations

import numpy as np
import pytest

import symgen
from symgen.errors import SymgenError
from symgen.io.robots import robot_urdf

KERNELS = ["inverse_dynamics", "mass_matrix", "forward_dynamics", "frame_jacobian"]


@pytest.fixture(scope="module")
def panda():
    return symgen.generate(symgen.load(robot_urdf("panda")), KERNELS)


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b), initial=0.0)) / max(float(np.max(np.abs(b),
                                                                     initial=0.0)), 1.0)


@pytest.mark.parametrize("vectorize", ["auto", "portable"])
def test_vectorized_batch_equals_the_scalar_loop(panda, vectorize, tmp_path, monkeypatch):
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path))
    scalar = symgen.compile_kernels(panda, vectorize=None)
    vector = symgen.compile_kernels(panda, vectorize=vectorize)
    assert scalar.simd_width == 1
    assert vector.simd_width >= 1
    model = panda.model
    rng = np.random.default_rng(12)
    for n in sorted({1, vector.simd_width - 1, vector.simd_width, 3 * vector.simd_width + 1,
                     257} - {0}):
        q = rng.uniform(-np.pi, np.pi, (n, model.nq))
        v, a = rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))
        for name in vector.functions:
            kernel = vector[name]
            args = {"q": q, "v": v, "a": a, "tau": a}
            inputs = {s.name: args[s.name] for s in kernel.inputs if s.name in args}
            assert _relative(kernel(**inputs), scalar[name](**inputs)) <= 1e-12, (name, n)


def test_unknown_target_is_a_one_line_error(panda):
    with pytest.raises(SymgenError, match="vectorize='pentium-9000'") as info:
        symgen.compile_kernels(panda, vectorize="pentium-9000")
    assert "\n" not in str(info.value)
    with pytest.raises(SymgenError, match="vectorize must be a target name"):
        symgen.compile_kernels(panda, vectorize=4)
