"""generate() picks the formulation from the kernels named, else from the type of the options,
whatever formulation's modules were imported first (the registry's order is not the
choice)."""

from __future__ import annotations

import subprocess
import sys

from paths import EXAMPLES

SCRIPT = """
import symgen.natural  # registers the natural formulation before the tree's
import symgen
from symgen.natural import NaturalOptions
model = symgen.load(sys.argv[1])
print(symgen.generate(model, ["mass_matrix"]).formulation,
      symgen.generate(model).formulation,
      symgen.generate(model, options=NaturalOptions()).formulation)
"""


def test_default_formulation_does_not_depend_on_import_order():
    run = subprocess.run([sys.executable, "-c", "import sys\n" + SCRIPT,
                          str(EXAMPLES / "double_pendulum.yaml")],
                         capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["tree", "tree", "natural"]
