"""Code size and worst-case stack use of the Panda's kernels on a Cortex-M4 (float build),
written to docs/embedded.md.

    python bench/embedded.py [--out docs/embedded.md]

Compiles the generated ``panda.c`` (float) with Debian's arm-none-eabi-gcc and the flags the
tests use, plus ``-ffunction-sections`` (one section per function, so that
``arm-none-eabi-size -A`` gives each function's code size) and ``-fstack-usage`` (the
compiler's own worst-case stack figure per function, in the ``.su`` file).
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import symgen  # noqa: E402
from symgen.robots import robot_urdf  # noqa: E402

FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-Os",
         "-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Werror"]


def measure(work: Path) -> tuple[str, list[dict]]:
    model = symgen.load(robot_urdf("panda"))
    ks = symgen.generate(model)
    ks.write(work, real="float", prefix="panda")
    obj = work / "panda.o"
    subprocess.run(["arm-none-eabi-gcc", *FLAGS, "-ffunction-sections", "-fstack-usage",
                    "-c", str(work / "panda.c"), "-o", str(obj)], check=True, cwd=work)
    version = subprocess.run(["arm-none-eabi-gcc", "--version"], capture_output=True,
                             text=True, check=True).stdout.splitlines()[0]
    sizes = {}
    for line in subprocess.run(["arm-none-eabi-size", "-A", str(obj)], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        parts = line.split()
        if parts and parts[0].startswith(".text."):
            sizes[parts[0][len(".text."):]] = int(parts[1])
    stacks = {}
    for line in (work / "panda.su").read_text().splitlines():
        location, size, kind = line.split("\t")
        stacks[location.rsplit(":", 1)[-1]] = (int(size), kind)
    rows = []
    counts = ks.op_counts()
    for name in ks.programs:
        fn = f"panda_{name}"
        rows.append({"kernel": name, "ops": counts[name]["total"], "code": sizes[fn],
                     "stack": stacks[fn][0], "kind": stacks[fn][1],
                     "batch_code": sizes[fn + "_batch"]})
    return version, rows


def render(version: str, rows: list[dict]) -> str:
    lines = [
        "# Embedded build (Cortex-M4)",
        "",
        "<!-- Written by bench/embedded.py; re-run it to refresh. -->",
        "",
        "The generated C compiles for a Cortex-M4 with an FPU without a warning (tested in",
        "`tests/test_c_build.py` and `tests/test_generated.py`). This page gives the code size",
        "and the worst-case stack use of each kernel of the Franka Panda (nv = 9), float build:",
        "",
        "```sh",
        "arm-none-eabi-gcc " + " ".join(FLAGS) + " -ffunction-sections -fstack-usage -c panda.c",
        "```",
        "",
        f"Compiler: {version}. Measured {datetime.date.today().isoformat()}.",
        "Code size is the function's `.text` section (`arm-none-eabi-size -A`); stack is",
        "`-fstack-usage`'s figure (`static`: exact, no dynamic allocation). The kernels allocate",
        "nothing and call only `sinf`/`cosf`/`sqrtf` (newlib), whose size is not included.",
        "A kernel of a few bytes has the same code as another one (two frames at the same",
        "point of the same body) and the compiler made it a jump to that one.",
        "",
        "| kernel | operations | code (bytes) | stack (bytes) | batch loop code (bytes) |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| `{r['kernel']}` | {r['ops']:,} | {r['code']:,} | {r['stack']} "
                     f"({r['kind']}) | {r['batch_code']} |")
    total = sum(r["code"] + r["batch_code"] for r in rows)
    lines += ["", f"All kernels together: {total:,} bytes of code.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "embedded.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        version, rows = measure(Path(tmp))
    args.out.write_text(render(version, rows))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
