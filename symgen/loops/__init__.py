"""Closed loops in joint coordinates: Müller's loop analysis (:mod:`.analysis`), the
numeric loop closure it runs on (:mod:`.closure`), the screw algebra (:mod:`.screws`) and
the choice of cut joint (:mod:`.cuts`)."""

from .analysis import LoopAnalysis, LoopReport, analyse_loops, kept_rows
from .closure import CutJoint, LoopClosure
from .cuts import minimal_cuts

__all__ = ["CutJoint", "LoopAnalysis", "LoopClosure", "LoopReport", "analyse_loops",
           "kept_rows", "minimal_cuts"]
