"""``import symgen`` and ``symgen --version`` do not import the pipeline (sympy, the kernel
catalogues: 1.3-2 s); the public API still appears on first use, and importing the submodule
``symgen.generate`` does not hide the function ``symgen.generate``."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
sys.argv = ["symgen", "--version"]
from symgen.apps.launcher import main
main()
print("sympy imported:", "sympy" in sys.modules)
"""


def run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_version_does_not_import_the_pipeline():
    out = run(PROBE)
    assert out.startswith("symgen, version ") and "sympy imported: False" in out


def test_the_api_appears_on_first_use():
    out = run("import symgen, sys\n"
              "print('sympy' in sys.modules)\n"
              "import symgen.generate\n"
              "print(callable(symgen.generate), symgen.generate.__module__)\n"
              "print(symgen.Model.__name__, symgen.reference.__name__, 'load' in dir(symgen))\n"
              "print(symgen.natural.__name__)\n")
    assert out.split() == ["False", "True", "symgen.generate", "Model", "symgen.reference",
                           "True", "symgen.natural"]
