"""Formulations: derive each kernel of a model as a straight-line program.

:mod:`.spatial_operators` implements Jain's spatial operator algebra for trees; the
natural-coordinate formulation for closed loops follows (issue 5).
"""
