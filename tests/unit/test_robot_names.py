"""Robots of example-robot-data by name (``symgen info panda``): a short name, a URDF's file
name, or its path in the package; a near miss names the closest robots; a file name with a
suffix keeps the plain missing-file error."""

from __future__ import annotations

import pytest

import symgen
from symgen.errors import ModelError, SymgenError
from symgen.io.robots import all_urdfs, find_robot, robot_names, robot_urdf

try:
    all_urdfs()
except SymgenError:
    pytest.skip("example-robot-data is not installed", allow_module_level=True)


def test_names_load_the_package_urdfs():
    assert symgen.load("panda").nv == symgen.load(robot_urdf("panda")).nv
    assert find_robot("talos_full_v2").name == "talos_full_v2.urdf"
    assert find_robot("anymal_c_simple_description/urdf/anymal").is_file()
    assert "panda" in robot_names() and "tiago_pro" in robot_names()


def test_near_misses_and_ambiguity_are_one_line_errors():
    with pytest.raises(ModelError, match="did you mean 'panda'"):
        symgen.load("pandaa")
    with pytest.raises(ModelError, match=r"missing\.urdf: no such model file$"):
        symgen.load("missing.urdf")
    with pytest.raises(SymgenError, match="ambiguous.*anymal_b_simple_description"):
        symgen.load("anymal")


def test_the_cli_takes_a_robot_name():
    from cli_runner import run_split

    result = run_split("info", "ur5")
    assert result.exit_code == 0 and "ur5" in result.stdout.splitlines()[0]
