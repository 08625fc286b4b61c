"""Verification of generated kernels against independent implementations (``symgen
verify`` and the tests): the comparisons (:mod:`.checks`), the numpy references of the
kernels by name (:mod:`.reference_queries`) and Pinocchio's counterparts
(:mod:`.pinocchio_queries`)."""

from symgen.apps.verify.checks import (
    DOUBLE_TOLERANCE,
    FLOAT_TOLERANCE,
    Check,
    PinocchioPeer,
    Report,
    check_compiled,
    consistent_states,
    pinocchio_peer,
    random_states,
    reference_value,
    reference_values,
    relative_error,
    solve_error,
    verify_compiled,
)

__all__ = [
    "DOUBLE_TOLERANCE",
    "FLOAT_TOLERANCE",
    "Check",
    "PinocchioPeer",
    "Report",
    "check_compiled",
    "consistent_states",
    "pinocchio_peer",
    "random_states",
    "reference_value",
    "reference_values",
    "relative_error",
    "solve_error",
    "verify_compiled",
]
