"""Closed loops in joint coordinates: Müller's loop analysis (:mod:`.analysis`), the
numeric loop closure it runs on (:mod:`.closure`), the screw algebra (:mod:`.screws`) and
the choice of cut joint (:mod:`.cuts`)."""

from symgen.loops.analysis import LoopAnalysis, LoopReport, analyse_loops, kept_rows
from symgen.loops.closure import CutJoint, LoopClosure
from symgen.loops.cuts import minimal_cuts

__all__ = ["CutJoint", "LoopAnalysis", "LoopClosure", "LoopReport", "analyse_loops",
           "kept_rows", "minimal_cuts"]
