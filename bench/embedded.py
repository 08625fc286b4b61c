"""Embedded: the kernels run on an emulated Cortex-M4F and Cortex-M7, with their executed
instructions counted, where they go (the kernel itself, libm, libgcc's software floating
point), their code size and their stack (the compiler's static figure and the high-water
mark measured on the target).

Each build (a model's kernels in one real type for one core, :mod:`symgen.backends
.microcontrollers`) is linked with the firmware example's startup code, linker script and
semihosting (``examples/embedded``) and a harness that calls every kernel once at a random
state (seed 0), a marker call between kernels. It runs under ``qemu-system-arm`` with
``-singlestep -d exec,nochain``: qemu logs every executed instruction's address and function,
so the counts are exact and deterministic. The harness paints the stack before each call and
reports the deepest word overwritten.

Cycles are shown for the single-issue Cortex-M4 only, as an estimate from the executed
instruction mix under a documented per-instruction model (:data:`M4_CYCLES`) that assumes
zero-wait-state memory; the instruction count is its lower bound (every instruction takes at
least one cycle). The dual-issue Cortex-M7 can run faster than one instruction per cycle, so
it gets instruction counts only.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import symgen
from symgen.apps.verify.checks import random_states, relative_error
from symgen.backends.microcontrollers import CORES, Core
from symgen.build.compiler import compile_kernels

from .common import table, tool_version

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "examples" / "embedded"
#: Compiler flags beside each core's target flags (those of the tests and the example).
FLAGS = ("-Os", "-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Werror",
         "-ffunction-sections", "-fdata-sections", "-fstack-usage")
KERNELS = ("inverse_dynamics", "mass_matrix", "forward_dynamics", "mass_matrix_inverse",
           "linearization")
#: The builds: (core, real type, kernels). Double on the M4 is software floating point: shown
#: for the three basic kernels, as the cost of choosing it there.
BUILDS = (("cortex-m4", "float", KERNELS), ("cortex-m7", "float", KERNELS),
          ("cortex-m7", "double", KERNELS),
          ("cortex-m4", "double", ("inverse_dynamics", "mass_matrix", "forward_dynamics")))
#: The models of the full run (example-robot-data names).
MODELS = ("panda", "ur5")
#: Clock for the µs column (an STM32F4-class Cortex-M4 part).
CLOCK_MHZ = 168

#: Cortex-M4 cycles per executed instruction, by class (Arm Cortex-M4 Technical Reference
#: Manual, ARM DDI 0439B, tables 3-1 and 7-1), with zero-wait-state memory and no
#: pipelining credit: loads and stores 2, load/store multiple and push/pop 1 + registers,
#: branches 1 + 2 (the pipeline refill, taken or not), VMLA/VMLS/VFMA-family 3, VDIV and
#: VSQRT 14, SDIV/UDIV 12 (their worst case), every other instruction 1.
M4_CYCLES = {"load_store": 2, "branch": 3, "fp_multiply_accumulate": 3, "fp_divide_sqrt": 14,
             "integer_divide": 12, "other": 1}
_MULTIPLE = re.compile(r"^(v?ldm|v?stm|v?push|v?pop)")
_FMA = re.compile(r"^v(n?ml[as]|n?fm[as])")


def instruction_class(mnemonic: str) -> str:
    """The :data:`M4_CYCLES` class of a Thumb-2/FPv4 mnemonic (as objdump prints it)."""
    m = mnemonic.split(".")[0].lower()
    if _MULTIPLE.match(m):
        return "multiple"
    if m.startswith(("ldr", "str", "vldr", "vstr", "ldrex", "strex")):
        return "load_store"
    if m in ("b", "bl", "blx", "bx", "cbz", "cbnz", "tbb", "tbh") or re.match(
            r"^b(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)$", m):
        return "branch"
    if _FMA.match(m):
        return "fp_multiply_accumulate"
    if m in ("vdiv", "vsqrt"):
        return "fp_divide_sqrt"
    if m in ("sdiv", "udiv"):
        return "integer_divide"
    return "other"


def register_count(operands: str) -> int:
    """Registers in a register list ``{r4, r5, lr}`` or ``{d8-d15}`` (objdump's syntax)."""
    inside = operands[operands.find("{") + 1:operands.find("}")]
    count = 0
    for part in filter(None, (p.strip() for p in inside.split(","))):
        if "-" in part:
            first, last = (int(re.sub(r"\D", "", x)) for x in part.split("-"))
            count += last - first + 1
        else:
            count += 1
    return max(count, 1)


def unavailable() -> str | None:
    """Why the emulated builds cannot run here, or None."""
    for tool, package in (("arm-none-eabi-gcc", "gcc-arm-none-eabi"),
                          ("arm-none-eabi-objdump", "binutils-arm-none-eabi"),
                          ("qemu-system-arm", "qemu-system-arm")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: {package})"
    libm = subprocess.run(["arm-none-eabi-gcc", *CORES["cortex-m4"].flags,
                           "-print-file-name=libm.a"], capture_output=True, text=True).stdout
    if not Path(libm.strip()).is_file():
        return "newlib is not installed (Debian: libnewlib-arm-none-eabi)"
    return None


# ------------------------------------------------------------------------ the firmware
def c_literal(value: float, real: str) -> str:
    """``value`` as an exact C literal of ``real`` (hexadecimal floating point)."""
    if real == "float":
        return float(np.float32(value)).hex() + "f"
    return float(value).hex()


def input_arrays(ks: symgen.KernelSet, name: str, state: Mapping[str, Any], real: str,
                 label: str) -> tuple[list[str], list[str]]:
    """The static arrays of kernel ``name``'s inputs at ``state`` and of its outputs, and the
    argument names in order (``label`` makes the names unique)."""
    lines, args = [], []
    program = ks[name]
    for spec in program.inputs:
        values = np.asarray(state[spec.name], float).reshape(-1)
        lines.append(f"static const k_real {label}_{spec.name}[{spec.size}] = "
                     f"{{{', '.join(c_literal(x, real) for x in values)}}};")
        args.append(f"{label}_{spec.name}")
    for spec in program.output_specs:
        lines.append(f"static k_real {label}_{spec.name}[{spec.size}];")
        args.append(f"{label}_{spec.name}")
    return lines, args


_HARNESS_HEAD = """\
#include <stdint.h>
#include <string.h>
#include "k.h"
#include "semihosting.h"

extern uint32_t __stack_bottom__;
#define PAINT 0x5AC35AC3u
#define READ_SP(sp) __asm__ volatile("mov %0, sp" : "=r"(sp))

/* the marker between kernels: the trace's boundaries */
void symgen_bench_mark(void) __attribute__((noinline));
void symgen_bench_mark(void)
{
    __asm__ volatile("" ::: "memory");
}

static void put_words(const k_real *x, int n)
{
    static const char digits[] = "0123456789abcdef";
    char text[10];
    int i, j, w;
    for (i = 0; i < n; ++i) {
        uint32_t words[2] = {0u, 0u};
        memcpy(words, &x[i], sizeof x[i]);
        for (w = 0; w < (int)(sizeof x[i] / 4u); ++w) {
            text[0] = ' ';
            for (j = 0; j < 8; ++j) {
                text[8 - j] = digits[(words[w] >> (4 * j)) & 0xFu];
            }
            text[9] = '\\0';
            semihosting_write(text);
        }
    }
    semihosting_write("\\n");
}
"""


def harness(ks: symgen.KernelSet, names: Sequence[str], states: Sequence[Mapping[str, Any]],
            real: str) -> str:
    """main(): each kernel once at each of ``states`` (kernel by kernel), the stack painted
    before and scanned after each call (``stack <kernel> <state> <bytes>`` printed), a marker
    call before and after it; then every output (``out <kernel> <state> <output>: <hex
    words>``, :func:`read_outputs`)."""
    arrays, calls, prints = [], [], []
    for name in names:
        for k, state in enumerate(states):
            lines, args = input_arrays(ks, name, state, real, f"{name}_{k}")
            arrays += lines
            calls += [
                "    READ_SP(sp);",
                "    for (p = &__stack_bottom__; (uintptr_t)p < sp; ++p) *p = PAINT;",
                "    symgen_bench_mark();",
                f"    k_{name}({', '.join(args)});",
                "    symgen_bench_mark();",
                "    for (p = &__stack_bottom__; (uintptr_t)p < sp && *p == PAINT; ++p) {}",
                f'    semihosting_write("stack {name} {k} ");',
                "    semihosting_write_unsigned((uint32_t)(sp - (uintptr_t)p));",
                '    semihosting_write("\\n");',
            ]
            for spec in ks[name].output_specs:  # hexadecimal words, low word first
                prints += [f'    semihosting_write("out {name} {k} {spec.name}:");',
                           f"    put_words({name}_{k}_{spec.name}, {spec.size});"]
    return "\n".join([_HARNESS_HEAD, *arrays, "", "int main(void)", "{", "    uintptr_t sp;",
                      "    uint32_t *p;", *calls, *prints, "    return 0;", "}", ""])


def read_outputs(text: str, real: str) -> dict[tuple[str, int, str], np.ndarray]:
    """The outputs :func:`harness` printed, by (kernel, state, output), bit for bit."""
    dtype = np.float32 if real == "float" else np.float64
    return {(m.group(1), int(m.group(2)), m.group(3)):
            np.array([int(w, 16) for w in m.group(4).split()], dtype=np.uint32).view(dtype)
            for m in re.finditer(r"out (\w+) (\d+) (\w+):([ 0-9a-f]*)", text)}


def build_firmware(ks: symgen.KernelSet, main_source: str, core: Core, real: str,
                   work: Path) -> Path:
    """``ks`` in ``real`` (prefix ``k``) and ``main_source`` linked for ``core`` with the
    firmware example's startup code, linker script and semihosting; the image's path."""
    work.mkdir(parents=True, exist_ok=True)
    symgen.write_c(ks, work, real=real, prefix="k")
    (work / "main.c").write_text(main_source)
    sources = [work / "main.c", work / "k.c", FIRMWARE / "startup.c",
               FIRMWARE / "semihosting.c"]
    image = work / "k.elf"
    done = subprocess.run(
        ["arm-none-eabi-gcc", *core.flags, *FLAGS, f"-I{FIRMWARE}", f"-I{work}",
         "-nostartfiles", "-Wl,--gc-sections", "-T", str(FIRMWARE / "mps2.ld"), "-o",
         str(image), *map(str, sources), "-lm", "-lc", "-lgcc"],
        capture_output=True, text=True, cwd=work)
    if done.returncode != 0:
        raise RuntimeError(f"building the {core.name} firmware failed: {done.stderr[-3000:]}")
    return image


def run_qemu(core: Core, image: Path, trace: Path | None = None, timeout: float = 300.0
             ) -> str:
    """Run ``image`` on ``core``'s qemu board; its semihosting output. With ``trace``, qemu
    logs every executed instruction there (``-singlestep -d exec,nochain``)."""
    cmd = ["qemu-system-arm", "-M", core.qemu_machine, "-nographic", "-monitor", "none",
           "-serial", "none", "-semihosting-config", "enable=on,target=native"]
    if trace is not None:
        cmd += ["-singlestep", "-d", "exec,nochain", "-D", str(trace)]
    done = subprocess.run([*cmd, "-kernel", str(image)], capture_output=True, text=True,
                          timeout=timeout)
    output = done.stdout + done.stderr  # semihosting's console is qemu's standard error
    if done.returncode != 0:
        raise RuntimeError(f"the firmware failed on {core.qemu_machine}: {output[-2000:]}")
    return output


# ------------------------------------------------------------------------ the counts
#: libgcc's software floating point (the ARM EABI helpers and the generic soft-fp routines).
_SOFT_FLOAT = re.compile(r"^__(aeabi_\w+|(add|sub|mul|div|neg|cmp|eq|ne|lt|le|gt|ge|unord|fix|"
                         r"fixuns|float|floatun|extend|trunc)\w*[sd]f\w*)$")
_TRACE = re.compile(r"\[[0-9a-f]+/([0-9a-f]+)/[0-9a-f]+/[0-9a-f]+\]\s*(\S*)")


def disassembly(image: Path) -> dict[int, tuple[str, str]]:
    """Address → (mnemonic, operands) of every instruction of ``image``."""
    text = subprocess.run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", str(image)],
                          capture_output=True, text=True, check=True).stdout
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m and not m.group(2).startswith("."):
            out[int(m.group(1), 16)] = (m.group(2), m.group(3))
    return out


def kernel_functions(work: Path) -> set[str]:
    """The functions the generated source defines (kernels, parts, the trig helpers)."""
    text = subprocess.run(["arm-none-eabi-nm", str(work / "k.elf")], capture_output=True,
                          text=True, check=True).stdout
    source = (work / "k.c").read_text()
    return {parts[-1] for parts in map(str.split, text.splitlines())
            if len(parts) == 3 and parts[1] in "tT" and f"{parts[-1]}(" in source}


def symbols(image: Path) -> dict[str, tuple[int, int]]:
    """Function name → (address, size) in ``image``."""
    text = subprocess.run(["arm-none-eabi-nm", "-S", str(image)], capture_output=True,
                          text=True, check=True).stdout
    return {parts[3]: (int(parts[0], 16), int(parts[1], 16))
            for parts in map(str.split, text.splitlines())
            if len(parts) == 4 and parts[2] in "tT"}


def count_trace(trace: Path, image: Path, work: Path, names: Sequence[str]
                ) -> dict[str, dict[str, Any]]:
    """Per kernel (in call order, between entries of the marker function): executed
    instructions, those in the generated code, libm and libgcc's software floating point,
    and the M4 cycle estimate."""
    code = disassembly(image)
    own = kernel_functions(work)
    mark = symbols(image)["symgen_bench_mark"][0]
    segments: list[list[tuple[int, str]]] = []
    inside = False
    for line in trace.read_text().splitlines():
        m = _TRACE.search(line)
        if not m:
            continue
        pc, function = int(m.group(1), 16), m.group(2)
        if pc & ~1 == mark & ~1:  # the marker's entry: a kernel call starts or ends
            inside = not inside
            if inside:
                segments.append([])
        elif inside and function not in ("symgen_bench_mark", "main"):  # the call's tree
            segments[-1].append((pc, function))
    if len(segments) != len(names):
        raise RuntimeError(f"the trace has {len(segments)} kernel calls, expected {len(names)}")
    out = {}
    for name, executed in zip(names, segments, strict=True):
        where = Counter("generated" if f in own else "soft_float" if _SOFT_FLOAT.match(f)
                        else "libm" for _, f in executed)
        cycles = 0
        for pc, _ in executed:
            mnemonic, operands = code.get(pc & ~1, ("?", ""))
            kind = instruction_class(mnemonic)
            cycles += (1 + register_count(operands) if kind == "multiple"
                       else M4_CYCLES[kind])
        out[name] = {"instructions": len(executed), "generated": where["generated"],
                     "libm": where["libm"], "soft_float": where["soft_float"],
                     "m4_cycles": cycles}
    return out


def static_stacks(work: Path) -> dict[str, int]:
    """Each function's static stack (``-fstack-usage``'s ``.su`` files)."""
    stacks = {}
    for su in work.glob("*.su"):
        for line in su.read_text().splitlines():
            location, nbytes, _kind = line.split("\t")
            stacks[location.rsplit(":", 1)[-1]] = int(nbytes)
    return stacks


def measure(ks: symgen.KernelSet, core: Core, real: str, names: Sequence[str],
            state: Mapping[str, Any], work: Path,
            reference: Mapping[str, Mapping[str, np.ndarray]] | None = None
            ) -> list[dict[str, Any]]:
    """One build's rows: per kernel, the executed instructions and where they go, the M4
    cycle estimate, code size, static stack, the measured stack, and the outputs' relative
    error against ``reference`` (the host's double build at ``state``: kernel → output →
    value; max|x − x_ref| / max(1, max|x_ref|), symgen.apps.verify's measure)."""
    image = build_firmware(ks, harness(ks, names, [state], real), core, real, work)
    trace = work / "trace.log"
    output = run_qemu(core, image, trace)
    measured = {m.group(1): int(m.group(2))
                for m in re.finditer(r"stack (\w+) 0 (\d+)", output)}
    values = read_outputs(output, real)
    counts = count_trace(trace, image, work, names)
    trace.unlink()
    sizes, stacks = symbols(image), static_stacks(work)
    rows = []
    for name in names:
        error = 0.0
        if reference is not None:
            for spec in ks[name].output_specs:
                want = np.asarray(reference[name][spec.name], float).reshape(-1)
                error = max(error, relative_error(values[name, 0, spec.name], want))
        rows.append({"kernel": name, **counts[name], "code": sizes[f"k_{name}"][1],
                     "stack": stacks[f"k_{name}"], "stack_measured": measured[name],
                     "error_vs_double": error})
    return rows


def run(models: Sequence[tuple[str, symgen.Model]], log: Callable[[str], None]
        ) -> dict[str, Any]:
    """Every build of :data:`BUILDS` for each (label, model)."""
    results = []
    for label, model in models:
        ks = symgen.generate(model, list(KERNELS))
        state = random_states(ks, 1, seed=0)[0]
        host = compile_kernels(ks, "double", vectorize=None)
        reference = {}
        for name in KERNELS:
            got = host[name](**{s.name: state[s.name] for s in ks[name].inputs})
            outputs = [s.name for s in ks[name].output_specs]
            reference[name] = dict(zip(outputs, got if len(outputs) > 1 else (got,),
                                       strict=True))
        for core_name, real, names in BUILDS:
            core = CORES[core_name]
            with tempfile.TemporaryDirectory() as tmp:
                rows = measure(ks, core, real, names, state, Path(tmp), reference)
            results.append({"model": label, "nv": model.nv, "core": core_name,
                            "real": real, "kernels": rows})
            log(f"  {label} {core_name} {real}: " + ", ".join(
                f"{r['kernel']} {r['instructions']:,}" for r in rows))
    return {"compiler": tool_version(["arm-none-eabi-gcc"]),
            "qemu": tool_version(["qemu-system-arm"]), "flags": list(FLAGS),
            "cores": {c: list(CORES[c].flags) for c in CORES}, "cycles": M4_CYCLES,
            "clock_mhz": CLOCK_MHZ, "results": results}


# ------------------------------------------------------------------------ the page
def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "-"


def section(res: Mapping[str, Any]) -> str:
    """Markdown: per build, the executed instructions per call, their split, code, stack,
    and on the M4 the cycle estimate."""
    mhz = res["clock_mhz"]
    model_costs = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in res["cycles"].items())
    parts = [
        f"The kernels run on qemu's Arm MPS2 boards ({res['qemu']}): a Cortex-M4F "
        "(`mps2-an386`) and a Cortex-M7 (`mps2-an500`), built with "
        f"{res['compiler']} and the firmware example's startup code (`examples/embedded`), "
        f"`{' '.join(res['flags'])}` plus each core's target flags "
        + "; ".join(f"{c}: `{' '.join(f)}`" for c, f in res["cores"].items()) + ". "
        "Each kernel is called once at a random state (seed 0).",
        "",
        "**Instructions are measured**: qemu logs every executed instruction "
        "(`-singlestep -d exec,nochain`), so the counts are exact and the runs deterministic. "
        "*libm* and *soft float* are the shares executed in newlib's libm and in libgcc's "
        "software floating point; the rest is the generated code, which computes sine and "
        "cosine itself (one reduction per angle). *Stack* is `-fstack-usage`'s static figure "
        "and, after the slash, the high-water mark measured on the target (the stack painted "
        "before the call). Code is the function's size in the image (its batch loop apart).",
        "",
        "**Cycles (M4 only) are an estimate**, from the executed instruction mix under a "
        f"per-instruction model of the Cortex-M4 (ARM DDI 0439B, tables 3-1 and 7-1): "
        f"{model_costs} (multiple loads and stores: 1 + registers), assuming "
        "**zero-wait-state memory** (a flash part above ~30 MHz adds wait states its "
        "accelerator hides only in part). The instruction count is the estimate's lower "
        f"bound. µs at {mhz} MHz (an STM32F4-class part).",
    ]
    for build in res["results"]:
        m4 = build["core"] == "cortex-m4"
        header = ["kernel", "instructions", "libm", "soft float", "code (bytes)",
                  "stack (bytes, static / measured)", "error vs host double"]
        if m4 and build["real"] == "float":
            header += ["cycles (est.)", f"µs at {mhz} MHz (est.)"]
        rows = []
        for r in build["kernels"]:
            row = [f"`{r['kernel']}`", f"{r['instructions']:,}",
                   _share(r["libm"], r["instructions"]),
                   _share(r["soft_float"], r["instructions"]), f"{r['code']:,}",
                   f"{r['stack']} / {r['stack_measured']}", f"{r['error_vs_double']:.1e}"]
            if m4 and build["real"] == "float":
                row += [f"{r['m4_cycles']:,}", f"{r['m4_cycles'] / mhz:.1f}"]
            rows.append(row)
        parts += ["", f"**{build['model']}** (nv = {build['nv']}), {build['core']}, "
                  f"{build['real']}:", "", table(header, rows)]
    for build in res["results"]:  # the MPC question: A and B at 1 kHz on an M4
        lin = next((r for r in build["kernels"] if r["kernel"] == "linearization"), None)
        if lin is None or build["core"] != "cortex-m4" or build["real"] != "float":
            continue
        us = lin["m4_cycles"] / mhz
        verdict = "fits" if us < 1000.0 else "does not fit"
        parts += ["", f"{build['model']}'s `linearization` (A and B of ẋ = f(x, u) "
                  "linearised at a state, the input of a linear MPC) in float on the "
                  f"Cortex-M4: {lin['instructions']:,} instructions, "
                  f"{lin['m4_cycles']:,} cycles by the model, {us:.0f} µs at {mhz} MHz: it "
                  f"{verdict} a 1 kHz control loop ({us / 10:.0f} % of the period, with "
                  "zero-wait-state memory), within "
                  f"{lin['error_vs_double']:.0e} of the double-precision result."]
    return "\n".join(parts)
