"""Human-readable description of a model, as printed by ``symgen info``."""

from __future__ import annotations

import numpy as np

from symgen.formulations.tree.options import default_frames
from symgen.model import JointType, Model
from symgen.model.force_elements import describe as describe_element
from symgen.model.force_elements import labelled_values
from symgen.model.scalars import scalar_text
from symgen.reference.kinematics import forward_kinematics

_fmt = scalar_text


def _vec(v) -> str:
    return "(" + ", ".join(_fmt(x) for x in v) + ")"


def describe(model: Model) -> str:
    """Bodies, joints with types, nq/nv, frames, loop joints, couplings, parameters."""
    lines = [
        f"model      {model.name}" + (f"  ({model.source})" if model.source else ""),
        f"root       {model.root}",
        f"base       {base_description(model)}",
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
    lines.append(f"joints ({len(model.joints)} movable, in q/v order; (name): coupled to name)")
    lines.append(f"  {'name':<28} {'type':<12} {'q':>9} {'v':>9}  axis")
    for joint in model.joints:
        axis = _vec(joint.axis) if joint.type.layout.uses_axis else "-"
        if joint.name in model.coupled:  # no coordinate of its own
            qs = vs = f"({model.coupled[joint.name].master})"
        else:
            qs, vs = _span(model.q_slices[joint.name]), _span(model.v_slices[joint.name])
        lines.append(f"  {joint.name:<28} {joint.type.value:<12} {qs:>9} {vs:>9}  {axis}")
    lines.append("")
    lines.append(f"frames ({len(model.frames)})")
    for frame in model.frames:
        lines.append(
            f"  {frame.name:<28} on {frame.body:<28} at {_vec(frame.placement.translation)}"
        )
    lines.append(f"default frames (per-frame kernels): {', '.join(default_frames(model)) or '-'}")
    lines.append("")
    lines.append(f"loop joints ({len(model.loop_joints)})")
    for joint in model.loop_joints:
        lines.append(f"  {joint.name:<28} {joint.type.value:<12} {joint.parent} -> {joint.child}")
    if model.locks:
        lines.append("")
        lines.append(f"locked joints ({len(model.locks)}, fixed at these values and lumped)")
        for lock in model.locks:
            via = f"  (by coupling to {lock.master})" if lock.master else ""
            lines.append(f"  {lock.name:<28} {_vec(lock.values)}{via}")
    if model.has_armature:
        lines.append("")
        lines.append("armature [kg m^2 or kg per velocity coordinate]")
        for joint in model.joints:
            if joint.armature:
                lines.append(f"  {joint.name:<28} {_vec(joint.armature_values)}")
    if model.couplings:
        lines.append("")
        lines.append(f"couplings ({len(model.couplings)}, imposed: a coupled joint has no "
                     "coordinate of its own)")
        for c in model.couplings:
            lines.append(f"  q[{c.joint}] = {_fmt(c.ratio)} * q[{c.master}] + {_fmt(c.offset)}")
    lines.append("")
    lines.append(f"runtime parameters ({len(model.parameters)})")
    for p in model.parameters:
        desc = f"  {p.description}" if p.description else ""
        lines.append(f"  {p.name:<28} default {p.default:.6g}{desc}")
    lines += _file_data(model)
    return "\n".join(lines)


def _file_data(model: Model) -> list[str]:
    """Motors, keyframes, the file's coordinates and what the reader left out."""
    lines: list[str] = []
    if model.force_elements:
        lines += ["", f"force elements ({len(model.force_elements)}: in the constrained and "
                  "natural-coordinate kernels; the tree kernels take joint forces as inputs)"]
        for e in model.force_elements:
            values = ", ".join(f"{k} {_fmt(x)}" for k, x in labelled_values(e)
                               if not k.startswith("point"))
            lines.append(f"  {describe_element(e):<40} {values}")
    if model.motors:
        lines += ["", f"motors ({len(model.motors)}: the actuated joints of "
                  "constrained_inverse_dynamics; joint force = gear * input)"]
        lines += [f"  {m.name:<28} joint {m.joint}, gear {m.gear:.6g}" for m in model.motors]
    if model.keyframes:
        names = ", ".join(k.name for k in model.keyframes)
        lines += ["", f"keyframes ({len(model.keyframes)}): {names} "
                  "(symgen.io.mjcf_state.keyframe(model, name) gives q, v)"]
    if model.file_coordinates is not None:
        fc = model.file_coordinates
        lines += ["", f"{fc.convention} coordinates: qpos {fc.nq}, qvel {fc.nv} "
                  "(symgen.io.mjcf_state.from_mujoco / to_mujoco map them; docs/conventions.md)"]
    if model.notes:
        lines += ["", "notes from the reader"] + [f"  {n}" for n in model.notes]
    return lines


def _span(s: slice) -> str:
    if s.stop - s.start == 1:
        return str(s.start)
    return f"{s.start}:{s.stop}"


def free_base_joint(model: Model):
    """The free joint attaching a body to the root (``--floating-base``), or None."""
    for joint in model.joints:
        if joint.type is JointType.FREE and joint.parent == model.root:
            return joint
    return None


def base_description(model: Model) -> str:
    """Whether the base is fixed or floating, and how to change it (one line)."""
    joint = free_base_joint(model)
    if joint is not None:
        return (f"floating: free joint {joint.name!r} attaches {joint.child!r} to "
                f"{model.root!r}")
    if _declares_its_base(model):
        return (f"fixed: no free joint joins a body to {model.root!r} (the file declares its "
                "floating bases, <freejoint/>)")
    return (f"fixed: root {model.root!r} is welded to the world (--floating-base would attach "
            f"it by a free joint)")


def _declares_its_base(model: Model) -> bool:
    """Formats whose files declare their free joints (MJCF): --floating-base does not apply."""
    return model.file_coordinates is not None


def mobile_base_hint(model: Model) -> str | None:
    """A one-line hint when a fixed-base model looks like a free-moving robot, else None.

    The rule: the base is fixed, and either nothing moves (nv = 0: a lone body such as a
    quadrotor) or the model stands on legs (:func:`standing_limbs`): in the neutral
    configuration, two or more limbs end lowest, at one height, further below the root than
    the model rises above it, and they part high up, near the root. Arms on a fixed root, a
    hand's fingers (which part at the palm, and point up or forward), a wheeled base (its
    wheels turn about axles above the root's ground-level frame) and an upper body's
    hanging arms get no hint. The root's mass is not known to the model (a fixed root
    carries no dynamics), so it is not used; "down" is the model's gravity, so a file drawn
    with another axis up (example-robot-data's y-up ``human.urdf``) gets no hint; the hint
    is worded as a question of use.
    """
    if free_base_joint(model) is not None or _declares_its_base(model):
        return None
    if model.nv == 0:
        return (f"hint: model {model.name!r} has no moving joint; if {model.root!r} is a "
                f"free-flying body, use --floating-base")
    legs = standing_limbs(model)
    if len(legs) < 2:
        return None
    return (f"hint: the base is fixed, and root {model.root!r} stands on {len(legs)} limbs; "
            f"if the robot moves freely (legged, humanoid), use --floating-base")


def _down(model: Model) -> np.ndarray | None:
    """The unit vector of gravity, None without gravity."""
    g = np.array([float(x) for x in model.resolve().gravity])
    norm = float(np.linalg.norm(g))
    return g / norm if norm > 0 else None


def _lowest_ends(model: Model, heights: dict[str, float]) -> dict[int, float]:
    """How far below the root each leaf of the moving tree reaches (``heights``: each body's
    and frame's drop below the root): its origin or the lowest link ending the tree on it."""
    ends: dict[int, float] = {}
    for i, body in enumerate(model.bodies):
        if not model.children(i):
            names = [body.name] + [f.name for f in model.frames
                                   if f.body == body.name and f.link and f.leaf]
            ends[i] = max(heights[n] for n in names)
    return ends


def _branch(model: Model, bodies: list[int]) -> int:
    """The deepest common ancestor of ``bodies`` (-1: the root)."""
    def path(i: int) -> list[int]:  # root to i, without recursion (deep chains)
        out = []
        while i >= 0:
            out.append(i)
            i = model.parents[i]
        return out[::-1]

    common = -1
    for step in zip(*(path(i) for i in bodies), strict=False):
        if len(set(step)) > 1:
            break
        common = step[0]
    return common


def standing_limbs(model: Model) -> list[int]:
    """The limbs a fixed-base model would stand on (as the children of the body, or root,
    where they part), else []: in the neutral configuration, the leaves reaching lowest, to
    within 10% of one another, further below the root than anything of the model rises
    above it (a trunk or pelvis on its legs, not an upper body with hanging arms), and
    parting in the upper half of that drop (legs part at the hips; a hand hung down parts
    at its palm, just above its finger tips)."""
    down = _down(model)
    if down is None:
        return []
    poses = forward_kinematics(model, model.neutral_configuration)
    heights = {name: float(t[:3, 3] @ down) for name, t in poses.items()}
    ends = _lowest_ends(model, heights)
    lowest = max(ends.values(), default=0.0)
    if lowest <= max(0.0, -min(heights.values())):  # reaches further up than down
        return []
    feet = [i for i, drop in ends.items() if drop >= 0.9 * lowest]
    if len(feet) < 2:
        return []
    part = _branch(model, feet)
    if part >= 0 and lowest - heights[model.bodies[part].name] < 0.5 * lowest:
        return []
    limbs = {_child_towards(model, part, i) for i in feet}
    return sorted(limbs) if len(limbs) >= 2 else []


def _child_towards(model: Model, ancestor: int, i: int) -> int:
    """The child of ``ancestor`` (-1: the root) on the path down to body ``i``."""
    while model.parents[i] != ancestor:
        i = model.parents[i]
    return i


