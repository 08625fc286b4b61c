"""The generated kernels on an emulated Cortex-M: built bare-metal with the firmware example's
startup code, linker script and semihosting (``examples/embedded``), run under
``qemu-system-arm`` on an MPS2 board with a Cortex-M4F (``mps2-an386``: float; double in
software) and a Cortex-M7 (``mps2-an500``: float and double in hardware).

Every output's bit pattern must equal the host build's (the same C99 without FMA contraction,
and the kernels' own sine and cosine instead of two different libms: IEEE arithmetic gives
the same bits), and the host build is checked against the independent numpy reference
within the documented float and double bounds (``symgen.apps.verify``). Inputs travel as
hexadecimal float literals and outputs as hexadecimal words, so nothing is rounded on the
way. Skipped, with the reason, without the cross compiler, newlib or qemu.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from paths import EXAMPLES, ROOT

import symgen
from symgen.apps.verify.checks import check_compiled, consistent_states, random_states
from symgen.backends import microcontrollers
from symgen.build.compiler import compile_kernels

FIRMWARE = ROOT / "examples" / "embedded"
#: The cores (their compiler flags and the qemu board that has them).
CORES = {short: microcontrollers.core(f"cortex-{short}") for short in ("m4", "m7")}
FLAGS = ["-Os", "-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Werror",
         "-ffunction-sections", "-fdata-sections"]
#: The runs: (core, real type).
RUNS = [("m4", "float"), ("m7", "float"), ("m7", "double"), ("m4", "double")]
STATES = 3
PANDA_KERNELS = ["inverse_dynamics", "mass_matrix", "forward_dynamics", "mass_matrix_inverse",
                 "linearization"]
LOOP_KERNELS = ["forward_dynamics", "constrained_forward_dynamics"]


def missing_tools() -> str | None:
    """Why the emulated runs cannot happen here, or None."""
    for tool, package in (("arm-none-eabi-gcc", "gcc-arm-none-eabi"),
                          ("qemu-system-arm", "qemu-system-arm")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: apt install {package})"
    libm = subprocess.run(["arm-none-eabi-gcc", *CORES["m4"].flags, "-print-file-name=libm.a"],
                          capture_output=True, text=True).stdout
    if not Path(libm.strip()).is_file():
        return "newlib is not installed (Debian: apt install libnewlib-arm-none-eabi)"
    return None


pytestmark = pytest.mark.skipif(missing_tools() is not None, reason=str(missing_tools()))


def c_literal(value: float, real: str) -> str:
    """``value`` as an exact C literal of ``real`` (hexadecimal)."""
    text = float(np.float32(value)).hex() if real == "float" else float(value).hex()
    return text + ("f" if real == "float" else "")


def harness(ks: symgen.KernelSet, states: dict[str, list[dict]], real: str) -> str:
    """The test's main(): each kernel on each of its states, every output printed as
    ``<kernel> <state> <output>: <hex words>``."""
    lines = ['#include <stdint.h>', '#include <string.h>', '#include "k.h"',
             '#include "semihosting.h"', "",
             "static void put_words(const k_real *x, int n)", "{",
             '    static const char digits[] = "0123456789abcdef";',
             "    char text[10];", "    int i, j, w;", "    for (i = 0; i < n; ++i) {",
             "        uint32_t words[2] = {0u, 0u};",
             "        memcpy(words, &x[i], sizeof x[i]);",
             "        for (w = 0; w < (int)(sizeof x[i] / 4u); ++w) {  /* low word first */",
             "            text[0] = ' ';",
             "            for (j = 0; j < 8; ++j) {",
             "                text[8 - j] = digits[(words[w] >> (4 * j)) & 0xFu];", "            }",
             "            text[9] = '\\0';", "            semihosting_write(text);", "        }",
             "    }", '    semihosting_write("\\n");', "}", "", "int main(void)", "{"]
    body = []
    for name, program in ks.programs.items():
        for k, state in enumerate(states[name]):
            args = []
            for spec in program.inputs:
                values = np.asarray(state[spec.name], float).reshape(-1)
                lines.append(f"    static const k_real {name}_{k}_{spec.name}[{spec.size}] = "
                             f"{{{', '.join(c_literal(x, real) for x in values)}}};")
                args.append(f"{name}_{k}_{spec.name}")
            for spec in program.output_specs:
                lines.append(f"    static k_real {name}_{k}_{spec.name}[{spec.size}];")
                args.append(f"{name}_{k}_{spec.name}")
            body.append(f"    k_{name}({', '.join(args)});")
            for spec in program.output_specs:
                body.append(f'    semihosting_write("{name} {k} {spec.name}:");')
                body.append(f"    put_words({name}_{k}_{spec.name}, {spec.size});")
    return "\n".join(lines + body + ["    return 0;", "}", ""])


def run_on_target(ks: symgen.KernelSet, states: dict[str, list[dict]], core: str, real: str,
                  work: Path) -> dict[tuple[str, int, str], np.ndarray]:
    """Build the kernels and the harness for ``core`` and run them under qemu: every output,
    by (kernel, state, output name)."""
    work.mkdir(parents=True, exist_ok=True)
    symgen.write_c(ks, work, real=real, prefix="k")
    (work / "main.c").write_text(harness(ks, states, real))
    cpu, machine = CORES[core].flags, CORES[core].qemu_machine
    sources = [work / "main.c", work / "k.c", FIRMWARE / "startup.c",
               FIRMWARE / "semihosting.c"]
    build = subprocess.run(
        ["arm-none-eabi-gcc", *cpu, *FLAGS, f"-I{FIRMWARE}", f"-I{work}", "-nostartfiles",
         "-Wl,--gc-sections", "-T", str(FIRMWARE / "mps2.ld"), "-o", str(work / "k.elf"),
         *map(str, sources), "-lm", "-lc", "-lgcc"], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    symbols = subprocess.run(["arm-none-eabi-nm", str(work / "k.elf")], capture_output=True,
                             text=True, check=True).stdout
    assert not any(s in symbols for s in (" malloc", " _sbrk", " free")), "a heap is linked"
    done = subprocess.run(
        ["qemu-system-arm", "-M", machine, "-nographic", "-monitor", "none", "-serial", "none",
         "-icount", "shift=0", "-semihosting-config", "enable=on,target=native", "-kernel",
         str(work / "k.elf")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    dtype = np.float32 if real == "float" else np.float64
    outputs = {}
    # semihosting's console is qemu's standard error with target=native
    for line in (done.stdout + done.stderr).splitlines():
        if ":" not in line:
            continue
        label, words = line.split(":")
        name, k, output = label.split()
        raw = np.array([int(w, 16) for w in words.split()], dtype=np.uint32)
        outputs[name, int(k), output] = raw.view(dtype)
    return outputs


def check_model(ks: symgen.KernelSet, tmp_path: Path) -> None:
    drawn = random_states(ks, STATES, seed=7)
    looped = consistent_states(ks, drawn) if ks.model.loop_joints else drawn
    states = {name: (looped if ks.model.loop_joints else drawn) for name in ks.programs}
    host = {real: compile_kernels(ks, real, vectorize=None) for real in ("double", "float")}
    # the host builds against the independent reference (and float against double)
    failed = [c for c in check_compiled(host["double"], looped, host["float"]) if not c.ok]
    assert not failed, failed
    for core, real in RUNS:
        got = run_on_target(ks, states, core, real, tmp_path / f"{core}_{real}")
        for name, program in ks.programs.items():
            outputs = [s.name for s in program.output_specs]
            for k, state in enumerate(states[name]):
                inputs = {s.name: state[s.name] for s in program.inputs}
                if real == "float":
                    inputs = {n: np.asarray(np.asarray(x, float).astype(np.float32), float)
                              for n, x in inputs.items()}
                expected = host[real][name](**inputs)
                expected = dict(zip(outputs, expected if len(outputs) > 1 else (expected,),
                                    strict=True))
                for output in outputs:
                    want = np.asarray(expected[output]).reshape(-1)
                    have = got[name, k, output]
                    assert have.tobytes() == want.astype(have.dtype).tobytes(), (
                        f"{core} {real} {name} state {k} {output}: "
                        f"{np.max(np.abs(have - want))} from the host build")


def test_panda_kernels_on_cortex_m4_and_m7(tmp_path: Path) -> None:
    ks = symgen.generate(symgen.load("panda"), PANDA_KERNELS)
    check_model(ks, tmp_path)


def test_closed_loop_kernels_on_cortex_m4_and_m7(tmp_path: Path) -> None:
    ks = symgen.generate(symgen.load(EXAMPLES / "five_bar.yaml"), LOOP_KERNELS)
    check_model(ks, tmp_path)


@pytest.mark.parametrize(("core", "real"), [("m4", "float"), ("m7", "double")])
def test_firmware_example_builds_with_make_and_runs(core: str, real: str, tmp_path: Path
                                                    ) -> None:
    """``examples/embedded`` as a user runs it (``make run``), its kernels generated first
    as its Makefile would: the checks pass, and the stack each call used, measured by
    painting, is at most what the compiler reports (``-fstack-usage``) plus the 8 bytes of a
    call's saved registers."""
    folder = tmp_path / "embedded"
    shutil.copytree(FIRMWARE, folder, ignore=shutil.ignore_patterns("generated*", "*.elf"))
    ks = symgen.generate(symgen.load("panda"),
                         ["inverse_dynamics", "mass_matrix", "forward_dynamics"])
    symgen.write_c(ks, folder / "generated", real=real, prefix="robot")
    done = subprocess.run(["make", "run", f"CORE={core}", f"REAL={real}"], cwd=folder,
                          capture_output=True, text=True, timeout=300)
    text = done.stdout + done.stderr
    assert done.returncode == 0, text[-3000:]
    assert "check: ID(FD(tau)) = tau, FD(ID(a)) = a, M = M^T: ok" in text
    reported = {}
    for su in folder.glob("*.su"):
        for line in su.read_text().splitlines():
            where, size, _kind = line.split("\t")
            reported[where.rsplit(":", 1)[-1]] = int(size)
    for name in ("inverse_dynamics", "mass_matrix", "forward_dynamics"):
        line = next(x for x in text.splitlines() if x.startswith(f"{name}:"))
        measured = int(line.split(",")[1].split()[0])
        assert 0 < measured <= reported[f"robot_{name}"] + 8, line
