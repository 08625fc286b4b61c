"""`symgen info`: prints a model's structure; bad input gives exit code 2 and one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from symgen.cli import main
from symgen.robots import all_urdfs, robot_urdf

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "models"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_info_panda_lists_structure():
    result = run("info", str(robot_urdf("panda")))
    assert result.exit_code == 0, result.output
    out = result.output
    assert "nq, nv     9, 9" in out
    for joint in ("panda_joint1", "panda_joint7", "panda_finger_joint2"):
        assert joint in out
    assert "revolute" in out and "prismatic" in out
    assert "panda_hand" in out  # a link merged by a fixed joint is kept as a frame


def test_info_floating_base_adds_free_joint():
    result = run("info", "--floating-base", str(robot_urdf("solo12")))
    assert result.exit_code == 0, result.output
    assert "root_joint" in result.output and "free" in result.output
    assert "nq, nv     19, 18" in result.output


@pytest.mark.parametrize(
    ("name", "loop", "parameter"),
    [("four_bar.yaml", "coupler_rocker", None), ("slider_crank.yaml", "wrist_pin", "m_piston")],
)
def test_info_yaml_shows_loops_and_parameters(name, loop, parameter):
    result = run("info", str(EXAMPLES / name))
    assert result.exit_code == 0, result.output
    out = result.output
    assert "loop joints (1)" in out and loop in out
    assert "plane      xy" in out
    if parameter:
        assert "runtime parameters (1)" in out and parameter in out
    else:
        assert "runtime parameters (0)" in out


def test_missing_file_is_one_line_exit_2(tmp_path):
    result = run("info", str(tmp_path / "nope.urdf"))
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "nope.urdf" in result.output
    assert "Traceback" not in result.output


def test_bad_model_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.urdf"
    bad.write_text(
        '<robot name="r"><link name="a"/><link name="b"/>\n'
        '<joint name="j" type="warp"><parent link="a"/><child link="b"/></joint>'
        "</robot>"
    )
    result = run("info", str(bad))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "'j'" in lines[0] and "warp" in lines[0]


def test_unknown_extension(tmp_path):
    f = tmp_path / "model.txt"
    f.write_text("x")
    result = run("info", str(f))
    assert result.exit_code == 2 and "unknown model format" in result.output


def test_info_runs_on_every_example_robot_data_urdf():
    """Each URDF either loads (exit 0) or fails with one clear line (exit 2), never a crash."""
    urdfs = all_urdfs()
    assert len(urdfs) >= 50
    loaded = 0
    for path in urdfs:
        result = run("info", str(path))
        assert result.exit_code in (0, 2), (path, result.output, result.exception)
        if result.exit_code == 0:
            loaded += 1
        else:
            assert len(result.output.strip().splitlines()) == 1, result.output
    assert loaded >= len(urdfs) // 2
