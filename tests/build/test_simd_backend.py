"""The simd backend (symgen.backends.simd.emit): ``*_simd_batch`` equals the scalar ``*_batch``.

A small C driver (compiled with gcc: the scalar source with the builder's default flags, the
simd source with the target's flags) runs both batch functions on the same inputs and writes
both outputs. Tolerance 1e-12, relative to each output's magnitude per state (absolute below 1,
the measure of every consistency check here): every ``+ - * /`` is the same IEEE operation in
the same order in every lane (``-std=c99``: no FMA contraction), ``sqrt``/``fabs`` run lane by
lane through libm, and only the transcendental functions may differ, libmvec's being within 4
ulp (glibc manual, "Errors in Math Functions") of libm's: a few 1e-16 relative, which the
kernels' arithmetic carries to the outputs amplified by at most the conditioning of the
kernel (forward dynamics: that of the mass matrix). Float kernels get the same multiple of
float's unit roundoff.
"""

from __future__ import annotations

import math
import platform
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from paths import EXAMPLES
from random_models import parametric_arm, random_model

import symgen
from symgen import reference as ref
from symgen.backends import BACKENDS, emit_simd, simd_target
from symgen.backends.c99.emit import emit_c
from symgen.generate import KernelSet, Options
from symgen.io.robots import robot_urdf
from symgen.ir.expr import Elem, Less, Num, Select, call
from symgen.ir.optimize import optimize
from symgen.ir.program import ProgramBuilder

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Werror"]
ARM = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard",
       "-mfpu=fpv4-sp-d16", "-Os", *STRICT]
#: The same multiple (about 9000) of the unit roundoff for both types.
TOLERANCE = {"double": 1e-12, "float": 5e-4}
SCALAR_FLAGS = ["-O2", "-std=c99"]
#: One directory for every build of this module (removed at exit).
WORK = Path(tempfile.mkdtemp(prefix="symgen-simd-test-"))

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


def cpu_flags() -> str:
    """The host CPU's flags line (Linux), else ""."""
    try:
        return Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return ""


def teardown_module() -> None:
    shutil.rmtree(WORK, ignore_errors=True)


# ------------------------------------------------------------------------------ kernel sets


def every_function_set() -> KernelSet:
    """One program using every function a Call may hold, and a Select (on the parametric
    arm's model, whose header the scalar source needs)."""
    b = ProgramBuilder("functions")
    x = b.input("x", 4)
    u = b.input("u", 2)  # in (-1, 1): asin, acos
    values = [call("sin", x[0]), call("cos", x[1]), call("tan", x[2] * 0.3),
              call("asin", u[0]), call("acos", u[1]), call("atan", x[3]),
              call("atan2", x[0], x[1]), call("sqrt", x[2] * x[2] + 1.0),
              call("fabs", x[3]), call("pow", x[0] * x[0] + 0.5, Elem("u", 1) + 2.0),
              Select(Less(x[0], x[1]), x[2] * 2.0, call("sin", x[3]) + 1.0),
              Select(Less(x[3], Num(0.0)), Num(3.0), x[1])]
    b.output("y", len(values), values)
    ks = KernelSet(parametric_arm().resolve(), Options(), sizes=[("N", 4, "inputs")],
                   prefix="fns", formulation="natural", tree_layout=False)
    ks.programs["functions"] = optimize(b.build())
    # a registered kernel outside the tree catalogue: the C documents the program's own text
    ks.kernel_of["functions"] = "nc_mass_matrix"
    return ks


@cache
def kernel_set(name: str) -> KernelSet:
    if name == "panda":
        return symgen.generate(symgen.load(robot_urdf("panda")),
                               ["inverse_dynamics", "mass_matrix", "forward_dynamics"])
    if name == "tree0":  # planar, helical, revolute, prismatic, continuous
        return symgen.generate(random_model(0), ["inverse_dynamics", "mass_matrix",
                                                 "forward_kinematics", "energy"])
    if name == "tree1":  # universal, free, cylindrical, spherical: sqrt and Select
        return symgen.generate(random_model(1), ["inverse_dynamics", "forward_dynamics",
                                                 "integrate"], Options(external_forces=True))
    if name == "param_arm":
        return symgen.generate(parametric_arm())
    if name == "four_bar":
        from symgen.natural import natural_kernels

        return natural_kernels(symgen.load(EXAMPLES / "four_bar.yaml"))[1]
    if name == "functions":
        return every_function_set()
    raise KeyError(name)


def inputs(ks: KernelSet, name: str, count: int, seed: int) -> list[np.ndarray]:
    """Inputs of program ``name`` for ``count`` states: q on the joint manifolds for tree
    kernels, parameters near their defaults, time steps in (0, 0.02), the rest normal."""
    rng = np.random.default_rng(seed)
    tree = ks.formulation == "tree"
    out = []
    for spec in ks[name].inputs:
        if tree and spec.name == "q":
            x = np.array([ref.random_configuration(ks.model, rng) for _ in range(count)])
        elif spec.name == "params":
            defaults = np.array([p.default for p in ks.model.parameters])
            x = defaults * (1 + 0.1 * rng.standard_normal((count, spec.size)))
        elif spec.name == "dt":
            x = rng.uniform(0.0, 0.02, (count, 1))
        elif spec.name == "u":
            x = rng.uniform(-0.99, 0.99, (count, spec.size))
        else:
            x = rng.standard_normal((count, spec.size))
        out.append(np.asarray(x, dtype=float).reshape(count, spec.size))
    return out


# ------------------------------------------------------------------------------ the driver
def driver_source(src, prefix: str) -> str:
    """main(count, in.bin, out.bin): per kernel, reads its inputs (count argument sets each),
    runs *_batch and *_simd_batch on outputs filled with NaN bytes, writes both."""
    lines = [
        "#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>",
        f'#include "{prefix}_simd.h"',
        f"typedef {prefix}_real R;",
        "static R *take(FILE *f, size_t n) { R *x = (R *)malloc(n * sizeof(R) + 1);",
        "    if (!x || (n && fread(x, sizeof(R), n, f) != n)) exit(3); return x; }",
        "static R *blank(size_t n) { R *x = (R *)malloc(n * sizeof(R) + 1);",
        "    if (!x) exit(4); memset(x, 0xff, n * sizeof(R)); return x; }",
        "static void put(FILE *f, const R *x, size_t n) {",
        "    if (n && fwrite(x, sizeof(R), n, f) != n) exit(5); }",
        "int main(int argc, char **argv) {",
        "    size_t c; FILE *fi, *fo;",
        "    if (argc != 4) return 2;",
        "    c = (size_t)strtoul(argv[1], NULL, 10);",
        "    fi = fopen(argv[2], \"rb\"); fo = fopen(argv[3], \"wb\");",
        "    if (!fi || !fo) return 6;",
        f'    printf("%lu\\n", (unsigned long){prefix}_simd_width());',
    ]
    for f in src.functions:
        ins = [f"i{n}" for n in range(len(f.inputs))]
        outs = [f"o{n}" for n in range(len(f.outputs))]
        body = [f"R *i{n} = take(fi, c * {s.size});" for n, s in enumerate(f.inputs)]
        for n, s in enumerate(f.outputs):
            body += [f"R *o{n} = blank(c * {s.size}), *p{n} = blank(c * {s.size});"]
        scalar_args = ", ".join(["c", *ins, *outs])
        simd_args = ", ".join(["c", *ins, *(f"p{n}" for n in range(len(f.outputs)))])
        body += [f"{f.name}_batch({scalar_args});", f"{f.batch_name}({simd_args});"]
        for n, s in enumerate(f.outputs):
            body += [f"put(fo, o{n}, c * {s.size}); put(fo, p{n}, c * {s.size});",
                     f"free(o{n}); free(p{n});"]
        body += [f"free({i});" for i in ins]
        lines.append("    { " + " ".join(body) + " }")
    lines += ["    fclose(fi); return fclose(fo) != 0;", "}"]
    return "\n".join(lines) + "\n"


def _gcc(args: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(["gcc", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _wait(*procs: subprocess.Popen) -> None:
    for p in procs:
        out, _ = p.communicate()
        assert p.returncode == 0, f"{' '.join(p.args)}:\n{out[-3000:]}"


@cache
def driver(name: str, target: str, real: str = "double", defines: tuple[str, ...] = ()
           ) -> tuple[Path, KernelSet, object]:
    """The driver of kernel set ``name`` for ``target``, built once."""
    ks = kernel_set(name)
    prefix = ks.prefix or "m"
    work = WORK / f"{name}-{target}-{real}-{'-'.join(d.strip('-D') for d in defines)}"
    work.mkdir(parents=True)
    scalar = emit_c(ks, prefix, real)
    simd = emit_simd(ks, prefix, real, scalar=scalar)
    scalar.write(work)
    simd.write(work)
    (work / "driver.c").write_text(driver_source(simd, prefix))
    t = simd_target(target)
    _wait(_gcc([*SCALAR_FLAGS, "-c", scalar.source_name, "-o", "scalar.o"], work),
          _gcc([*t.flags, *defines, *STRICT, "-c", simd.source_name, "-o", "simd.o"], work),
          _gcc(["-std=c99", "-O1", "-c", "driver.c", "-o", "driver.o"], work))
    _wait(_gcc(["driver.o", "scalar.o", "simd.o", "-o", "driver",
                *(f"-l{lib}" for lib in t.libraries)], work))
    return work / "driver", ks, simd


def run_both(name: str, target: str, count: int, real: str = "double",
             defines: tuple[str, ...] = (), seed: int = 0
             ) -> tuple[int, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """(W, {function/output: (scalar, simd)}) for ``count`` states."""
    exe, ks, simd = driver(name, target, real, defines)
    dtype = np.float32 if real == "float" else np.float64
    work = exe.parent
    with open(work / "in.bin", "wb") as f:
        for fn in simd.functions:
            for x in inputs(ks, fn.program, count, seed):
                f.write(x.astype(dtype).tobytes())
    run = subprocess.run([str(exe), str(count), "in.bin", "out.bin"], cwd=work,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    raw = np.fromfile(work / "out.bin", dtype=dtype)
    results, at = {}, 0
    for fn in simd.functions:
        for spec in fn.outputs:
            n = count * spec.size
            pair = (raw[at:at + n].reshape(count, spec.size),
                    raw[at + n:at + 2 * n].reshape(count, spec.size))
            results[f"{fn.name}/{spec.name}"] = pair
            at += 2 * n
    assert at == raw.size
    return int(run.stdout.split()[0]), results


def worst_error(scalar: np.ndarray, simd: np.ndarray) -> float:
    """max over states of max|simd − scalar| / max(max|scalar|, 1); NaN/inf must match."""
    s, v = scalar.astype(float), simd.astype(float)
    same = (np.isnan(s) == np.isnan(v)).all() and (s[np.isinf(s)] == v[np.isinf(s)]).all()
    if not same:
        return math.inf
    finite = np.isfinite(s)
    if s.size == 0:
        return 0.0
    d = np.where(finite, np.abs(np.where(finite, v - s, 0.0)), 0.0)
    scale = np.maximum(np.max(np.where(finite, np.abs(s), 0.0), axis=1), 1.0)
    return float(np.max(np.max(d, axis=1) / scale)) if len(s) else 0.0


def check(name: str, target: str, real: str = "double", defines: tuple[str, ...] = (),
          counts: tuple[int, ...] | None = None) -> int:
    width, _ = run_both(name, target, 0, real, defines)
    for count in counts or (0, 1, max(width - 1, 0), width, 3 * width + 1, 1000):
        w, results = run_both(name, target, count, real, defines, seed=count)
        assert w == width
        for key, (scalar, simd) in results.items():
            assert np.isfinite(scalar).any() or scalar.size == 0, key
            err = worst_error(scalar, simd)
            assert err <= TOLERANCE[real], f"{name} {target} {count} states: {key} {err:.2e}"
    return width


# ------------------------------------------------------------------------------ tests
def test_backend_registry():
    assert set(BACKENDS) >= {"c99", "simd"}
    c99 = BACKENDS["c99"]
    ks = kernel_set("param_arm")
    assert c99.emit(ks, "arm").source == emit_c(ks, "arm").source  # the c99 output, as is
    assert BACKENDS["simd"].emit(ks, "arm").header_name == "arm_simd.h"


def test_targets():
    native, portable = simd_target("native"), simd_target("portable")
    v3 = simd_target("x86-64-v3")
    assert "-march=native" in native.flags and not any("-march" in f for f in portable.flags)
    assert "-march=x86-64-v3" in v3.flags and "-ffp-contract=off" in v3.flags
    assert len({native.identity, portable.identity, v3.identity}) == 3
    if " avx2" in cpu_flags():
        assert v3.width == 4 and native.width >= 4
    with pytest.raises(symgen.SymgenError):
        simd_target("x86-64-v3; rm")


@pytest.mark.parametrize("name", ["panda", "tree0", "tree1", "param_arm", "four_bar",
                                  "functions"])
def test_simd_batch_equals_scalar_batch(name):
    width = check(name, "native")
    assert width >= 2 or platform.machine() not in ("x86_64", "AMD64")


@pytest.mark.parametrize("name", ["panda", "functions"])
def test_portable_target_and_forced_scalar_loop(name):
    assert check(name, "portable") == (2 if simd_target("portable").width == 2 else 1)
    prefix = kernel_set(name).prefix or "m"
    assert check(name, "native", defines=(f"-D{prefix.upper()}_SIMD_WIDTH=1",),
                 counts=(0, 1, 5)) == 1


def test_setup_and_store_bound_kernels_keep_the_scalar_loop():
    """nc_assemble (a setup kernel) and nc_mass_matrix (constant: no operations, n² stores)
    get no lane code; nc_step does (test_simd_batch_equals_scalar_batch[four_bar] checks all
    three batches against the scalar loop)."""
    ks = kernel_set("four_bar")
    prefix = ks.prefix or "m"
    source = emit_simd(ks, prefix).source
    lanes = {name for name in ("nc_assemble", "nc_mass_matrix", "nc_step")
             if f"static void {prefix}_{name}_simd_lanes(" in source}
    assert lanes == {"nc_step"}, lanes
    assert (f"{prefix}_nc_assemble runs once per initial condition (a setup kernel): the "
            "scalar loop") in source


def test_avx_without_avx2():
    """The AVX (not AVX2) libmvec variants (_ZGVc...), where the host can run them."""
    if " avx" not in cpu_flags():
        pytest.skip("the host has no AVX")
    assert check("functions", "sandybridge") == 4


@pytest.mark.parametrize("name", ["param_arm", "functions"])
def test_float_kernels(name):
    assert check(name, "native", real="float") >= 1


@pytest.mark.parametrize("real", ["double", "float"])
def test_strict_compile(real):
    """Strict warnings on x86 targets from SSE2 to AVX-512, and Cortex-M4 (the fallback);
    the host target is compiled strictly by every driver build above."""
    ks = kernel_set("functions")
    work = WORK / f"strict-{real}"
    work.mkdir()
    emit_c(ks, "m", real).write(work)
    emit_simd(ks, "m", real).write(work)
    procs = [_gcc(["-O2", *STRICT, *flags, "-DSYMGEN_LIBMVEC", "-c", "m_simd.c", "-o",
                   f"{n}.o"], work)
             for n, flags in enumerate([["-march=native"], [], ["-march=x86-64-v3"],
                                        ["-march=x86-64-v4"], ["-mavx"]])]
    _wait(*procs)
    if shutil.which(ARM[0]):
        run = subprocess.run([*ARM, "-c", "m_simd.c", "-o", "arm.o"], cwd=work,
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr


@pytest.mark.slow
@pytest.mark.parametrize("target", ["x86-64-v3", "portable"])
def test_talos_simd_equals_scalar(target):
    ks = symgen.generate(symgen.load(robot_urdf("talos")),
                         ["inverse_dynamics", "mass_matrix", "forward_dynamics"])
    kernel_set.cache_clear()
    name = "talos"
    work = WORK / f"talos-{target}"
    work.mkdir()
    scalar, simd = emit_c(ks, "m"), emit_simd(ks, "m")
    scalar.write(work)
    simd.write(work)
    (work / "driver.c").write_text(driver_source(simd, "m"))
    t = simd_target(target)
    _wait(_gcc([*SCALAR_FLAGS, "-c", "m.c", "-o", "scalar.o"], work),
          _gcc([*t.flags, *STRICT, "-c", "m_simd.c", "-o", "simd.o"], work))
    _wait(_gcc(["-std=c99", "driver.c", "scalar.o", "simd.o", "-o", "driver",
                *(f"-l{lib}" for lib in t.libraries)], work))
    count = 333
    with open(work / "in.bin", "wb") as f:
        for fn in simd.functions:
            for x in inputs(ks, fn.program, count, 1):
                f.write(x.tobytes())
    run = subprocess.run(["./driver", str(count), "in.bin", "out.bin"], cwd=work,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    raw, at = np.fromfile(work / "out.bin"), 0
    for fn in simd.functions:
        for spec in fn.outputs:
            n = count * spec.size
            s, v = raw[at:at + n].reshape(count, -1), raw[at + n:at + 2 * n].reshape(count, -1)
            assert worst_error(s, v) <= TOLERANCE["double"], f"{name} {fn.name}"
            at += 2 * n


@pytest.mark.parametrize("width", [2, 4, 8, 16])
def test_transpose_network(width):
    """The shuffle stages, applied to rows of distinct numbers as GCC's __builtin_shuffle
    defines them (index < W: lane of a, else lane - W of b), give numpy's transpose."""
    from symgen.backends.simd.transpose import transpose_steps

    a = np.arange(width * width).reshape(width, width)
    rows = [list(r) for r in a]
    for i, j, lo, hi in transpose_steps(width):
        both = rows[i] + rows[j]
        rows[i], rows[j] = [both[x] for x in lo], [both[x] for x in hi]
    assert (np.array(rows) == a.T).all()


def test_store_calls_cover_every_element_once_or_again_equal():
    """Block stores write every output element, each block W consecutive elements (the last
    overlapping), and outputs shorter than W lane by lane."""
    from symgen.backends.simd.transpose import store_calls

    for width, n in [(4, 81), (4, 8), (8, 9), (8, 3), (2, 1)]:
        values = [f"v{i}" for i in range(n)]
        calls = store_calls(width, "M", values, "B", "L")
        written: dict[int, str] = {}
        for c in calls:
            name, args = c.split("(", 1)
            parts = [p.strip() for p in args.rstrip(");").split(",")]
            start = int(parts[0].split("+")[1])
            assert int(parts[1]) == n
            assert len(parts) - 2 == (width if name == "B" else 1)
            for off, v in enumerate(parts[2:]):
                assert written.setdefault(start + off, v) == v
        assert written == dict(enumerate(values))


def test_width_must_be_a_power_of_two():
    with pytest.raises(symgen.SymgenError):
        emit_simd(kernel_set("param_arm"), "arm", width=3)
