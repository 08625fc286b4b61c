"""Help texts of the command-line options several commands share (``info``, ``generate``,
``verify``, ``simulate``)."""

from __future__ import annotations

#: Help of ``--lock`` (info, generate, verify).
LOCK_HELP = (
    "Hold joint JOINT at VALUE (default: its neutral value, 0 or the identity quaternion; "
    "a multi-DOF joint takes its nq numbers, comma-separated) and lump what it carries, as "
    "Pinocchio's buildReducedModel; joints coupled to it (<mimic>) follow, unless "
    "--no-couplings. Repeatable."
)
#: Help of ``--no-couplings`` and ``--strict`` (info, generate, verify, simulate).
NO_COUPLINGS_HELP = (
    "Drop the model's gear and mimic couplings: every joint keeps its own coordinate "
    "(Pinocchio's mimic=False); a URDF's <mimic> tags are not read, so a broken one (a master "
    "that does not exist) loads. Default: imposed."
)
STRICT_HELP = (
    "Make the warnings about unknown URDF elements and attributes (likely typos, such as "
    "<axsi> or xzy=) errors."
)

__all__ = ["LOCK_HELP", "NO_COUPLINGS_HELP", "STRICT_HELP"]
