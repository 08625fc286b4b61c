"""``symgen generate`` and ``symgen verify``: files written whole, one-line errors with exit
code 2, the verification table and its exit code."""

from __future__ import annotations

import subprocess

import pytest
from cli_runner import run_split
from paths import EXAMPLES
from random_models import parametric_arm

import symgen.apps.verify.checks
from symgen import ModelError

PENDULUM = str(EXAMPLES / "double_pendulum.yaml")


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def test_generate_writes_header_and_source(tmp_path):
    out = tmp_path / "gen"
    result = run_split("generate", PENDULUM, "-o", str(out), "--real", "float")
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["double_pendulum.c", "double_pendulum.h"]
    assert "wrote" in result.stdout
    assert "deriving inverse_dynamics" in result.stderr  # progress on stderr
    header = (out / "double_pendulum.h").read_text()
    assert "typedef float double_pendulum_real;" in header
    assert "void double_pendulum_forward_dynamics(" in header
    run = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion",
                          "-Werror", "-c", str(out / "double_pendulum.c"), "-o",
                          str(tmp_path / "k.o")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_generate_simd_writes_the_vectorised_batch_and_it_compiles(tmp_path):
    """--simd adds <prefix>_simd.h/.c; both compile under the strict warnings for the host
    CPU, and a natural-coordinate kernel is reached through the same command."""
    out = tmp_path / "gen"
    result = run_split("generate", PENDULUM, "-o", str(out), "--simd")
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "double_pendulum.c", "double_pendulum.h", "double_pendulum_simd.c",
        "double_pendulum_simd.h"]
    assert "double_pendulum_inverse_dynamics_simd_batch(" in (
        out / "double_pendulum_simd.h").read_text()
    for source in ("double_pendulum.c", "double_pendulum_simd.c"):
        run = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Wpedantic",
                              "-Wconversion", "-Werror", "-O2", "-march=native", "-c",
                              str(out / source), "-o", str(tmp_path / f"{source}.o")],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
    natural = run_split("generate", str(EXAMPLES / "four_bar.yaml"), "-o", str(tmp_path / "nc"),
                        "--kernels", "nc_step")
    assert natural.exit_code == 0, natural.stderr
    assert "void four_bar_natural_nc_step(" in (tmp_path / "nc" / "four_bar_natural.h").read_text()


def test_generate_options_select_kernels_prefix_and_parameters(tmp_path):
    result = run_split("generate", PENDULUM, "-o", str(tmp_path), "--kernels",
                       "mass_matrix,inverse_dynamics", "--prefix", "dp", "--param", "m_tip")
    assert result.exit_code == 0, result.stderr
    header = (tmp_path / "dp.h").read_text()
    assert "void dp_mass_matrix(" in header and "void dp_inverse_dynamics(" in header
    assert "dp_forward_dynamics" not in header
    assert "params[1]" in header


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kernels", "nope"], "unknown kernel 'nope'"),
        (["--param", "mass_of_the_moon"], "unknown parameter 'mass_of_the_moon'"),
        (["--real", "half"], "--real must be one of double, float"),
        (["--frame", "ghost"], "no body or frame named 'ghost'"),
    ],
)
def test_generate_errors_are_one_line_and_write_nothing(tmp_path, args, message):
    out = tmp_path / "never"
    result = run_split("generate", PENDULUM, "-o", str(out), *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("symgen: error:")
    assert not out.exists()


def test_generate_missing_and_malformed_files(tmp_path):
    result = run_split("generate", str(tmp_path / "missing.urdf"), "-o", str(tmp_path / "o"))
    assert result.exit_code == 2 and "symgen: error:" in result.stderr
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='r'><link name='a'></robot>")
    result = run_split("generate", str(bad), "-o", str(tmp_path / "o"))
    assert result.exit_code == 2 and "bad.urdf" in result.stderr
    assert not (tmp_path / "o").exists()


def test_verify_prints_a_table_and_passes():
    result = run_split("verify", PENDULUM, "--states", "4", "--real", "float")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "all" in result.stdout and "checks passed" in result.stdout
    for peer in ("reference", "pinocchio", "float vs double"):
        assert peer in result.stdout


def test_verify_of_natural_kernels_passes():
    """Natural-coordinate kernels, the constant mass matrix (a kernel with no input) among
    them, against their numpy references at the formulation's own states."""
    four_bar = str(EXAMPLES / "four_bar.yaml")
    result = run_split("verify", four_bar, "--states", "3",
                       "--kernels", "nc_mass_matrix,nc_constraints,nc_accelerations")
    assert result.exit_code == 0, result.stdout + result.stderr
    for kernel in ("nc_mass_matrix", "nc_constraints", "nc_accelerations"):
        assert kernel in result.stdout
    assert "checks passed" in result.stdout


def test_verify_exits_non_zero_past_tolerance(monkeypatch):
    monkeypatch.setattr(symgen.apps.verify.checks, "DOUBLE_TOLERANCE", 0.0)
    result = run_split("verify", PENDULUM, "--states", "3", "--kernels", "mass_matrix_inverse")
    assert result.exit_code == 1
    assert "FAIL" in result.stdout and "FAILED" in result.stderr


def test_keep_parameters_bakes_the_others():
    model = parametric_arm()
    kept = model.keep_parameters(["payload"])
    assert kept.parameter_names == ["payload"]
    assert kept.used_parameters() == {"payload"}
    assert kept.gravity[2] == pytest.approx(-9.81)
    with pytest.raises(ModelError, match="unknown parameter 'nope'"):
        model.keep_parameters(["nope"])


def test_info_natural_shows_coordinates_constraints_and_count_check():
    result = run_split("info", str(EXAMPLES / "four_bar.yaml"), "--natural")
    assert result.exit_code == 0, result.stderr
    assert "Natural coordinates (n = 4; 3 constraints; 1 DOF)" in result.stdout
    assert "count check: 4 coordinates - 3 independent constraints = 1 DOF" in result.stdout
    result = run_split("info", str(EXAMPLES / "rssr.yaml"), "--natural")
    assert result.exit_code == 0, result.stderr
    assert "= 2 DOF" in result.stdout  # the crank's mobility and the coupler's idle spin


def test_generate_for_a_microcontroller_warns_of_software_double(tmp_path):
    out = str(tmp_path / "gen")
    double = run_split("generate", PENDULUM, "-o", out, "--real", "double",
                       "--target", "cortex-m4")
    assert double.exit_code == 0, double.stderr
    notes = [line for line in double.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "software floating point" in notes[0]
    assert "-mfpu=fpv4-sp-d16" in double.stdout  # the build flags
    single = run_split("generate", PENDULUM, "-o", out, "--real", "float",
                       "--target", "cortex-m4")
    assert single.exit_code == 0 and "note:" not in single.stderr
    seven = run_split("generate", PENDULUM, "-o", out, "--real", "double",
                      "--target", "cortex-m7")
    assert seven.exit_code == 0 and "note:" not in seven.stderr
    unknown = run_split("generate", PENDULUM, "-o", out, "--target", "cortex-m9")
    assert unknown.exit_code == 2
    assert unknown.stderr.strip().splitlines() == [
        "symgen: error: unknown target 'cortex-m9' (known: host, cortex-m4, cortex-m7)"]
