"""Human-readable description of a model, as printed by ``symgen info``."""

from __future__ import annotations

from .model import Model
from .model.scalars import is_symbolic


def _fmt(x: object) -> str:
    if is_symbolic(x):
        return str(x)
    return f"{float(x):.6g}"  # type: ignore[arg-type]


def _vec(v) -> str:
    return "(" + ", ".join(_fmt(x) for x in v) + ")"


def describe(model: Model) -> str:
    """Bodies, joints with types, nq/nv, frames, loop joints, couplings, parameters."""
    lines = [
        f"model      {model.name}" + (f"  ({model.source})" if model.source else ""),
        f"root       {model.root}",
        f"nq, nv     {model.nq}, {model.nv}",
        f"gravity    {_vec(model.gravity)} m/s^2",
    ]
    if model.plane:
        lines.append(f"plane      {model.plane} (planar mechanism)")
    lines.append("")
    lines.append(f"bodies ({model.nbodies} moving)")
    lines.append(f"  {'#':>3}  {'name':<28} {'parent':<28} {'mass [kg]':>12}  com [m]")
    for i, body in enumerate(model.bodies):
        parent = model.root if model.parents[i] < 0 else model.bodies[model.parents[i]].name
        lines.append(
            f"  {i:>3}  {body.name:<28} {parent:<28} {_fmt(body.mass):>12}  {_vec(body.com)}"
        )
    lines.append("")
    lines.append(f"joints ({len(model.joints)} movable, in q/v order)")
    lines.append(f"  {'name':<28} {'type':<12} {'q':>9} {'v':>9}  axis")
    for joint in model.joints:
        qs, vs = model.q_slices[joint.name], model.v_slices[joint.name]
        axis = _vec(joint.axis) if joint.type.uses_axis else "-"
        lines.append(
            f"  {joint.name:<28} {joint.type.value:<12} {_span(qs):>9} {_span(vs):>9}  {axis}"
        )
    lines.append("")
    lines.append(f"frames ({len(model.frames)})")
    for frame in model.frames:
        lines.append(
            f"  {frame.name:<28} on {frame.body:<28} at {_vec(frame.placement.translation)}"
        )
    lines.append("")
    lines.append(f"loop joints ({len(model.loop_joints)})")
    for joint in model.loop_joints:
        lines.append(f"  {joint.name:<28} {joint.type.value:<12} {joint.parent} -> {joint.child}")
    if model.couplings:
        lines.append("")
        lines.append(f"couplings ({len(model.couplings)})")
        for c in model.couplings:
            lines.append(f"  q[{c.joint}] = {_fmt(c.ratio)} * q[{c.master}] + {_fmt(c.offset)}")
    lines.append("")
    lines.append(f"runtime parameters ({len(model.parameters)})")
    for p in model.parameters:
        desc = f"  {p.description}" if p.description else ""
        lines.append(f"  {p.name:<28} default {p.default:.6g}{desc}")
    return "\n".join(lines)


def _span(s: slice) -> str:
    if s.stop - s.start == 1:
        return str(s.start)
    return f"{s.start}:{s.stop}"
