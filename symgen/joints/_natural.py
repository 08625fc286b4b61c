"""Natural-coordinate helpers shared by joint types (García de Jalón & Bayo 1994, §2.2.3)."""

from __future__ import annotations

import numpy as np

from symgen.joints.base import NaturalModeller


def perpendiculars(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors completing the unit ``u`` to a right-handed orthonormal triad."""
    ref_axis = np.eye(3)[int(np.argmin(np.abs(u)))]
    w1 = np.cross(u, ref_axis)
    w1 /= np.linalg.norm(w1)
    return w1, np.cross(u, w1)


def slide_entities(m: NaturalModeller, name: str, info: dict, point, axis) -> None:
    """Prismatic and cylindrical pairs: the axis vector is shared, each body carries its own
    point on the axis, and ``w`` holds two vectors ⟂ to the axis (fixed on the parent)."""
    parent, child = info["parent"], info["child"]
    info["axis"] = m.shared(f"{name}.axis", "u", parent, child, axis)
    info["pp"] = m.own(f"{name}/parent", "p", parent, point)
    info["pc"] = m.own(f"{name}/child", "p", child, point)
    info["w"] = perpendiculars(axis)


def on_axis_equations(m: NaturalModeller, name: str, info: dict) -> None:
    """The child's point stays on the parent's axis: (r_C − r_P)·w₁ = (r_C − r_P)·w₂ = 0."""
    w1, w2 = info["w"]
    parent, r = info["parent"], m.symbol_of
    gap = r[info["pc"]] - r[info["pp"]]
    m.equation(gap.dot(m.on_body(parent, w1)), f"{name}: on the axis (1)")
    m.equation(gap.dot(m.on_body(parent, w2)), f"{name}: on the axis (2)")


__all__ = ["on_axis_equations", "perpendiculars", "slide_entities"]
