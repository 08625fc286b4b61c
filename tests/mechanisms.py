"""Closed-loop mechanisms built with :class:`symgen.ModelBuilder`, shared by the tests
of the natural-coordinate formulation (each builder documents its geometry and tree)."""

from __future__ import annotations

import math

from symgen.io.builder import ModelBuilder
from symgen.model import Model

#: Gravity of the builders (m/s², along −y).
G = 9.81


def n_four_bar(n: int, angle: float = math.pi / 4) -> Model:
    """A row of ``n`` parallelogram four-bars in the xy plane (gravity −9.81 along y).

    Every bar is 1 m long and 1 kg, a uniform rod (COM at mid-length, izz = m L²/12). The
    ground pivots are at x = 0, 1, ..., n; the ``n + 1`` cranks ``crank_i`` point at 45°
    above the horizontal in the assembled (zero) configuration, so their tips are at
    (i + √½, √½); the ``n`` couplers ``coupler_i`` are horizontal and join the tips of
    cranks i and i + 1. Tree: ground → crank_i (revolute at the pivot) and crank_i →
    coupler_i (revolute at the tip of crank i); the loop joints ``close_i`` pin the end of
    coupler_i to the tip of crank i + 1. The tip of crank i (0 < i < n) is thus one pin of
    three bodies: coupler_{i−1}, coupler_i and crank_i. One degree of freedom: all cranks
    stay parallel and the couplers translate. ``angle``: the cranks' assembled angle
    (default 45°; 0 is the singular, horizontal position).
    """
    if n < 1:
        raise ValueError("n_four_bar needs at least one loop")
    b = ModelBuilder(f"four_bar_chain_{n}", root="ground", plane="xy", gravity=(0.0, -G, 0.0))
    rod = {"mass": 1.0, "com": (0.5, 0.0, 0.0), "inertia": (0.0, 1.0 / 12, 1.0 / 12)}
    for i in range(n + 1):
        b.body(f"crank_{i}", **rod)
    for i in range(n):
        b.body(f"coupler_{i}", **rod)
    quarter = angle
    for i in range(n + 1):
        b.joint(f"pivot_{i}", "revolute", "ground", f"crank_{i}", xyz=(float(i), 0.0, 0.0),
                rpy=(0.0, 0.0, quarter))
    for i in range(n):
        b.joint(f"tip_{i}", "revolute", f"crank_{i}", f"coupler_{i}", xyz=(1.0, 0.0, 0.0),
                rpy=(0.0, 0.0, -quarter))
        b.loop_joint(f"close_{i}", "revolute", f"coupler_{i}", f"crank_{i + 1}",
                     xyz=(1.0, 0.0, 0.0), rpy=(0.0, 0.0, quarter), child_xyz=(1.0, 0.0, 0.0))
    return b.build()


__all__ = ["G", "n_four_bar"]
