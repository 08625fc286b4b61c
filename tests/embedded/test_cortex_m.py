"""The generated kernels on an emulated Cortex-M: built bare-metal with the firmware example's
startup code, linker script and semihosting (``examples/embedded``), run under
``qemu-system-arm`` on an MPS2 board with a Cortex-M4F (``mps2-an386``: float; double in
software) and a Cortex-M7 (``mps2-an500``: float and double in hardware).

Every output's bit pattern must equal the host build's (the same C99 without FMA contraction,
and the kernels' own sine and cosine instead of two different libms: IEEE arithmetic gives
the same bits), and the host build is checked against the independent numpy reference
within the documented float and double bounds (``symgen.apps.verify``). Inputs travel as
hexadecimal float literals and outputs as hexadecimal words, so nothing is rounded on the
way (the harness and the build are the embedded benchmark's: ``bench/embedded.py``).
Skipped, with the reason, without the cross compiler, newlib or qemu.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from paths import EXAMPLES, ROOT

import symgen
from bench import embedded
from symgen.apps.verify.checks import check_compiled, consistent_states, random_states
from symgen.backends import microcontrollers
from symgen.build.compiler import compile_kernels

FIRMWARE = ROOT / "examples" / "embedded"
#: The cores (their compiler flags and the qemu board that has them).
CORES = {short: microcontrollers.core(f"cortex-{short}") for short in ("m4", "m7")}
#: The runs: (core, real type).
RUNS = [("m4", "float"), ("m7", "float"), ("m7", "double"), ("m4", "double")]
STATES = 3
PANDA_KERNELS = ["inverse_dynamics", "mass_matrix", "forward_dynamics", "mass_matrix_inverse",
                 "linearization"]
LOOP_KERNELS = ["forward_dynamics", "constrained_forward_dynamics"]


pytestmark = pytest.mark.skipif(embedded.unavailable() is not None,
                                reason=str(embedded.unavailable()))


def run_on_target(ks: symgen.KernelSet, states: list[dict], core: str, real: str,
                  work: Path) -> dict[tuple[str, int, str], np.ndarray]:
    """Build the kernels and the harness for ``core`` and run them under qemu: every output,
    by (kernel, state, output name). No heap may be linked."""
    image = embedded.build_firmware(ks, embedded.harness(ks, list(ks.programs), states, real),
                                    CORES[core], real, work)
    symbols = subprocess.run(["arm-none-eabi-nm", str(image)], capture_output=True,
                             text=True, check=True).stdout
    assert not any(s in symbols for s in (" malloc", " _sbrk", " free")), "a heap is linked"
    return embedded.read_outputs(embedded.run_qemu(CORES[core], image), real)


def check_model(ks: symgen.KernelSet, tmp_path: Path) -> None:
    drawn = random_states(ks, STATES, seed=7)
    looped = consistent_states(ks, drawn) if ks.model.loop_joints else drawn
    states = looped if ks.model.loop_joints else drawn
    # no FMA contraction on the host either, whatever $CC is (clang contracts by default), so
    # that both sides round the same operations
    host = {real: compile_kernels(ks, real, flags=("-O2", "-std=c99", "-ffp-contract=off"),
                                  vectorize=None) for real in ("double", "float")}
    # the host builds against the independent reference (and float against double)
    failed = [c for c in check_compiled(host["double"], looped, host["float"]) if not c.ok]
    assert not failed, failed
    for core, real in RUNS:
        got = run_on_target(ks, states, core, real, tmp_path / f"{core}_{real}")
        for name, program in ks.programs.items():
            outputs = [s.name for s in program.output_specs]
            for k, state in enumerate(states):
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
