"""`symgen info`: prints a model's structure; bad input gives exit code 2 and one line."""

from __future__ import annotations

import json

import pytest
from cli_runner import run, run_split
from paths import EXAMPLES

from symgen.io.robots import all_urdfs, robot_urdf


def test_info_panda_lists_structure():
    result = run("info", str(robot_urdf("panda")))
    assert result.exit_code == 0, result.output
    out = result.output
    assert "nq, nv     8, 8" in out  # panda_finger_joint2 mimics panda_finger_joint1
    assert "q[panda_finger_joint2] = 1 * q[panda_finger_joint1]" in out
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


PENDULUM = str(EXAMPLES / "double_pendulum.yaml")
OP_KEYS = {"add", "mul", "div", "sqrt", "trig", "other", "total"}


def test_info_ops_json_is_one_object_of_counts():
    result = run_split("info", PENDULUM, "--ops", "--json")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    counts = json.loads(result.stdout)  # nothing but the JSON object on stdout
    for kernel in (
        "inverse_dynamics",
        "mass_matrix",
        "forward_dynamics",
        "forward_dynamics_aba",
        "forward_dynamics_ltdl",
        "mass_matrix_inverse",
    ):
        assert kernel in counts
    assert "frame_jacobian_tip" in counts  # per-frame kernels: one program per frame
    for name, c in counts.items():
        assert set(c) == OP_KEYS, name
        assert all(isinstance(v, int) and v >= 0 for v in c.values()), name
        assert c["total"] == sum(v for k, v in c.items() if k != "total"), name
    assert "deriving inverse_dynamics" in result.stderr  # progress goes to stderr
    assert "bodies" not in result.stdout  # no description in --json mode


def test_info_ops_table_lists_programs_and_choice():
    result = run_split("info", PENDULUM, "--ops")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    out = result.stdout
    assert "nq, nv     2, 2" in out  # the description comes first
    assert "total" in out and "choice" in out
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    for kernel in ("inverse_dynamics", "mass_matrix", "forward_dynamics",
                   "forward_dynamics_aba", "forward_dynamics_ltdl", "mass_matrix_inverse",
                   "frame_jacobian_tip"):
        assert kernel in rows
    assert "(aba " in rows["forward_dynamics"] and "ltdl " in rows["forward_dynamics"]
    assert out.strip().splitlines()[-1].startswith("default forward-dynamics method: ")
    assert "deriving" not in out


def test_info_ops_options_restrict_and_choose():
    result = run_split(
        "info", PENDULUM, "--ops", "--json", "--kernels", "forward_dynamics, frame_jacobian",
        "--fd-method", "aba", "--partition", "never", "--frame", "lower_arm",
    )
    assert result.exit_code == 0, (result.stdout, result.stderr)
    counts = json.loads(result.stdout)
    assert set(counts) == {"forward_dynamics", "frame_jacobian_lower_arm"}
    aba = json.loads(
        run_split("info", PENDULUM, "--ops", "--json", "--kernels", "forward_dynamics_aba")
        .stdout
    )
    assert counts["forward_dynamics"] == aba["forward_dynamics_aba"]


def test_info_json_without_ops_is_one_line_exit_2():
    result = run("info", PENDULUM, "--json")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "--json" in lines[0] and "--ops" in lines[0]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--kernels", "nope"), "'nope'"),
        (("--frame", "nowhere"), "'nowhere'"),
        (("--fd-method", "rk4"), "'rk4'"),
        (("--partition", "sometimes"), "'sometimes'"),
    ],
)
def test_info_ops_bad_option_is_one_line_exit_2(args, needle):
    result = run("info", PENDULUM, "--ops", *args)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.output
    assert "Traceback" not in result.output


# ---------------------------------------------------------------------- error handling (issue 11)
def _raise(exc: BaseException):
    def fail(*args, **kwargs):
        raise exc

    return fail


def test_internal_error_is_one_line_exit_3(monkeypatch):
    monkeypatch.delenv("SYMGEN_DEBUG", raising=False)
    monkeypatch.setattr("symgen.apps.cli.load", _raise(ValueError("boom\nsecond line")))
    result = run_split("info", PENDULUM)
    assert result.exit_code == 3, result.output
    assert result.stderr == (
        "symgen: internal error: ValueError: boom second line "
        "(run with --debug or SYMGEN_DEBUG=1 for the traceback)\n"
    )
    assert result.stdout == ""


def test_internal_error_message_is_shortened(monkeypatch):
    monkeypatch.delenv("SYMGEN_DEBUG", raising=False)
    monkeypatch.setattr("symgen.apps.cli.load", _raise(RuntimeError("x" * 10000)))
    result = run_split("info", PENDULUM)
    assert result.exit_code == 3
    assert len(result.stderr) < 500 and result.stderr.count("\n") == 1


@pytest.mark.parametrize("how", ["flag", "env"])
def test_debug_shows_the_traceback(monkeypatch, how):
    monkeypatch.setattr("symgen.apps.cli.load", _raise(ValueError("boom")))
    if how == "env":
        monkeypatch.setenv("SYMGEN_DEBUG", "1")
        result = run_split("info", PENDULUM)
    else:
        monkeypatch.delenv("SYMGEN_DEBUG", raising=False)
        result = run_split("--debug", "info", PENDULUM)
    assert result.exit_code == 3
    assert "Traceback (most recent call last)" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("symgen: internal error: ValueError")


def test_debug_with_a_user_error_keeps_exit_2(monkeypatch, tmp_path):
    monkeypatch.delenv("SYMGEN_DEBUG", raising=False)
    result = run_split("--debug", "info", str(tmp_path / "nope.urdf"))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1].startswith("symgen: error: ")


def test_keyboard_interrupt_is_one_line_exit_130(monkeypatch):
    monkeypatch.setattr("symgen.apps.cli.load", _raise(KeyboardInterrupt()))
    result = run_split("info", PENDULUM)
    assert result.exit_code == 130
    assert result.stderr == "symgen: interrupted\n"


def test_os_error_of_a_rename_names_the_destination(monkeypatch):
    error = PermissionError(13, "Permission denied", "out/.m.h.x1y2.tmp", None, "out/m.h")
    monkeypatch.setattr("symgen.apps.cli.load", _raise(error))
    result = run_split("info", PENDULUM)
    assert result.exit_code == 2
    assert result.stderr == "symgen: error: out/m.h: Permission denied\n"


def test_os_error_without_a_file_name(monkeypatch):
    monkeypatch.setattr("symgen.apps.cli.load", _raise(OSError(28, "No space left on device")))
    result = run_split("info", PENDULUM)
    assert result.exit_code == 2
    assert result.stderr == "symgen: error: No space left on device\n"


def test_usage_errors_are_still_clicks(tmp_path):
    result = run_split("info")
    assert result.exit_code == 2 and "Missing argument" in result.stderr
    assert run_split("--help").exit_code == 0


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"name: a\x07b\n", "invalid YAML"),
        (b"a: " + b"[" * 250 + b"]" * 250 + b"\n", "nested more than 64 levels"),
        (b"bodies:\n  - {name: b, mass: \"" + b"+".join([b"1"] * 2000) + b"\"}\n", "too long"),
        (b"bodies:\n  - {name: b, mass: \"" + b"-" * 1000 + b"1\"}\n", "too long"),
        (b"parameters: {m: 1}\nbodies:\n  - {name: b, mass: \"sqrt($m - 2)\"}\n",
         "not a real number"),
        (b"bodies:\n  - {name: b, mass: 1, inertia: [1e308, 1e308, 1e308]}\n"
         b"joints:\n  - {name: j, type: revolute, parent: ground, child: b}\n", "too large"),
    ],
)
@pytest.mark.filterwarnings("error")
def test_issue_11_reproducers_are_one_line_exit_2(tmp_path, content, needle):
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    result = run_split("info", str(path))
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and needle in result.stderr, result.stderr
    assert result.stderr.startswith(f"symgen: error: {path}:")


def test_closed_loop_and_coupling_options(tmp_path):
    """--actuated and --baumgarte reach the closed-loop kernels (verified against the
    reference); --no-couplings gives every joint its own coordinate; bad values: one line."""
    four_bar = str(EXAMPLES / "four_bar.yaml")
    result = run("verify", four_bar, "--kernels",
                 "constrained_inverse_dynamics,constrained_forward_dynamics",
                 "--actuated", "crank_joint", "--baumgarte", "5,5", "--states", "3")
    assert result.exit_code == 0, result.output
    assert "all 2 checks passed" in result.output
    geared = str(EXAMPLES / "geared_arm.yaml")
    for flags, nv in (((), 3), (("--no-couplings",), 6)):
        result = run("generate", geared, "--kernels", "mass_matrix", "-o", str(tmp_path),
                     *flags)
        assert result.exit_code == 0, result.output
        assert f"#define GEARED_ARM_NV {nv}" in (tmp_path / "geared_arm.h").read_text()
    bad = run("generate", four_bar, "-o", str(tmp_path), "--baumgarte", "5")
    assert bad.exit_code == 2 and "expected two numbers ALPHA,BETA" in bad.output
    assert len(bad.output.strip().splitlines()) == 1
