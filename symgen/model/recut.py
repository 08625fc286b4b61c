"""Moving a loop's cut to another joint of the loop (Müller 2014, §6: the cut joint is a
choice; the one with the fewest independent constraints r_α is the cheapest).

Cutting the loop closed by loop joint L (frame F_P on body P, F_C on body C) at the tree
joint J instead, with J on C's chain (root → … → X —J→ Y → … → C):

- L becomes the tree joint P → C (placement F_P); C's body frame moves to F_C, the frame
  a tree joint's child carries (docs/conventions.md);
- the joints between Y and C are reversed, so that the tree runs P → C → … → Y: a joint k
  from U to W (placement T_k in U) becomes W → U with placement T_W⁻¹ (the old joint frame,
  W's old body frame, in W's new one), axis −a and the same coordinate, since
  U T_k exp(â q) = W gives U T_k = W exp(−â q); U's body frame moves to T_k;
- J becomes the loop joint X → Y: F_P its placement in X, F_C its joint frame in Y's new
  body frame (T_Y⁻¹).

A moved body keeps its mass; its centre of mass, rotational inertia and everything fixed on
it (frames, the placements of the joints and loop joints it carries, spring points) are
re-expressed in its new body frame. With J on P's chain the loop joint is first read from
C to P (the same constraint). Reversal keeps coordinates only for joints about or along one
axis (revolute, continuous, prismatic, helical, cylindrical); a path through a spherical,
universal, planar or free joint, or a J that is coupled, a coupling's master or carries
armature, cannot be re-cut.
"""

from __future__ import annotations

from dataclasses import replace

from symgen.errors import ModelError
from symgen.model.elements import Body, Frame, Joint, JointType, PointSpring
from symgen.model.model import Model
from symgen.model.scalars import Scalar
from symgen.model.transform import Transform, mat_mul, transpose, vec_scale

#: Tree joints a re-cut may reverse: one axis, so that −a with the same coordinate works.
REVERSIBLE = (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC,
              JointType.HELICAL, JointType.CYLINDRICAL)


def _path(model: Model, body: str) -> list[str]:
    """Bodies from ``body`` up to (not including) the root, tip first."""
    parent_of = {j.child: j.parent for j in model.joints}
    out = []
    while body != model.root:
        out.append(body)
        body = parent_of[body]
    return out


def _negated(axis) -> tuple[Scalar, Scalar, Scalar]:
    return tuple(vec_scale(-1.0, axis))  # type: ignore[return-value]


def _flipped(loop: Joint) -> Joint:
    """The loop joint read from its child to its parent: the same constraint."""
    axis, axis2 = loop.axis, loop.axis2
    if loop.type is JointType.UNIVERSAL:  # R(a1, θ1)R(a2, θ2) reversed: about a2, then a1
        axis, axis2 = loop.axis2, loop.axis
    return replace(loop, parent=loop.child, child=loop.parent, placement=loop.child_placement,
                   child_placement=loop.placement, axis=axis, axis2=axis2)


def _moved_body(body: Body, frame: Transform) -> Body:
    """``body`` in a new body frame at ``frame`` (in its old one)."""
    r = frame.rotation
    inv = frame.inverse()
    return replace(body, com=inv.apply(body.com),
                   inertia=mat_mul(transpose(r), mat_mul(body.inertia, r)))


def recut(model: Model, loop: str, joint: str) -> Model:
    """``model`` with the loop closed by loop joint ``loop`` cut at tree joint ``joint``
    instead (module documentation): ``joint`` becomes the loop joint, ``loop`` a tree joint
    (with coordinates of its own, in place of ``joint``'s)."""
    loops = {j.name: j for j in model.loop_joints}
    tree = {j.name: j for j in model.joints}
    if loop not in loops:
        raise ModelError(f"model {model.name!r} has no loop joint {loop!r}")
    if joint not in tree:
        raise ModelError(f"model {model.name!r} has no tree joint {joint!r}")
    cut, new_cut = loops[loop], tree[joint]
    up_p, up_c = _path(model, cut.parent), _path(model, cut.child)
    if new_cut.child in up_p and new_cut.child not in up_c:
        cut = _flipped(cut)
        up_p, up_c = up_c, up_p
    elif not (new_cut.child in up_c and new_cut.child not in up_p):
        raise ModelError(f"joint {joint!r} is not in the loop closed by {loop!r}")
    coupled = {c.joint for c in model.couplings} | {c.master for c in model.couplings}
    if joint in coupled:
        raise ModelError(f"joint {joint!r} is coupled: its coordinate cannot become a cut")
    if new_cut.armature:
        raise ModelError(f"joint {joint!r} has armature, which a loop joint cannot carry")
    if cut.type in (JointType.FIXED, JointType.FREE):
        raise ModelError(f"the {cut.type.value} loop joint {loop!r} cannot become a tree joint")
    reversed_bodies = up_c[:up_c.index(new_cut.child) + 1]  # C, …, Y
    by_child = {j.child: j for j in model.joints}
    for body in reversed_bodies[:-1]:
        k = by_child[body]
        if k.type not in REVERSIBLE:
            raise ModelError(f"the loop {loop!r} cannot be cut at {joint!r}: that reverses "
                             f"the {k.type.value} joint {k.name!r}")
    # new body frames (in the old ones): C at F_C, each reversed joint's parent at T_k
    frames: dict[str, Transform] = {cut.child: cut.child_placement}
    for body in reversed_bodies[:-1]:
        k = by_child[body]
        frames[k.parent] = k.placement
    inverse = {name: t.inverse() for name, t in frames.items()}

    def moved(body: str, placement: Transform) -> Transform:
        return inverse[body].compose(placement) if body in inverse else placement

    joints: list[Joint] = [replace(cut, child_placement=Transform(), limits=None,
                                   cut="declared")]
    for body in reversed_bodies[:-1]:
        k = by_child[body]
        joints.append(replace(k, parent=k.child, child=k.parent, placement=inverse[k.child],
                              axis=_negated(k.axis)))
    reversed_names = {by_child[b].name for b in reversed_bodies[:-1]} | {joint}
    for j in model.joints:
        if j.name not in reversed_names:
            joints.append(replace(j, placement=moved(j.parent, j.placement)))
    new_loop = replace(new_cut, child_placement=inverse[new_cut.child], limits=None)
    loop_joints = []
    for j in model.loop_joints:
        if j.name == loop:
            loop_joints.append(new_loop)
            continue
        loop_joints.append(replace(j, placement=moved(j.parent, j.placement),
                                   child_placement=moved(j.child, j.child_placement)))
    bodies = {b.name: (_moved_body(b, frames[b.name]) if b.name in frames else b)
              for b in model.bodies}
    return _assembled(model, joints, bodies, tuple(loop_joints), moved)


def _assembled(model: Model, joints: list[Joint], bodies: dict[str, Body],
               loop_joints: tuple[Joint, ...], moved) -> Model:
    """The model with the new tree in depth-first order from the root (parents first)."""
    children: dict[str, list[Joint]] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j)
    order: list[Joint] = []
    stack = list(reversed(children.get(model.root, [])))
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(reversed(children.get(j.child, [])))
    index = {model.root: -1} | {j.child: i for i, j in enumerate(order)}
    frames = tuple(replace(f, placement=moved(f.body, f.placement)) if isinstance(f, Frame)
                   else f for f in model.frames)
    forces = []
    for e in model.force_elements:
        if isinstance(e, PointSpring):
            e = replace(e, point_a=_point(moved, e.body_a, e.point_a),
                        point_b=_point(moved, e.body_b, e.point_b))
        forces.append(e)
    return replace(model, bodies=tuple(bodies[j.child] for j in order), joints=tuple(order),
                   parents=tuple(index[j.parent] for j in order), frames=frames,
                   loop_joints=loop_joints, force_elements=tuple(forces))


def _point(moved, body: str, point) -> tuple[Scalar, Scalar, Scalar]:
    return tuple(moved(body, Transform(translation=tuple(point))).translation)  # type: ignore


__all__ = ["REVERSIBLE", "recut"]
