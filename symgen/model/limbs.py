"""The ends of a model's limbs, from its kinematic structure: the frames a user acts through
(feet, hands, tool frames), which are the default frames of the per-frame kernels.

A limb ends at a leaf of the moving tree (a body no joint carries further), or at a *hand*:
a body whose moving children are short chains (fingers) compared with the chain that leads
to it. At that end, the links of the description merged into it that end the description's
tree (:attr:`Frame.leaf`: soles, ``tool0``, a TCP) are the end frames; links fixed to a body
in the middle of the tree (a torso's IMU, camera, logo or arm mounts) never are.
"""

from __future__ import annotations

import math
import re

from symgen.model.elements import Frame
from symgen.model.joint_types import JointType
from symgen.model.model import Model

#: Words of sensor and visual frame names. Only a tie-break among the tree-ending links of
#: one limb end, which the structure has chosen: those named so are left out, and a limb
#: end with nothing else stands for itself (a head's camera optical frames: the head).
SENSOR_WORDS = frozenset({
    "imu", "camera", "optical", "sensor", "laser", "lidar", "logo", "led", "accelerometer",
    "gyrometer", "gyro", "stereo", "rgb", "rgbd", "depth", "sonar", "antenna", "range",
    "touch", "fsr",
})

#: Joints that carry a whole robot rather than a limb (``--floating-base``, a mobile base).
BASE_JOINTS = (JointType.FREE, JointType.PLANAR)


def sensor_named(name: str) -> bool:
    """A word of ``name`` (split at ``_``, digits and camelCase) is in :data:`SENSOR_WORDS`."""
    words = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", name)
    return any(w.lower() in SENSOR_WORDS for w in words)


def _norm(v) -> float:
    return math.sqrt(sum(float(x) ** 2 for x in v))


def _offset(model: Model, i: int) -> float:
    """The distance from body ``i``'s parent frame to its joint (the joint's placement, with
    the parameters at their defaults)."""
    return _norm(model.resolve().joints[i].placement.translation)


def _chain_length(model: Model, i: int) -> float:
    """The length (sum of joint offsets) of the chain from the nearest branching ancestor
    (a body carrying two or more moving bodies), base joint (free or planar: a floating
    trunk is no limb) or the root down to body ``i``."""
    length = 0.0
    while i >= 0 and model.joints[i].type not in BASE_JOINTS:
        length += _offset(model, i)
        i = model.parents[i]
        if i >= 0 and len(model.children(i)) > 1:
            break
    return length


def _reach(model: Model, i: int) -> float:
    """The longest path (sum of joint offsets, then of the tree-ending link) from body
    ``i``'s parent frame down to an end of the description (the subtree walked without
    recursion: a chain may be thousands of bodies deep)."""
    subtree, stack = [], [i]
    while stack:  # preorder: each body before its children
        k = stack.pop()
        subtree.append(k)
        stack.extend(model.children(k))
    frames = model.resolve().frames
    reach: dict[int, float] = {}
    for k in reversed(subtree):  # children before their parent
        children = model.children(k)
        name = model.bodies[k].name
        tips = [_norm(f.placement.translation) for f in frames
                if f.link and f.leaf and f.body == name] if not children else []
        below = [reach[c] for c in children] + tips
        reach[k] = _offset(model, k) + max(below, default=0.0)
    return reach[i]


def is_hand(model: Model, i: int) -> bool:
    """Body ``i`` carries two or more moving chains, all shorter (in length) than the chain
    that leads to it: fingers on an arm's palm, not legs on a trunk nor arms on a torso.
    Lengths, not joint counts, so that a finger's many virtual joints count for little."""
    children = model.children(i)
    if len(children) < 2:
        return False
    return max(_reach(model, c) for c in children) < _chain_length(model, i)


def _hand_above(model: Model, i: int) -> int | None:
    """The hand nearest the root among body ``i`` and its ancestors, or None."""
    found = None
    while i >= 0:
        if is_hand(model, i):
            found = i
        i = model.parents[i]
    return found


def _tree_ends(model: Model, body: str) -> list[Frame]:
    """The links merged into ``body`` that end the description's tree, except those named
    like sensors (:data:`SENSOR_WORDS`, a tie-break: a limb end whose tree-ending links are
    all sensors, such as a head with its cameras, stands for itself)."""
    ends = [f for f in model.frames if f.link and f.leaf and f.body == body]
    return [f for f in ends if not sensor_named(f.name)]


def palm(model: Model, i: int) -> str:
    """The link of hand ``i`` its fingers hang from: the deepest link, in the fixed part of
    the description merged into the hand's body, that carries every finger joint (the
    body's own name when a finger hangs from it directly)."""
    body = model.bodies[i].name
    links = {f.name: f for f in model.frames if f.link and f.body == body}
    carrier = {j: f.name for f in links.values() for j in f.joints}
    paths = []
    for c in model.children(i):
        link, path = carrier.get(model.joints[c].name, body), []
        while link in links:
            path.insert(0, link)
            link = links[link].parent
        paths.append(path)
    common = body
    for step in zip(*paths, strict=False):
        if len(set(step)) > 1:
            break
        common = step[0]
    return common


def _walk_to_ends(model: Model, i: int) -> int:
    """From a leaf ``i`` with no tree-ending link, up its unbranched chain to the nearest
    body that has some (a one-finger gripper's tool frames on the wrist); ``i`` if none."""
    k = i
    while not _tree_ends(model, model.bodies[k].name):
        parent = model.parents[k]
        if parent < 0 or len(model.children(parent)) > 1:
            return i
        k = parent
    return k


def limb_ends(model: Model) -> list[int]:
    """The bodies where the limbs end, in model order: the outermost hand above each leaf of
    the moving tree that no loop joint closes on (when every one is closed: none if the
    model declares frames, else all of them), else the leaf (or the body up its unbranched
    chain that carries its tree-ending links)."""
    leaves = [i for i in range(len(model.bodies)) if not model.children(i)]
    # a leaf a loop joint closes on is no limb end: the mechanism goes on through the loop
    # (the Delta's rods and lower arms); when every leaf is closed (a four-bar, a five-bar)
    # the declared frames are the ends, or without any the leaves stand for them
    closing = {model.body_index(b) for j in model.loop_joints for b in (j.parent, j.child)
               if b != model.root}
    open_leaves = [i for i in leaves if i not in closing]
    if not open_leaves and any(not f.link and f.body != model.root for f in model.frames):
        return []
    leaves = open_leaves or leaves
    ends: set[int] = set()
    for i in leaves:
        hand = _hand_above(model, i)
        ends.add(hand if hand is not None else _walk_to_ends(model, i))
    return sorted(ends)


def end_names(model: Model, i: int) -> list[str]:
    """The frames (or the body) standing for limb end ``i``: its tree-ending links; else,
    for a hand, its palm; else the body itself."""
    body = model.bodies[i].name
    ends = _tree_ends(model, body)
    if ends:
        return [f.name for f in ends]
    return [palm(model, i)] if is_hand(model, i) else [body]


__all__ = ["BASE_JOINTS", "SENSOR_WORDS", "end_names", "is_hand", "limb_ends", "palm",
           "sensor_named"]
