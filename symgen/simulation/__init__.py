"""Simulation from the generated kernels: :func:`simulate` returns a :class:`Trajectory`."""

from symgen.simulation.simulate import METHODS, simulate
from symgen.simulation.trajectory import Trajectory

__all__ = ["METHODS", "Trajectory", "simulate"]
