"""Run ``symgen verify`` on every URDF shipped by example-robot-data and tally the outcomes.

Each file is verified in its own subprocess with a timeout, ``--jobs`` at a time (default:
the CPU count; the lines come in the files' order), and gets one line:
its verdict, its one-line error, a timeout, or CRASH (a traceback or an internal error; there
must be none). The tally at the end counts passes, failed checks, one-line errors grouped by
message, timeouts and crashes.

Floating base: a file gets ``--floating-base`` when example-robot-data's own loader for it
(``example_robot_data/robots_loader.py``, 6.x: ``free_flyer = True``) attaches it by a free
flyer: legged robots, humanoids, flying robots and PR2. Files without a loader follow their
robot: ``iris.urdf`` (quadrotor), ``romeo_small.urdf``/``romeo_laas_small.urdf`` (Romeo),
``talos_reduced_corrected.urdf`` (Talos). Every other file (arms, hands, Tiago, Baxter,
Alex's upper body, pendulums) keeps its fixed base.

Usage: ``python examples/verify_robot_data.py [--only SUBSTRING] [--timeout S] [--states N]
[--kernels A,B] [--jobs N]``; exit code 1 when a file crashed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from symgen.io.robots import all_urdfs, example_robot_data_dir

#: Files verified with --floating-base (paths inside example-robot-data's robots folder).
FLOATING = frozenset({
    "a1_description/urdf/a1.urdf",
    "alexander_description/urdf/alexander_v1.lowerBodyOnly.urdf",
    "anymal_b_simple_description/robots/anymal-kinova.urdf",
    "anymal_b_simple_description/robots/anymal.urdf",
    "anymal_c_simple_description/urdf/anymal.urdf",
    "b1_description/urdf/b1-z1.urdf",
    "b1_description/urdf/b1.urdf",
    "bolt_description/robots/bolt.urdf",
    "borinot_description/urdf/borinot_flying_arm_2.urdf",
    "centauro_description/urdf/centauro.urdf",
    "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    "g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf",
    "go1_description/urdf/go1.urdf",
    "go2_description/urdf/go2.urdf",
    "hector_description/robots/quadrotor_base.urdf",
    "hextilt_description/urdf/hextilt_flying_arm_5.urdf",
    "human_description/robots/human.urdf",
    "hyq_description/robots/hyq_no_sensors.urdf",
    "icub_description/robots/icub.urdf",
    "icub_description/robots/icub_reduced.urdf",
    "iris_description/robots/iris.urdf",
    "iris_description/robots/iris_simple.urdf",
    "laikago_description/urdf/laikago.urdf",
    "pr2_description/urdf/pr2.urdf",
    "quadruped_description/urdf/quadruped.urdf",
    "romeo_description/urdf/romeo.urdf",
    "romeo_description/urdf/romeo_laas_small.urdf",
    "romeo_description/urdf/romeo_small.urdf",
    "simple_humanoid_description/urdf/simple_humanoid.urdf",
    "simple_humanoid_description/urdf/simple_humanoid_classical.urdf",
    "so_arm_description/urdf/so100.urdf",
    "so_arm_description/urdf/so101.urdf",
    "solo_description/robots/solo.urdf",
    "solo_description/robots/solo12.urdf",
    "talos_data/robots/talos_full_v2.urdf",
    "talos_data/robots/talos_full_v2_box.urdf",
    "talos_data/robots/talos_reduced.urdf",
    "talos_data/robots/talos_reduced_box.urdf",
    "talos_data/robots/talos_reduced_corrected.urdf",
})

DEFAULT_KERNELS = "inverse_dynamics,mass_matrix,forward_dynamics"


def verify_one(path: Path, floating: bool, args: argparse.Namespace) -> tuple[str, str]:
    """(outcome, one line): outcome is pass, FAIL, error, timeout or CRASH."""
    command = [sys.executable, "-m", "symgen.apps.cli", "verify", str(path), "--kernels",
               args.kernels, "--states", str(args.states)]
    if floating:
        command.append("--floating-base")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return "timeout", f"no verdict within {args.timeout:g} s"
    out, err = done.stdout.strip(), done.stderr.strip()
    last_err = err.splitlines()[-1] if err else ""
    if "Traceback" in err or "internal error" in err or done.returncode not in (0, 1, 2):
        return "CRASH", f"exit {done.returncode}: {last_err}"
    notes = [line for line in out.splitlines() if line.startswith("Pinocchio model: ")]
    peer = ""
    if notes:
        peer = " [pinocchio: URDF]" if "own reading" in notes[0] else " [pinocchio: symgen's]"
    if done.returncode == 0:
        return "pass", out.splitlines()[-1] + peer
    if done.returncode == 1:
        failed = [line for line in out.splitlines() if line.rstrip().endswith("FAIL")]
        return "FAIL", f"{last_err}{peer} [{'; '.join(' '.join(f.split()) for f in failed[:3])}]"
    return "error", last_err.removeprefix("symgen: error: ")


def error_kind(message: str) -> str:
    """A one-line error without its file:line and element names, to group equal causes."""
    text = re.sub(r"\S+\.urdf(:\d+)?:?\s*", "", message)
    return re.sub(r"'[^']*'", "'…'", text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="verify only paths containing this")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per file")
    parser.add_argument("--states", type=int, default=5, help="random states per file")
    parser.add_argument("--kernels", default=DEFAULT_KERNELS, help="kernels to verify")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="files verified at a time (default: the CPU count)")
    args = parser.parse_args()
    root = example_robot_data_dir()
    outcomes: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    start = time.perf_counter()
    chosen = [(path, path.relative_to(root).as_posix()) for path in all_urdfs()
              if args.only in path.relative_to(root).as_posix()]

    def verify(item: tuple[Path, str]) -> tuple[str, str, str, float]:
        path, name = item
        t0 = time.perf_counter()
        outcome, line = verify_one(path, name in FLOATING, args)
        return name, outcome, line, time.perf_counter() - t0

    # each file in its own subprocess, --jobs of them at a time; lines in the files' order
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, outcome, line, seconds in pool.map(verify, chosen):
            outcomes[outcome] += 1
            if outcome == "error":
                errors[error_kind(line)] += 1
            base = "floating" if name in FLOATING else "fixed"
            print(f"{outcome:<7} {name} ({base}, {seconds:.0f} s): {line}", flush=True)
    total = sum(outcomes.values())
    print(f"\n{total} files in {time.perf_counter() - start:.0f} s: "
          f"{outcomes['pass']} passed, {outcomes['FAIL']} with failed checks, "
          f"{outcomes['error']} one-line errors, {outcomes['timeout']} timeouts, "
          f"{outcomes['CRASH']} crashes")
    for kind, count in errors.most_common():
        print(f"  {count} x {kind}")
    return 1 if outcomes["CRASH"] else 0


if __name__ == "__main__":
    sys.exit(main())
