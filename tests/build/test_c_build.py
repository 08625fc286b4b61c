"""Generated C: strict compilation (host gcc and Cortex-M4), the cffi build and its cache,
the numpy wrappers (single and batch), and the agreement of compiled kernels with the
reference (double ≤ 1e-10; float against double ≤ 1e-4)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from paths import EXAMPLES
from random_models import parametric_arm, random_model

import symgen
from symgen import reference as ref
from symgen.apps.verify import check_compiled, random_states
from symgen.backends.c99.emit import emit_c
from symgen.build.compiler import DEFAULT_FLAGS, cache_dir, compile_kernels
from symgen.io.robots import robot_urdf
from symgen.kernels import KERNELS

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Werror"]
#: The derivative kernels, linearization and regressors (programs built from others by
#: symgen.ir.autodiff).
DERIVATIVES = tuple(k for k, spec in KERNELS.items() if spec.on_request)
ARM = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard",
       "-mfpu=fpv4-sp-d16", "-Os", *STRICT]


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """Compiled modules go to a cache of this test session, not the user's."""
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@cache
def kernel_sets() -> dict[str, symgen.KernelSet]:
    """Models covering every joint type, runtime parameters and external forces."""
    forces = symgen.Options(external_forces=True)
    return {
        # every kernel but the articulated-body FD, which the Panda's coupled finger
        # excludes, and the large derivative programs (the random tree 19 compiles both)
        "panda": symgen.generate(symgen.load(robot_urdf("panda")),
                                 [k for k in KERNELS if not k.endswith("_aba")
                                  and k not in DERIVATIVES], forces),
        "tree": symgen.generate(random_model(19), options=forces),  # spherical, free, ...
        # the derivative programs on a small model (a large one takes minutes to compile
        # for the Cortex-M4); tests/kernels/test_derivatives.py checks their values
        "derivatives": symgen.generate(symgen.load(EXAMPLES / "puma560.yaml"),
                                       list(DERIVATIVES), forces),
        "tree2": symgen.generate(random_model(0), options=forces),  # planar, continuous, ..
        "param_arm": symgen.generate(parametric_arm(), options=forces),
        # read from MJCF: a multi-joint body, armature, joint springs, a <connect> and a
        # <weld> loop and a <joint> coupling (every default kernel, loops closed)
        "mjcf_arm": symgen.generate(symgen.load(EXAMPLES / "gripper_arm.xml"), options=forces),
    }


def test_the_models_cover_every_joint_type():
    types = {j.type.value for ks in kernel_sets().values() for j in ks.model.joints}
    assert types >= {"revolute", "continuous", "prismatic", "helical", "cylindrical",
                     "universal", "planar", "spherical", "free"}


def write(ks: symgen.KernelSet, directory: Path, real: str) -> Path:
    return symgen.write_c(ks, directory, real=real)[1]


@pytest.mark.parametrize("real", ["double", "float"])
@pytest.mark.parametrize("name", ["panda", "tree", "tree2", "param_arm", "derivatives",
                                  "mjcf_arm"])
def test_generated_c_compiles_without_warnings(name, real, tmp_path):
    source = write(kernel_sets()[name], tmp_path, real)
    run = subprocess.run(["gcc", *STRICT, "-O0", "-c", str(source), "-o",
                          str(tmp_path / "k.o")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[:3000]
    assert source.read_text().isascii()


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                    reason="arm-none-eabi-gcc not installed (.ci/run installs it)")
@pytest.mark.parametrize("name", ["panda", "tree", "tree2", "param_arm", "derivatives",
                                  "mjcf_arm"])
def test_generated_c_compiles_for_cortex_m4(name, tmp_path):
    source = write(kernel_sets()[name], tmp_path, "float")
    run = subprocess.run([*ARM, "-c", str(source), "-o", str(tmp_path / "k.o")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[:3000]


def test_generated_c_is_reentrant_and_deterministic():
    ks = kernel_sets()["panda"]
    first, second = emit_c(ks), emit_c(ks)
    assert first.source == second.source and first.header == second.header
    text = first.source
    for word in ("malloc", "calloc", "free(", "global"):
        assert word not in text
    # no static storage: every static definition is a function (the trig helpers), none an
    # object (a declarator with "=" or "[" before its parameter list, or without one)
    statics = [line for line in text.splitlines() if "static " in line]
    assert statics and all("(" in line and not set(line.split("(")[0]) & set("=[")
                           for line in statics), statics
    banner = text.split("*/", 1)[0]
    assert "Generated by symgen" in banner and "sha256:" in banner
    # no date or time (a hex digest such as "sha256:70c6..." is neither)
    assert not re.search(r"(?<!\w)(\d{4}-\d{2}-\d{2}|\d{2}:\d{2})(?!\w)", banner)
    # only functions at file scope: every top-level line is a comment, include, prototype
    # line, brace or blank (or the trig helpers' guards, vector types and static functions)
    for line in text.splitlines():
        if line and not line.startswith((" ", "/*", " *", "#include", "void ", "{", "}",
                                         "static ", "typedef ", "#if", "#define SYMGEN_",
                                         "#else", "#endif")):
            pytest.fail(f"unexpected top-level line: {line!r}")


#: The Panda is built with the default flags (-O2); the random trees at -O0, which compiles
#: their large straight-line functions ten times faster and checks the same C.
FLAGS = {"panda": DEFAULT_FLAGS, "param_arm": DEFAULT_FLAGS}


@pytest.mark.parametrize("name", ["panda", "tree", "tree2", "param_arm"])
def test_compiled_kernels_match_reference_and_float_build(name):
    ks = kernel_sets()[name]
    flags = FLAGS.get(name, ("-O0", "-std=c99"))
    lib = compile_kernels(ks, "double", flags=flags)
    low = compile_kernels(ks, "float", flags=flags)
    checks = check_compiled(lib, random_states(ks, 5, seed=3), low)
    failed = [c for c in checks if not c.ok]
    assert not failed, failed
    assert {c.peer for c in checks} >= {"reference", "pinocchio", "float vs double"}


@pytest.mark.parametrize(("robot", "floating"), [
    ("ur5", False), ("xarm7", False),
    # 15 s; the floating base is also checked against Pinocchio in tests/peers
    pytest.param("solo12", True, marks=pytest.mark.slow)])
def test_compiled_robot_kernels_match_reference_pinocchio_and_float(robot, floating):
    """The issue's robots besides the Panda; built at -O0 (same C, faster to compile)."""
    ks = symgen.generate(symgen.load(robot_urdf(robot), floating_base=floating))
    flags = ("-O0", "-std=c99")
    lib = compile_kernels(ks, "double", flags=flags)
    low = compile_kernels(ks, "float", flags=flags)
    checks = check_compiled(lib, random_states(ks, 5, seed=4), low)
    assert not [c for c in checks if not c.ok], [c for c in checks if not c.ok]
    assert {c.peer for c in checks} == {"reference", "pinocchio", "float vs double"}


def test_runtime_parameters_of_compiled_kernels():
    ks = kernel_sets()["param_arm"]
    lib = compile_kernels(ks)
    model = ks.model
    q = ref.neutral_configuration(model) + 0.3
    for values in ({"payload": 0.0}, {"payload": 3.0, "g": -1.62}):
        vector = [model.parameter_values(values)[n] for n in model.parameter_names]
        got = lib.gravity_forces(q, vector)
        np.testing.assert_allclose(got, ref.gravity_forces(model, q, params=values),
                                   rtol=1e-12, atol=1e-12)
    # params default to the declared defaults
    np.testing.assert_allclose(lib.gravity_forces(q), ref.gravity_forces(model, q),
                               rtol=1e-12, atol=1e-12)


def test_batch_form_equals_single_calls_and_broadcasts():
    """A batch equals single calls: bit for bit through the scalar batch loop, and to 1e-12
    relative through the SIMD batch (libmvec's sin and cos are within 4 ulp of libm's;
    every other operation is the same IEEE operation in the same order)."""
    ks = kernel_sets()["panda"]
    for vectorize, tolerance in ((None, 0.0), ("native", 1e-12)):
        _check_batch_against_single_calls(compile_kernels(ks, vectorize=vectorize), tolerance)


def _check_batch_against_single_calls(lib, tolerance: float) -> None:
    ks = lib.kernel_set
    states = random_states(ks, 5, seed=9)
    Q = np.array([s["q"] for s in states])
    V = np.array([s["v"] for s in states])
    T = np.array([s["tau"] for s in states])
    F = np.zeros((ks.model.nbodies, 6))
    batch = lib.forward_dynamics(Q, V, T, F)  # f_ext broadcast to every state
    assert batch.shape == (5, ks.model.nv)
    for i in range(5):
        single = lib.forward_dynamics(Q[i], V[i], T[i], F)
        scale = max(float(np.max(np.abs(single))), 1.0)
        assert np.max(np.abs(batch[i] - single)) <= tolerance * scale
    assert lib.mass_matrix(Q).shape == (5, ks.model.nv, ks.model.nv)


def test_wrapper_errors_are_clear():
    lib = compile_kernels(kernel_sets()["panda"])
    nv = lib.kernel_set.model.nv
    assert nv == 8  # the Panda's second finger mimics the first
    with pytest.raises(ValueError, match=r"^mass_matrix: q must have shape \(8,\) for one call or "
                       r"\(n, 8\) for a batch of n, got shape \(9,\)$"):
        lib.mass_matrix(np.zeros(nv + 1))
    with pytest.raises(TypeError, match="real numeric array"):
        lib.mass_matrix(np.zeros(nv, dtype=complex))
    with pytest.raises(TypeError, match="missing the argument 'v'"):
        lib.bias_forces(np.zeros(nv))
    with pytest.raises(TypeError, match="unexpected argument 'x'"):
        lib.mass_matrix(q=np.zeros(nv), x=1)
    with pytest.raises(ValueError, match="batch sizes differ"):
        lib.bias_forces(np.zeros((2, nv)), np.zeros((3, nv)))
    nb = lib.kernel_set.model.nbodies
    with pytest.raises(ValueError, match=rf"f_ext must have shape \({nb}, 6\) for one call "
                                         rf"or \(n, {nb}, 6\) for a batch of n, got shape "
                                         rf"\(3, 6\)"):
        lib.forward_dynamics(np.zeros(nv), np.zeros(nv), np.zeros(nv), np.zeros((3, 6)))
    with pytest.raises(symgen.SymgenError, match="no compiled kernel 'nope'"):
        lib["nope"]


def test_missing_or_failing_compiler_is_a_clear_error(monkeypatch, tmp_path, capfd):
    ks = symgen.generate(random_model(2), ["gravity_forces"])
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path / "fresh"))
    monkeypatch.setenv("CC", "no-such-compiler-xyz")
    with pytest.raises(symgen.SymgenError, match="C compiler 'no-such-compiler-xyz' not found"):
        compile_kernels(ks)
    fake = tmp_path / "badcc"
    fake.write_text("#!/bin/sh\necho 'fake cc 1.0'\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    with pytest.raises(symgen.SymgenError, match="compiling .* failed"):
        compile_kernels(ks)
    assert not list((tmp_path / "fresh").glob("*/"))  # nothing half-built left in the cache
    assert capfd.readouterr() == ("", "")  # the compiler's output goes into the error only
    fake.write_text("#!/bin/sh\necho 'fake cc 2.0'\necho 'k.c:1:2: error: no way' >&2\n"
                    "echo 'one more line' >&2\nexit 1\n")
    with pytest.raises(symgen.SymgenError, match=r"^compiling \S+\.c failed: k.c:1:2: error: "
                                                 r"no way$"):
        compile_kernels(ks)


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path / "a"))
    assert cache_dir() == tmp_path / "a"
    monkeypatch.delenv("SYMGEN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "symgen"


# --- cache hygiene, explicit batching, float range, nv = 0 (issue 11, items 6, 8, 9) ---

EXAMPLE_MODELS = EXAMPLES
QUICK = ("-O0", "-std=c99")


@cache
def chain_set() -> symgen.KernelSet:
    from symgen.io.robots import spatial_chain

    return symgen.generate(spatial_chain(2), ["mass_matrix"])


def chain_matches_reference(lib) -> None:
    q = np.array([0.3, -1.1])
    np.testing.assert_allclose(lib.mass_matrix(q), ref.mass_matrix(lib.kernel_set.model, q),
                               rtol=1e-12, atol=1e-14)


def test_cache_key_does_not_depend_on_the_cache_location(monkeypatch, tmp_path):
    """Built in two caches, the entry has the same name; an entry moved to another cache
    loads there (the compiler is not run again) and computes the right thing."""
    from symgen.build import compiler as build
    ks = chain_set()
    for name in ("a", "b"):
        monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path / name))
        chain_matches_reference(compile_kernels(ks, flags=QUICK))
    (entry,) = [p.name for p in (tmp_path / "a").iterdir()]
    assert [p.name for p in (tmp_path / "b").iterdir()] == [entry]
    shutil.move(tmp_path / "a" / entry, tmp_path / "moved" / entry)

    def no_compiler(*args):
        raise AssertionError("rebuilt although the entry is in the cache")

    monkeypatch.setattr(build, "_compile", no_compiler)
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path / "moved"))
    chain_matches_reference(compile_kernels(ks, flags=QUICK))


def test_damaged_cache_entry_is_rebuilt(monkeypatch, tmp_path):
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path))
    compile_kernels(chain_set(), flags=QUICK)
    (entry,) = tmp_path.iterdir()
    for so in entry.glob("*.so"):
        so.unlink()
    chain_matches_reference(compile_kernels(chain_set(), flags=QUICK))
    assert len(list(entry.glob("*.so"))) == 1 and len(list(tmp_path.iterdir())) == 1


def test_unusable_cache_is_a_clear_error(monkeypatch, tmp_path):
    """A cache under a regular file (fails for root too) or in a read-only directory is a
    SymgenError naming the directory and SYMGEN_CACHE_DIR, not a bare OSError."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(blocker / "cache"))
    with pytest.raises(symgen.SymgenError,
                       match=rf"cannot use the kernel cache {re.escape(str(blocker))}/cache: "
                             r".*; set SYMGEN_CACHE_DIR to a writable directory"):
        compile_kernels(chain_set(), flags=QUICK)
    if os.name == "posix" and os.geteuid() == 0:
        return  # root writes into read-only directories
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    try:
        monkeypatch.setenv("SYMGEN_CACHE_DIR", str(locked))
        with pytest.raises(symgen.SymgenError, match="set SYMGEN_CACHE_DIR"):
            compile_kernels(chain_set(), flags=QUICK)
    finally:
        locked.chmod(0o755)


def test_stale_build_directories_are_removed_and_live_ones_kept(monkeypatch, tmp_path):
    """Left by killed builds: a directory of a dead process on this host, and any older than
    STALE_AFTER; a recent one of a live process, or of another host, stays."""
    from symgen.build import compiler as build
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    host = build._host_tag()
    stale = [tmp_path / f".build-{host}-{gone.pid}-dead1234", tmp_path / ".build-oldstyle"]
    live = [tmp_path / f".build-{host}-{os.getpid()}-live1234",
            tmp_path / f".build-0123abcd-{gone.pid}-otherhost"]
    for path in stale + live:
        path.mkdir()
        (path / "part.c").write_text("int x;\n")
    old = time.time() - build.STALE_AFTER - 60
    os.utime(tmp_path / ".build-oldstyle", (old, old))
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path))
    compile_kernels(chain_set(), flags=QUICK)  # a build cleans up before it starts
    assert all(not p.exists() for p in stale)
    assert all(p.is_dir() for p in live)
    assert build.clean_stale_builds(tmp_path) == []


def test_batching_is_explicit_on_a_one_parameter_model():
    """The double pendulum has one runtime parameter (m_tip): a 1-D params of another length
    is an error, never a batch; a batch is a leading axis, or one scalar per state."""
    ks = symgen.generate(symgen.load(EXAMPLE_MODELS / "double_pendulum.yaml"),
                         ["mass_matrix", "integrate"])
    lib = compile_kernels(ks, flags=QUICK)
    model = ks.model
    rng = np.random.default_rng(11)
    q, Q = rng.standard_normal(model.nq), rng.standard_normal((3, model.nq))
    masses = [0.2, 0.5, 1.5]

    def expected(qi, m):
        return ref.mass_matrix(model, qi, params={"m_tip": m})

    with pytest.raises(ValueError, match=r"^mass_matrix: params must be a scalar or have shape "
                                         r"\(1,\) for one call, \(n, 1\) or \(n,\) for a "
                                         r"batch of n, got shape \(3,\)$"):
        lib.mass_matrix(q, masses)
    np.testing.assert_allclose(lib.mass_matrix(q, 1.5), expected(q, 1.5), rtol=1e-12)
    np.testing.assert_allclose(lib.mass_matrix(q, [1.5]), expected(q, 1.5), rtol=1e-12)
    per_state = lib.mass_matrix(Q, masses)  # one scalar per state of the batch
    broadcast_q = lib.mass_matrix(q, np.array(masses)[:, None])  # batch from params (3, 1)
    assert per_state.shape == broadcast_q.shape == (3, model.nv, model.nv)
    for i in range(3):
        np.testing.assert_allclose(per_state[i], expected(Q[i], masses[i]), rtol=1e-12)
        np.testing.assert_allclose(broadcast_q[i], expected(q, masses[i]), rtol=1e-12)
    with pytest.raises(ValueError, match=r"params must be .*got shape \(2,\)"):
        lib.mass_matrix(Q, masses[:2])
    with pytest.raises(ValueError, match=r"q must have shape \(2,\) for one call or \(n, 2\)"):
        lib.mass_matrix(Q.T)
    assert lib.mass_matrix(np.zeros((0, model.nq))).shape == (0, model.nv, model.nv)
    v = rng.standard_normal(model.nv)
    steps = lib.integrate(Q, v, [0.1, 0.2, 0.3])  # dt per state
    np.testing.assert_allclose(steps, Q + np.outer([0.1, 0.2, 0.3], v), rtol=1e-14)
    np.testing.assert_allclose(lib.integrate(q, v, 0.1), q + 0.1 * v, rtol=1e-14)


def test_float_build_rejects_values_beyond_the_float_range_without_warnings():
    ks = chain_set()
    low = compile_kernels(ks, "float", flags=QUICK)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy RuntimeWarning reaches the caller
        with pytest.raises(ValueError, match=r"mass_matrix: q has a value beyond the float32 "
                                             r"range \(\|x\| > 3.4e\+38\)"):
            low.mass_matrix(np.array([0.0, 1e300]))
        assert np.isnan(low.mass_matrix(np.array([0.0, np.nan]))).any()  # passes, as in C
        M = low.mass_matrix(np.array([0.3, -1.1]))
    M_ref = ref.mass_matrix(ks.model, np.array([0.3, -1.1]))
    np.testing.assert_allclose(M, M_ref, rtol=1e-5, atol=1e-6)  # float: ~1e-7 relative


LONE_BODY = """<robot name="lone">
  <link name="base"><inertial><mass value="1.0"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
</robot>
"""


def test_model_without_moving_joint_is_a_clear_error(tmp_path):
    """nv = 0 (a lone body read without a floating base) is a ModelError with a hint, from
    `generate` and from `symgen verify`; with a floating base it compiles."""
    from click.testing import CliRunner

    from symgen.apps.cli import main
    from symgen.model.moving import require_moving_joint

    path = tmp_path / "lone.urdf"
    path.write_text(LONE_BODY)
    model = symgen.load(path)
    assert model.nv == 0
    hint = r"no moving joint \(nv = 0\).*use --floating-base"
    with pytest.raises(symgen.ModelError, match=hint):
        require_moving_joint(model)
    with pytest.raises(symgen.ModelError, match=hint):
        symgen.generate(model, ["mass_matrix"])
    result = CliRunner().invoke(main, ["verify", str(path)])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("symgen: error:")]
    assert len(errors) == 1 and "no moving joint" in errors[0], result.output
    assert "--floating-base" in errors[0] and "Traceback" not in result.output
    floating = symgen.load(path, floating_base=True)
    lib = compile_kernels(symgen.generate(floating, ["mass_matrix"]), flags=QUICK)
    M = lib.mass_matrix(ref.neutral_configuration(floating))
    np.testing.assert_allclose(np.diag(M), [0.1, 0.1, 0.1, 1.0, 1.0, 1.0], atol=1e-12)


def test_compile_error_is_one_line_from_the_compiler(monkeypatch, tmp_path, capfd):
    """A real gcc error (a header forced in by the flags): its first error line, without the
    deleted build directory, and nothing printed."""
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path / "cache"))
    bad = tmp_path / "bad.h"
    bad.write_text("#error deliberately broken\n")
    expected = (r"^compiling chain2(_simd)?\.c failed: \S*bad\.h:1:2: "
                r"error: #error deliberately broken$")
    with pytest.raises(symgen.SymgenError, match=expected) as info:
        compile_kernels(chain_set(), flags=(*QUICK, "-include", str(bad)))
    assert ".build-" not in str(info.value)
    assert capfd.readouterr() == ("", "")
    assert list((tmp_path / "cache").iterdir()) == []
