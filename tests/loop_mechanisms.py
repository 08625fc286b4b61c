"""Closed-loop mechanisms in joint coordinates for the loop analysis (Müller 2014, §7 and
Fig. 1-3), built with every body frame at its inboard joint and parallel to the world at
q = 0, so that each mechanism is assembled there:

- :func:`spherical_four_bar`: four revolutes whose axes meet at one point (Fig. 1b, §7.1);
  3 joint angles, the fourth joint cut: 5 raw constraints, 2 independent, 1 DOF;
- :func:`prrr_manipulator`: the 3-PRRR translational parallel manipulator (Fig. 7,
  §7.2): three legs of a prismatic joint along e_i and three revolutes parallel to e_i;
  10 joint coordinates, two loops of 5 raw constraints, 4 kept per loop, rank 7, 3 DOF;
- :func:`double_four_bar`: one coupler on three cranks (Fig. 3): with equal cranks it
  moves (1 DOF, one constraint redundant), with a longer third crank it is a structure;
- :func:`welded_four_bar`: a planar four-bar whose coupler is welded (a fixed loop joint)
  to a stub hinged on the rocker: 4 coordinates, 6 raw constraints, 3 kept, 1 DOF;
- :func:`geared_four_bar`: a four-bar whose crank is driven through a gear by a motor
  rotor (a coupling): loops and couplings together;
- :func:`rsur_linkage`: a spatial four-bar closed by a universal joint (RSUR), whose
  constraint rows turn with the joint: 5 coordinates, 4 raw constraints, 1 DOF.
"""

from __future__ import annotations

import math

import numpy as np

from symgen.io.builder import ModelBuilder
from symgen.model import Model


def _unit(v) -> tuple[float, ...]:
    a = np.asarray(v, float)
    return tuple(float(x) for x in a / np.linalg.norm(a))


def _body(b: ModelBuilder, name: str) -> None:
    b.body(name, mass=1.0, com=(0.1, 0.0, 0.0), inertia=(0.01, 0.01, 0.01))


def spherical_four_bar() -> Model:
    """Axes a1 (ground-crank), a2 (crank-coupler), a3 (coupler-rocker, the cut), a4
    (rocker-ground) through the origin, in general directions."""
    a1, a2, a3, a4 = _unit((0, 0, 1)), _unit((1, 1, 2)), _unit((2, 1, 1)), _unit((1, 0, 0))
    b = ModelBuilder("spherical_four_bar", root="ground")
    for name in ("crank", "coupler", "rocker"):
        _body(b, name)
    b.joint("j1", "revolute", "ground", "crank", axis=a1)
    b.joint("j2", "revolute", "crank", "coupler", axis=a2)
    b.joint("j4", "revolute", "ground", "rocker", axis=a4)
    b.loop_joint("j3", "revolute", "coupler", "rocker", axis=a3)
    return b.build()


def prrr_manipulator() -> Model:
    """Leg i: prismatic along e_i at A_i1, revolutes parallel to e_i at A_i1, A_i2, A_i3,
    the last on the platform (leg 0 in the tree, the last revolutes of legs 1 and 2 cut).
    The points lie in the plane through the origin normal to e_i, at generic positions."""
    b = ModelBuilder("prrr_3", root="ground")
    _body(b, "platform")
    axes = np.eye(3)
    for i in range(3):
        e, u, w = axes[i], axes[(i + 1) % 3], axes[(i + 2) % 3]
        a3 = 0.3 * u + 0.1 * w
        a2 = a3 + 0.8 * u + (0.3 + 0.1 * i) * w
        a1 = a2 + (0.6 - 0.1 * i) * u + 0.5 * w
        axis = tuple(float(x) for x in e)
        for name in (f"slider{i}", f"link{i}a", f"link{i}b"):
            _body(b, name)
        b.joint(f"p{i}", "prismatic", "ground", f"slider{i}", xyz=tuple(a1), axis=axis)
        b.joint(f"r{i}a", "revolute", f"slider{i}", f"link{i}a", axis=axis)
        b.joint(f"r{i}b", "revolute", f"link{i}a", f"link{i}b", xyz=tuple(a2 - a1), axis=axis)
        if i == 0:
            b.joint("r0c", "revolute", "link0b", "platform", xyz=tuple(a3 - a2), axis=axis)
            platform = a3
        else:
            b.loop_joint(f"r{i}c", "revolute", f"link{i}b", "platform", xyz=tuple(a3 - a2),
                         child_xyz=tuple(a3 - platform), axis=axis)
    return b.build()


def double_four_bar(third_crank: float = 1.0) -> Model:
    """Cranks at x = 0, 1, 2 turning about z, vertical at q = 0, the first two of length 1,
    the third of length ``third_crank`` (its pivot moved down to keep the tips level); one
    coupler through the three tips, on the first crank in the tree and pinned to the
    others by two loop joints."""
    b = ModelBuilder("double_four_bar", root="ground")
    for name in ("crank0", "crank1", "crank2", "coupler"):
        _body(b, name)
    b.joint("c0", "revolute", "ground", "crank0")
    b.joint("c1", "revolute", "ground", "crank1", xyz=(1.0, 0.0, 0.0))
    b.joint("c2", "revolute", "ground", "crank2", xyz=(2.0, 1.0 - third_crank, 0.0))
    b.joint("k0", "revolute", "crank0", "coupler", xyz=(0.0, 1.0, 0.0))
    b.loop_joint("k1", "revolute", "coupler", "crank1", xyz=(1.0, 0.0, 0.0),
                 child_xyz=(0.0, 1.0, 0.0))
    b.loop_joint("k2", "revolute", "coupler", "crank2", xyz=(2.0, 0.0, 0.0),
                 child_xyz=(0.0, third_crank, 0.0))
    return b.build()


def welded_four_bar() -> Model:
    """Unit crank (j1 at the origin) and rocker (j3 at (1, 0, 0)) about z, the coupler from
    the crank's tip along x, a stub hinged (j4) at the rocker's tip; the loop is a weld
    between the coupler's tip and the stub's origin, both at (1, 1, 0)."""
    b = ModelBuilder("welded_four_bar", root="ground")
    for name in ("crank", "coupler", "rocker", "stub"):
        _body(b, name)
    b.joint("j1", "revolute", "ground", "crank")
    b.joint("j2", "revolute", "crank", "coupler", xyz=(0.0, 1.0, 0.0))
    b.joint("j3", "revolute", "ground", "rocker", xyz=(1.0, 0.0, 0.0))
    b.joint("j4", "revolute", "rocker", "stub", xyz=(0.0, 1.0, 0.0))
    b.loop_joint("weld", "fixed", "coupler", "stub", xyz=(1.0, 0.0, 0.0))
    return b.build()


def geared_four_bar() -> Model:
    """Crank (j1 at the origin, 1 m along y), coupler from the crank's tip to the rocker's
    tip (1.2, 1.5, 0), rocker (j3 at (1.2, 0, 0), 1.5 m along y), the loop revolute at the
    rocker's tip; a rotor on the ground turns at q_rotor = 12·q_j1 + 0.3 (no coordinate)."""
    b = ModelBuilder("geared_four_bar", root="ground")
    for name in ("crank", "coupler", "rocker"):
        _body(b, name)
    b.body("rotor", mass=0.5, com=(0.0, 0.0, 0.0), inertia=(1e-3, 1e-3, 2e-3))
    b.joint("j1", "revolute", "ground", "crank")
    b.joint("j2", "revolute", "crank", "coupler", xyz=(0.0, 1.0, 0.0))
    b.joint("j3", "revolute", "ground", "rocker", xyz=(1.2, 0.0, 0.0))
    b.joint("motor", "revolute", "ground", "rotor", xyz=(0.0, 0.0, -0.1))
    b.coupling("motor", "j1", ratio=12.0, offset=0.3)
    b.loop_joint("j4", "revolute", "coupler", "rocker", xyz=(1.2, 0.5, 0.0),
                 child_xyz=(0.0, 1.5, 0.0))
    return b.build()


def rsur_linkage() -> Model:
    """Crank (j1 about z at the origin, tip at (0, 1, 0)), a spherical joint to the coupler,
    the coupler's far end (1.5, 1.2, 0.4) held by a universal joint (first axis (0, 1, 1)/√2
    on the coupler, second (1, 0, 0) on the rocker) to the rocker, which turns about x at
    (1.5, 0, 0)."""
    b = ModelBuilder("rsur_linkage", root="ground")
    for name in ("crank", "coupler", "rocker"):
        _body(b, name)
    b.joint("j1", "revolute", "ground", "crank")
    b.joint("s2", "spherical", "crank", "coupler", xyz=(0.0, 1.0, 0.0))
    b.joint("j3", "revolute", "ground", "rocker", xyz=(1.5, 0.0, 0.0), axis=(1.0, 0.0, 0.0))
    b.loop_joint("u4", "universal", "coupler", "rocker", xyz=(1.5, 0.2, 0.4),
                 child_xyz=(0.0, 1.2, 0.4), axis=_unit((0, 1, 1)), axis2=(1.0, 0.0, 0.0))
    return b.build()


def four_bar_chain(n: int) -> Model:
    """``n`` planar four-bars in series (xy plane, gravity −9.81 along y): stage k has the
    geometry of examples/models/four_bar.yaml (crank 0.1 m, coupler 0.5 m, rocker 0.4 m,
    pivots 0.4 m apart, assembled at zero in a 3-4-5 triangle) in the frame of its base,
    the ground for the first stage and the rocker of stage k − 1 after it: a chain of
    local loops, one aggregate each (Jain 2009's setting), n DOF."""
    b = ModelBuilder(f"four_bar_chain_{n}", root="ground", plane="xy",
                     gravity=(0.0, -9.81, 0.0))
    base = "ground"
    tilt = math.atan2(3.0, 4.0) - math.pi / 2
    for k in range(n):
        for name, mass, length in (("crank", 0.2, 0.1), ("coupler", 0.5, 0.5),
                                   ("rocker", 0.4, 0.4)):  # uniform rods along x
            rod = mass * length**2 / 12
            b.body(f"{name}{k}", mass=mass, com=(length / 2, 0.0, 0.0), inertia=(0.0, rod, rod))
        b.joint(f"crank_joint{k}", "revolute", base, f"crank{k}", rpy=(0.0, 0.0, math.pi / 2))
        b.joint(f"coupler_joint{k}", "revolute", f"crank{k}", f"coupler{k}",
                xyz=(0.1, 0.0, 0.0), rpy=(0.0, 0.0, tilt))
        b.joint(f"rocker_joint{k}", "revolute", base, f"rocker{k}", xyz=(0.4, 0.0, 0.0),
                rpy=(0.0, 0.0, math.pi / 2))
        b.loop_joint(f"coupler_rocker{k}", "revolute", f"coupler{k}", f"rocker{k}",
                     xyz=(0.5, 0.0, 0.0), child_xyz=(0.4, 0.0, 0.0), child_rpy=(0.0, 0.0, tilt))
        base = f"rocker{k}"
    return b.build()

