"""Shared pieces of the benchmarks: paths, logging, machine description, random states, the
error measure, small Markdown tables and atomic JSON writes."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from symgen import Model
from symgen import reference as ref

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
CACHE = ROOT / "bench" / ".cache"
#: Folder of ``timing.h``, the C timing programs' shared header (pass as ``-I``).
TIMING_DIR = ROOT / "bench"
#: Consistency-check limit for every peer against symgen.reference (relative error).
CHECK_TOLERANCE = 1e-8


def log(msg: str) -> None:
    """Progress line on stderr."""
    print(msg, file=sys.stderr, flush=True)


def pin_to_one_cpu() -> int | None:
    """Pin this process (and the programs it starts) to the last CPU it may use, so timed
    programs do not migrate between cores; that CPU, or None where unsupported."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        cpu = max(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
    except OSError:
        return None
    return cpu


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), else what the platform module says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def tool_version(cmd: Sequence[str]) -> str:
    """First line of ``cmd --version`` (e.g. the compiler), or "not found"."""
    try:
        out = subprocess.run([*cmd, "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "not found"
    return out.stdout.splitlines()[0] if out.stdout else "unknown"


def machine_info() -> dict[str, Any]:
    """CPU, cores, OS, Python, compilers and date of this run."""
    import symgen

    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "symgen": symgen.__version__,
        "gcc": tool_version(["gcc"]),
        "g++": tool_version(["g++"]),
        "date": datetime.date.today().isoformat(),
    }


def random_states(model: Model, count: int, seed: int = 0) -> dict[str, np.ndarray]:
    """``count`` random states in symgen's layout: q on the joint manifolds
    (``reference.random_configuration``), v, a, τ standard normal; fixed seed."""
    rng = np.random.default_rng(seed)
    q = np.array([ref.random_configuration(model, rng) for _ in range(count)])
    v, a, tau = (rng.normal(size=(count, model.nv)) for _ in range(3))
    return {"q": q, "v": v, "a": a, "tau": tau}


def relative_error(x: np.ndarray, y: np.ndarray) -> float:
    """max|x − y| / max(max|y|, 1), the measure every consistency check uses."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return float(np.max(np.abs(x - y)) / max(float(np.max(np.abs(y))), 1.0))


def source_hash(*parts: str) -> str:
    """Short content hash of the given strings (cache keys)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON, atomically (temporary file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(path)


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], align: str | None = None) -> str:
    """A Markdown table; ``align`` has one letter per column, ``l`` or ``r``."""
    align = align or "l" + "r" * (len(header) - 1)
    sep = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(sep) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
