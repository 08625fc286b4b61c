"""Main job: generate a real robot's C kernels, compile them and verify them.

    python examples/panda_kernels.py [ROBOT] [--out DIR] [--states N] [--seed S] [--real float]

ROBOT is one of symgen.io.robots.KNOWN_ROBOTS (default: panda), loaded from the PyPI package
example-robot-data. The script derives every default kernel, writes ``<robot>.h`` and
``<robot>.c`` to DIR (default ``build/<robot>``), compiles them with cffi, and compares the
compiled kernels on random states with symgen's numpy reference and Pinocchio (and, with
``--real float``, the float build with the double one). Exits with status 1 when an error
exceeds its tolerance (1e-10 double, 1e-4 float vs double).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import symgen
from symgen.apps.verify import check_compiled, random_states
from symgen.io.robots import KNOWN_ROBOTS, robot_urdf

FLOATING = {"solo12", "talos"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("robot", nargs="?", default="panda", choices=sorted(KNOWN_ROBOTS))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--states", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--real", choices=("double", "float"), default="double")
    args = parser.parse_args()

    model = symgen.load(robot_urdf(args.robot), floating_base=args.robot in FLOATING)
    start = time.perf_counter()
    ks = symgen.generate(model)
    derived = time.perf_counter() - start
    out = args.out or Path("build") / args.robot
    paths = symgen.write_c(ks, out, real=args.real)
    total = sum(c["total"] for c in ks.op_counts().values())
    print(f"{model.name}: nq = {model.nq}, nv = {model.nv}; {len(ks.programs)} kernels, "
          f"{total} operations, derived in {derived:.2f} s")
    print("wrote " + ", ".join(str(p) for p in paths))
    start = time.perf_counter()
    lib = symgen.compile_kernels(ks, "double")
    low = symgen.compile_kernels(ks, "float") if args.real == "float" else None
    print(f"compiled in {time.perf_counter() - start:.1f} s (cffi, cached)")
    checks = check_compiled(lib, random_states(ks, args.states, args.seed), low)
    width = max(len(c.program) for c in checks)
    for c in checks:
        print(f"  {c.program.ljust(width)}  {c.peer:<15} {c.error:9.2e}  "
              f"(tolerance {c.tolerance:.0e}) {'ok' if c.ok else 'FAIL'}")
    failed = [c for c in checks if not c.ok]
    if failed:
        print(f"{len(failed)} of {len(checks)} checks FAILED")
        return 1
    print(f"all {len(checks)} checks passed on {args.states} random states")
    return 0


if __name__ == "__main__":
    sys.exit(main())
