"""Parameter values with every function of the YAML value syntax: the generated program
agrees with the reference and its C compiles with gcc under the strict warning set."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from model_files import BASE, write

from symgen.io import load

pytestmark_hostile = pytest.mark.filterwarnings("error")


@pytestmark_hostile
@pytest.mark.parametrize(
    "value",
    ["tan($m)", "atan2($m, 1)", "$m**(1/3)", "asin($m / 2)", "acos($m / 2)", "atan($m)",
     "2**$m"],
)
def test_parameter_values_with_every_function_generate(tmp_path, value):
    """Every function the value syntax allows becomes a C call (tan, asin, pow, ...): the
    program's mass matrix equals the reference's, which substitutes the parameter into the
    sympy expression (an independent path), at two parameter values."""
    from symgen import emit_c, generate, write_c
    from symgen import reference as ref

    body = f'mass: "{value}"\n    com: [0.5, 0, 0]'
    path = write(tmp_path, "parameters:\n  m: 1\n" + BASE.replace("mass: 1", body))
    model = load(path)
    kernels = generate(model, ["mass_matrix"])
    q = np.array([0.3])
    for m in (0.7, 1.3):
        got = kernels.evaluate("mass_matrix", q=q, params=[m])["M"]
        expected = ref.mass_matrix(model, q, params={"m": m})
        np.testing.assert_allclose(got, expected, rtol=1e-13)
    source = emit_c(kernels, real="float").source
    assert any(f"{fn}f(" in source for fn in ("pow", "tan", "asin", "acos", "atan", "atan2"))
    for real in ("double", "float"):  # the C is valid under the strict warning set
        c_file = write_c(kernels, tmp_path / real, real=real)[1]
        run = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Wpedantic",
                              "-Wconversion", "-Werror", "-c", str(c_file), "-o",
                              str(tmp_path / f"{real}.o")], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
