"""Small models and a reference check for tests/test_build_concurrency.py, importable
without pytest (its worker processes import only this, numpy and symgen)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import symgen
from symgen.apps.verify import DOUBLE_TOLERANCE, random_states, reference_value, relative_error
from symgen.io.robots import spatial_chain

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "models"
KERNELS = ["mass_matrix", "inverse_dynamics"]
#: Unoptimised builds: what is tested is the build machinery, which the flags do not change.
FLAGS = ("-O0", "-std=c99")


@cache
def kernel_set(name: str) -> symgen.KernelSet:
    """``chain2`` (symgen.io.robots.spatial_chain(2)) or an example model by file name."""
    model = spatial_chain(2) if name == "chain2" else symgen.load(EXAMPLES / f"{name}.yaml")
    return symgen.generate(model, KERNELS)


def assert_matches_reference(lib) -> None:
    """The compiled kernels agree with the numpy reference (a separate implementation) on
    a random state (seed 5)."""
    ks = lib.kernel_set
    (state,) = random_states(ks, 1, seed=5)
    for name in KERNELS:
        inputs = {s.name: state[s.name] for s in ks[name].inputs}
        error = relative_error(lib[name](**inputs), reference_value(ks, name, state))
        assert error <= DOUBLE_TOLERANCE, (ks.model.name, name, error)
