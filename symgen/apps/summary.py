"""Human-readable description of a model, as printed by ``symgen info``."""

from __future__ import annotations

from symgen.model import JointType, Model
from symgen.model.force_elements import describe as describe_element
from symgen.model.force_elements import labelled_values
from symgen.model.scalars import scalar_text

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
    return (f"fixed: root {model.root!r} is welded to the world; use --floating-base to "
            f"attach it by a free joint")


def _declares_its_base(model: Model) -> bool:
    """Formats whose files declare their free joints (MJCF): --floating-base does not apply."""
    return model.file_coordinates is not None


def mobile_base_hint(model: Model) -> str | None:
    """A one-line hint when a fixed-base model looks like a free-moving robot, else None.

    The rule: the base is fixed, and either nothing moves (nv = 0: a lone body such as a
    quadrotor) or the root carries two or more limbs, a limb being a chain of at least two
    moving bodies (legs of a legged robot or humanoid). Arms mounted on a fixed root (one
    limb) get no hint; a torso with two arms or a hand with fingers get it, which is why it
    is worded as a question of use.
    """
    if free_base_joint(model) is not None or _declares_its_base(model):
        return None
    if model.nv == 0:
        return (f"hint: model {model.name!r} has no moving joint; if {model.root!r} is a "
                f"free-flying body, use --floating-base")

    def depth(i: int) -> int:
        return 1 + max((depth(c) for c in model.children(i)), default=0)

    limbs = [i for i, parent in enumerate(model.parents) if parent < 0 and depth(i) >= 2]
    if len(limbs) < 2:
        return None
    return (f"hint: the base is fixed, and root {model.root!r} carries {len(limbs)} limbs; "
            f"if the robot moves freely (legged, humanoid, flying), use --floating-base")
