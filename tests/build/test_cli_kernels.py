"""The kernel catalogue on the command line: ``symgen kernels`` lists it, and an unknown
kernel name is a one-line error with the closest names that points to that list."""

from __future__ import annotations

import pytest
from cli_runner import run_split
from paths import EXAMPLES

import symgen
from symgen import registry

PENDULUM = str(EXAMPLES / "double_pendulum.yaml")


def test_kernels_lists_every_kernel_by_formulation_with_the_defaults_marked():
    result = run_split("kernels")
    assert result.exit_code == 0 and result.stderr == ""
    rows = {}
    formulation = None
    for line in result.stdout.splitlines():
        if line.endswith(" formulation:"):
            formulation = line.removesuffix(" formulation:")
        elif line.startswith("  "):
            mark, name = line[2], line[4:].split()[0]
            rows[name] = (formulation, mark == "*")
    kernels = registry.all_kernels()
    assert rows == {name: (k.formulation, k.default and k.formulation == "tree")
                    for name, k in kernels.items()}
    assert result.stdout.splitlines()[0] == "tree formulation:"  # the default one first


@pytest.mark.parametrize(("name", "suggested"), [
    ("mass_matrx", ["mass_matrix"]),
    ("Forward_Dynamics", ["forward_dynamics"]),
    ("nc_stepp", ["nc_step"]),
    ("zzz", []),
])
def test_an_unknown_kernel_suggests_the_closest_names(name, suggested):
    with pytest.raises(symgen.SymgenError) as info:
        registry.get(name)
    message = str(info.value)
    assert message.startswith(f"unknown kernel {name!r}")
    assert message.endswith("(`symgen kernels` lists them)")
    assert registry.close_names(name, list(registry.all_kernels())) == suggested
    assert ("did you mean" in message) == bool(suggested)
    assert len(message) < 150


def test_generate_with_an_unknown_kernel_is_one_short_line(tmp_path):
    result = run_split("generate", PENDULUM, "-o", str(tmp_path / "out"), "--kernels",
                       "inverse_dynamic")
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line == ("symgen: error: unknown kernel 'inverse_dynamic'; did you mean "
                    "'inverse_dynamics'? (`symgen kernels` lists them)")
