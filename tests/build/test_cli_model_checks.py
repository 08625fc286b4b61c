"""The command line on model-file mistakes: an unknown URDF element is one warning line and,
with --strict, one error line (exit 2); a broken <mimic> loads with --no-couplings."""

from __future__ import annotations

import pytest
from cli_runner import run_split
from model_files import line_of, write

from symgen.apps.cli import _warning_line
from symgen.errors import ModelWarning

ARM = """
<robot name="arm">
  <link name="base"/>
  <link name="l1">
    <inertial><mass value="1"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>
  </link>
  <link name="l2">
    <inertial><mass value="1"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>
  </link>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="l1"/><axsi xyz="0 1 0"/>
  </joint>
  <joint name="j2" type="revolute">
    <parent link="l1"/><child link="l2"/><axis xyz="0 0 1"/>
    <mimic joint="q1"/>
  </joint>
</robot>
"""


def test_strict_makes_an_unknown_element_an_error(tmp_path):
    path = write(tmp_path, ARM.replace('<mimic joint="q1"/>', ""), name="arm.urdf")
    message = (f'{path}:{line_of(path, "<axsi")}: unknown element <axsi> in <joint name="j1">; '
               "did you mean <axis>?")
    with pytest.warns(ModelWarning) as caught:  # in-process: pytest records the warning
        result = run_split("info", str(path))
    assert result.exit_code == 0, result.stderr
    assert [str(w.message) for w in caught] == [message]
    assert _warning_line(message, ModelWarning, "", 0) == f"warning: {message}\n"  # stderr
    for command in (["info"], ["generate", "-o", str(tmp_path / "out")], ["verify"]):
        result = run_split(*command, str(path), "--strict")
        assert result.exit_code == 2, (command, result.stdout, result.stderr)
        assert result.stderr == f"symgen: error: {message}\n", command
    assert not (tmp_path / "out").exists()


def test_no_couplings_loads_a_broken_mimic(tmp_path):
    path = write(tmp_path, ARM.replace("axsi", "axis"), name="arm.urdf")
    result = run_split("info", str(path))
    assert result.exit_code == 2
    assert result.stderr == (
        f"symgen: error: {path}:{line_of(path, '<mimic')}: joint 'j2': <mimic> names mimic "
        "master 'q1' that does not exist; load with --no-couplings (couplings=False) to "
        "ignore the <mimic> tags\n"
    )
    result = run_split("info", str(path), "--no-couplings")
    assert result.exit_code == 0, result.stderr
    assert "nq, nv     2, 2" in result.stdout  # j1 and j2, independent
    out = tmp_path / "out"
    result = run_split("generate", str(path), "--no-couplings", "--kernels", "mass_matrix",
                       "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert "#define ARM_NV 2" in (out / "arm.h").read_text()
    result = run_split("simulate", str(path), "--no-couplings", "--duration", "0.01",
                       "--dt", "0.005")
    assert result.exit_code == 0, result.stderr
    assert "3 recorded states" in result.stdout
