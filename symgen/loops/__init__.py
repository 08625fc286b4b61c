"""Closed loops in joint coordinates: Müller's loop analysis (:mod:`.analysis`), the
numeric loop closure it runs on (:mod:`.closure`) and the screw algebra (:mod:`.screws`)."""

from .analysis import LoopAnalysis, LoopReport, analyse_loops, kept_rows
from .closure import CutJoint, LoopClosure

__all__ = ["CutJoint", "LoopAnalysis", "LoopClosure", "LoopReport", "analyse_loops",
           "kept_rows"]
