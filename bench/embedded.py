"""Embedded build: code size and worst-case stack of each kernel on a Cortex-M4 (float), and an
estimate of cycles per call from the op counts.

Compiles the generated C (float) with arm-none-eabi-gcc and the flags the tests use, plus
``-ffunction-sections`` (one section per function, so ``arm-none-eabi-size -A`` gives each
function's code size) and ``-fstack-usage`` (the compiler's worst-case stack per function).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import symgen

from .common import table, tool_version

FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-Os",
         "-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Werror"]
#: Assumed Cortex-M4F cycles per operation (ARM DDI 0439 / Cortex-M4 TRM, FPv4-SP): VADD.F32,
#: VMUL.F32 1 cycle each, VDIV.F32 and VSQRT.F32 14; sinf/cosf are newlib software routines,
#: taken as ~100 cycles each; an ``other`` (atan2 or a selection) as 10.
CYCLES_PER_OP = {"add": 1, "mul": 1, "div": 14, "sqrt": 14, "trig": 100, "other": 10}
#: Loads and stores: every operation's operands and results come mostly from the stack
#: (VLDR/VSTR take 2 cycles; the FPU has 32 single registers), taken as one extra cycle per
#: add or mul on average (high estimate = arithmetic cycles x this factor).
MEMORY_FACTOR = 2.0
#: Clock for the µs column (an STM32F4-class part).
CLOCK_MHZ = 168


def unavailable() -> str | None:
    """Why the Cortex-M4 build cannot run here, or None."""
    for tool in ("arm-none-eabi-gcc", "arm-none-eabi-size"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: gcc-arm-none-eabi, libnewlib-arm-none-eabi)"
    return None


def estimated_cycles(ops: dict[str, int]) -> tuple[int, int]:
    """(low, high) cycles per call: the FPU's issue cost of the operations, and that with the
    load/store traffic added (see CYCLES_PER_OP, MEMORY_FACTOR)."""
    low = sum(CYCLES_PER_OP[k] * ops.get(k, 0) for k in CYCLES_PER_OP)
    arith = ops.get("add", 0) + ops.get("mul", 0)
    return low, int(low + (MEMORY_FACTOR - 1.0) * arith)


def run(label: str, model: symgen.Model, log: Callable[[str], None]) -> dict[str, Any]:
    """Code size, stack and estimated cycles of every default kernel of ``model``."""
    ks = symgen.generate(model)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        symgen.write_c(ks, work, real="float", prefix="k")
        subprocess.run(["arm-none-eabi-gcc", *FLAGS, "-ffunction-sections", "-fstack-usage",
                        "-c", "k.c", "-o", "k.o"], check=True, cwd=work)
        size = subprocess.run(["arm-none-eabi-size", "-A", "k.o"], capture_output=True,
                              text=True, check=True, cwd=work).stdout
        sizes = {p[0][len(".text."):]: int(p[1]) for p in map(str.split, size.splitlines())
                 if p and p[0].startswith(".text.")}
        stacks = {}
        for line in (work / "k.su").read_text().splitlines():
            location, nbytes, kind = line.split("\t")
            stacks[location.rsplit(":", 1)[-1]] = (int(nbytes), kind)
    rows = []
    for name, ops in ks.op_counts().items():
        low, high = estimated_cycles(ops)
        fn = f"k_{name}"
        rows.append({"kernel": name, "ops": ops, "code": sizes[fn], "stack": stacks[fn][0],
                     "stack_kind": stacks[fn][1], "batch_code": sizes[fn + "_batch"],
                     "cycles_low": low, "cycles_high": high})
    log(f"  {label}: {len(rows)} kernels, {sum(r['code'] for r in rows):,} bytes of code")
    return {"model": label, "nv": model.nv, "compiler": tool_version(["arm-none-eabi-gcc"]),
            "flags": FLAGS, "cycles_per_op": CYCLES_PER_OP, "memory_factor": MEMORY_FACTOR,
            "clock_mhz": CLOCK_MHZ, "kernels": rows}


def section(res: dict[str, Any]) -> str:
    """Markdown: per-kernel code size, stack and estimated cycles."""
    costs = ", ".join(f"{k} {c}" for k, c in res["cycles_per_op"].items())
    mhz = res["clock_mhz"]
    rows = [[f"`{r['kernel']}`", f"{r['ops']['total']:,}", f"{r['code']:,}",
             f"{r['stack']} ({r['stack_kind']})",
             f"{r['cycles_low']:,}–{r['cycles_high']:,}",
             f"{r['cycles_low'] / mhz:.1f}–{r['cycles_high'] / mhz:.1f}"]
            for r in res["kernels"]]
    total = sum(r["code"] + r["batch_code"] for r in res["kernels"])
    return "\n".join([
        f"{res['model']} (nv = {res['nv']}), float build, compiled with {res['compiler']}:",
        "",
        "```sh",
        "arm-none-eabi-gcc " + " ".join(res["flags"]) + " -ffunction-sections -fstack-usage "
        "-c k.c",
        "```",
        "",
        "Code size is the function's `.text` section (`arm-none-eabi-size -A`), stack is "
        "`-fstack-usage`'s figure (`static`: exact; the kernels allocate nothing). `sinf`, "
        "`cosf`, `sqrtf` (newlib) are not included.",
        "",
        "**Cycles are an estimate from the op counts, not a measurement** (no hardware here). "
        f"Assumed cycles per operation: {costs} (FPv4-SP: single-cycle VADD/VMUL, 14-cycle "
        "VDIV/VSQRT; newlib's `sinf`/`cosf` taken as ~100). The low figure is the arithmetic "
        f"alone; the high one adds {res['memory_factor'] - 1:.0f} cycle per add/mul for the "
        "loads and stores of operands kept on the stack. "
        f"µs at {mhz} MHz (an STM32F4-class part).",
        "",
        table(["kernel", "operations", "code (bytes)", "stack (bytes)", "cycles (est.)",
               f"µs at {mhz} MHz (est.)"], rows),
        "",
        f"All kernels with their batch loops: {total:,} bytes of code.",
    ])
