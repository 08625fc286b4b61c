"""Kernel generation is deterministic: a robot's programs, generated in two processes with
different hash seeds, are the same line for line (the UR5's inverse dynamics, forward
dynamics and inverse mass matrix, derived once in each of two subprocesses)."""

from __future__ import annotations

import os
import subprocess
import sys

DETERMINISM_SCRIPT = """
import symgen
from symgen.ir.printer import program_lines
from symgen.io.robots import robot_urdf
ks = symgen.generate(symgen.load(robot_urdf("ur5")), ["inverse_dynamics", "forward_dynamics",
                                                    "mass_matrix_inverse"])
for p in ks.programs.values():
    print("\\n".join(program_lines(p)))
"""


def test_generation_is_deterministic_across_processes():
    """Same model and options give the same program line for line, whatever the hash seed."""
    outputs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        run = subprocess.run([sys.executable, "-c", DETERMINISM_SCRIPT], env=env,
                             capture_output=True, text=True, check=True)
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0].count("\n") > 500  # three programs of a few hundred statements
