"""The layout of a model's kinematic graph (``symgen info MODEL --graph FILE``), without
drawing it: where every body, joint label, loop joint, coupling, aggregate and default frame
goes (:func:`graph_layout`); :mod:`symgen.apps.graph` draws it with matplotlib.

A layered tidy tree, root on top: the bodies at their depth in the tree, each subtree
pushed right of its left sibling just far enough that no two contours (the horizontal
extent of every row of the subtree, labels included) come closer than :data:`GAP`, a
parent centred over its first and last child (Reingold & Tilford 1981, with full
contours). Tree joints are elbow edges (down, across, down) labelled beside their last
segment; loop joints and couplings are arcs between the bodies they join; the default
frames of a body (:func:`symgen.formulations.tree.options.default_frames`) hang below it as
one stacked leaf. Lengths are in em of the body-label font, labels in a monospace font
whose characters are :data:`CHAR` em wide, so that a label's box is known without
rendering it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symgen.errors import SymgenError
from symgen.formulations.tree.options import default_frames
from symgen.model import Model
from symgen.model.scalars import scalar_text

#: Width of a character of the monospace label font, em (DejaVu Sans Mono: 0.602).
CHAR = 0.61
#: Distance between two depth rows (centre to centre), em.
ROW = 5.0
#: Smallest horizontal gap between two neighbouring subtrees, em.
GAP = 1.4
#: Horizontal padding inside a body's box, each side, em.
PAD = 0.6
#: Heights of a body box with one label line and with two.
BOX_HEIGHT = (1.7, 2.9)
#: Relative font sizes: joint labels, the second line of a body, default frames.
JOINT_FONT, NOTE_FONT, FRAME_FONT = 0.85, 0.75, 0.8
#: Width of the mark of a body that is itself a default frame, left of its name, em.
FRAME_MARK = 1.3
#: Line height of the stacked default frames, em.
FRAME_LINE = 1.15
#: Space between a joint's edge and its label, and height of a label's box, em.
LABEL_OFFSET, LABEL_HEIGHT = 0.35, 1.05
#: Curvature of the arcs of loop joints and couplings (matplotlib's ``arc3`` ``rad``).
LOOP_RAD, COUPLING_RAD = 0.35, 0.5
#: Where along an arc its label may sit (Bézier parameter), in order of preference.
LABEL_STOPS = (0.5, 0.38, 0.62, 0.26, 0.74, 0.15, 0.85)
#: The curvatures an arc may take (times its ``rad``), tried in turn, and its samples.
ARC_BENDS, ARC_SAMPLES = (1.0, 1.8, 0.45, 2.6), 40


@dataclass(frozen=True)
class Box:
    """An axis-aligned box: centre (x, y), width, height (em)."""

    x: float
    y: float
    width: float
    height: float

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """(left, bottom, right, top)."""
        return (self.x - self.width / 2, self.y - self.height / 2,
                self.x + self.width / 2, self.y + self.height / 2)

    def overlaps(self, other: Box) -> bool:
        a, b = self.bounds, other.bounds
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@dataclass(frozen=True)
class GraphNode:
    """A node: the root, a body, or the default frames of a body (``kind`` "root",
    "body", "frames"). ``lines``: its label (a body's name and, when the body carries
    merged links or frames not drawn, their count; the frames' names); ``frame``: the body
    is itself a default frame; ``depth``: its row."""

    key: str
    kind: str
    lines: tuple[str, ...]
    box: Box
    depth: int
    frame: bool = False


@dataclass(frozen=True)
class TreeEdge:
    """A tree joint (or, ``type`` "frame", the attachment of a body's default frames): its
    elbow polyline from the parent's box to the child's, and its label's box (None when
    unlabelled). ``independent``: an independent coordinate of the constraint embedding."""

    parent: str
    child: str
    joint: str
    type: str
    points: tuple[tuple[float, float], ...]
    label: Box | None = None
    independent: bool = False


@dataclass(frozen=True)
class ArcEdge:
    """A loop joint (from its parent body to its child body) or a coupling (from the
    master's body to the coupled joint's): the arc's ends, curvature and the label's
    box at its middle."""

    name: str
    type: str
    start: str
    end: str
    rad: float
    text: str
    label: Box


@dataclass(frozen=True)
class AggregateShade:
    """The bodies of one aggregate of the constraint embedding, the body (or root) it hangs
    from and its legend text."""

    bodies: tuple[str, ...]
    parent: str
    text: str


@dataclass(frozen=True)
class GraphLayout:
    """Everything :func:`symgen.apps.graph.draw_graph` draws, positions in em."""

    title: str
    subtitle: str
    nodes: dict[str, GraphNode]
    edges: tuple[TreeEdge, ...]
    loops: tuple[ArcEdge, ...] = ()
    couplings: tuple[ArcEdge, ...] = ()
    aggregates: tuple[AggregateShade, ...] = ()
    independent: tuple[str, ...] = field(default=())

    def boxes(self) -> list[tuple[str, Box]]:
        """Every node's box and every label's box, named."""
        out = [(key, node.box) for key, node in self.nodes.items()]
        out += [(f"label {e.joint}", e.label) for e in self.edges if e.label is not None]
        out += [(f"label {a.name}", a.label) for a in (*self.loops, *self.couplings)]
        return out

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """(left, bottom, right, top) of every box and edge."""
        boxes = [b.bounds for _, b in self.boxes()]
        for arc in (*self.loops, *self.couplings):
            start, end = self.nodes[arc.start].box, self.nodes[arc.end].box
            for i in range(ARC_SAMPLES + 1):
                x, y = arc_point(start, end, arc.rad, i / ARC_SAMPLES)
                boxes.append((x, y, x, y))
        return (min(b[0] for b in boxes), min(b[1] for b in boxes),
                max(b[2] for b in boxes), max(b[3] for b in boxes))


def text_width(text: str, font: float = 1.0) -> float:
    """Width of ``text`` in the monospace label font of relative size ``font``, em."""
    return len(text) * CHAR * font


# ----------------------------------------------------------------------------- the tree
@dataclass
class _Tree:
    """The nodes before placement: labels, sizes, rows, children and joints."""

    lines: dict[str, tuple[str, ...]] = field(default_factory=dict)
    kind: dict[str, str] = field(default_factory=dict)
    size: dict[str, tuple[float, float]] = field(default_factory=dict)
    depth: dict[str, int] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    joint: dict[str, tuple[str, str]] = field(default_factory=dict)  # child -> (name, type)
    frame_bodies: set[str] = field(default_factory=set)


def _frames_key(body: str) -> str:
    return f"frames:{body}"


def _body_lines(model: Model, body: str, shown: set[str]) -> tuple[str, ...]:
    """A body's label: its name and the count of its links and frames not drawn."""
    hidden = [f for f in model.frames if f.body == body and f.name not in shown]
    links = sum(f.link for f in hidden)
    parts = [f"+{links} merged link{'s' * (links != 1)}"] if links else []
    if len(hidden) > links:
        parts.append(f"+{len(hidden) - links} frame{'s' * (len(hidden) - links != 1)}")
    return (body, ", ".join(parts)) if parts else (body,)


def _add(tree: _Tree, key: str, kind: str, lines: tuple[str, ...], parent: str | None) -> None:
    """Add a node, its size and row, under ``parent`` (a body that is a default frame:
    after :attr:`_Tree.frame_bodies` is set)."""
    tree.lines[key], tree.kind[key], tree.children[key] = lines, kind, []
    if kind == "frames":
        width = 1.2 + max(text_width(n, FRAME_FONT) for n in lines) + PAD
        tree.size[key] = (width, len(lines) * FRAME_LINE + 0.3)
    else:
        width = max([text_width(lines[0]), *(text_width(n, NOTE_FONT) for n in lines[1:])])
        mark = FRAME_MARK if key in tree.frame_bodies else 0.0
        tree.size[key] = (width + 2 * PAD + mark, BOX_HEIGHT[len(lines) > 1])
    tree.depth[key] = 0 if parent is None else tree.depth[parent] + 1
    if parent is not None:
        tree.children[parent].append(key)


def _tree(model: Model) -> _Tree:
    """The root, the bodies in model order and the default frames of each body."""
    frames = set(default_frames(model))
    on_body: dict[str, list[str]] = {}
    for f in model.frames:
        if f.name in frames:
            on_body.setdefault(f.body, []).append(f.name)
    tree = _Tree()
    tree.frame_bodies = frames & set(model.body_names)
    _add(tree, model.root, "root", _body_lines(model, model.root, frames), None)
    for body, joint in zip(model.bodies, model.joints, strict=True):
        _add(tree, body.name, "body", _body_lines(model, body.name, frames), joint.parent)
        tree.joint[body.name] = (joint.name, joint.type.value)
    for body, names in on_body.items():
        _add(tree, _frames_key(body), "frames", tuple(names), body)
    return tree


# ------------------------------------------------------------------------ placement
def _top(tree: _Tree, key: str) -> float:
    """The y of a node's top: a body centred on its row, frames hanging from the top of a
    one-line box there."""
    height = BOX_HEIGHT[0] if tree.kind[key] == "frames" else tree.size[key][1]
    return -tree.depth[key] * ROW + height / 2


def _extent(tree: _Tree, key: str) -> dict[int, tuple[float, float]]:
    """The rows a node covers and its horizontal extent in each, about its x (its joint's
    label, right of the edge above it, included)."""
    width, height = tree.size[key]
    right = width / 2
    if key in tree.joint:
        right = max(right, LABEL_OFFSET + text_width(tree.joint[key][0], JOINT_FONT))
    bottom = _top(tree, key) - height
    rows, row = {}, tree.depth[key]
    while row == tree.depth[key] or -row * ROW + ROW / 2 > bottom:
        rows[row] = (-width / 2, right)
        row += 1
    return rows


def _merge(into: dict[int, list[float]], rows: dict, shift: float) -> None:
    """Widen the contour ``into`` by ``rows`` moved right by ``shift``."""
    for row, (left, right) in rows.items():
        if row in into:
            into[row] = [min(into[row][0], left + shift), max(into[row][1], right + shift)]
        else:
            into[row] = [left + shift, right + shift]


def _post_order(tree: _Tree, root: str) -> list[str]:
    """The nodes, every child before its parent (no recursion: chains may be long)."""
    order, stack = [], [root]
    while stack:
        key = stack.pop()
        order.append(key)
        stack.extend(tree.children[key])
    return order[::-1]


def _relative_x(tree: _Tree, root: str) -> dict[str, float]:
    """Each node's x relative to its parent (the root's: 0), from the contours (a first
    child's contour is taken over, not copied: a long chain stays linear)."""
    contour: dict[str, dict[int, list[float]]] = {}
    rel: dict[str, float] = {root: 0.0}
    for key in _post_order(tree, root):
        merged: dict[int, list[float]] = {}
        offsets: list[float] = []
        for kid in tree.children[key]:
            kid_rows = contour.pop(kid)
            if not offsets:
                merged, shift = kid_rows, 0.0
            else:
                common = [r for r in kid_rows if r in merged]
                shift = max((merged[r][1] + GAP - kid_rows[r][0] for r in common), default=0.0)
                _merge(merged, kid_rows, shift)
            offsets.append(shift)
        centre = (offsets[0] + offsets[-1]) / 2 if offsets else 0.0
        for kid, offset in zip(tree.children[key], offsets, strict=True):
            rel[kid] = offset - centre
        if centre:
            merged = {r: [left - centre, right - centre] for r, (left, right) in merged.items()}
        _merge(merged, _extent(tree, key), 0.0)
        contour[key] = merged
    return rel


def _absolute_x(tree: _Tree, root: str, rel: dict[str, float]) -> dict[str, float]:
    """Each node's x, the root at 0."""
    x = {root: 0.0}
    for key in reversed(_post_order(tree, root)):
        for kid in tree.children[key]:
            x[kid] = x[key] + rel[kid]
    return x


def _nodes(tree: _Tree, root: str) -> dict[str, GraphNode]:
    """The placed nodes."""
    x = _absolute_x(tree, root, _relative_x(tree, root))
    nodes = {}
    for key in _post_order(tree, root)[::-1]:
        width, height = tree.size[key]
        box = Box(x[key], _top(tree, key) - height / 2, width, height)
        nodes[key] = GraphNode(key, tree.kind[key], tree.lines[key], box, tree.depth[key],
                               key in tree.frame_bodies)
    return nodes


# -------------------------------------------------------------------------- edges
def _edge(parent: GraphNode, child: GraphNode, joint: str, kind: str,
          independent: set[str]) -> TreeEdge:
    """The elbow from a parent's box down to a child's, and the label beside its last leg."""
    top = child.box.y + child.box.height / 2
    bus = parent.box.y - parent.box.height / 2 - 0.45
    points = ((parent.box.x, parent.box.y - parent.box.height / 2), (parent.box.x, bus),
              (child.box.x, bus), (child.box.x, top))
    label = None
    if joint:
        width = text_width(joint, JOINT_FONT)
        label = Box(child.box.x + LABEL_OFFSET + width / 2, top + 0.1 + LABEL_HEIGHT / 2,
                    width, LABEL_HEIGHT)
    return TreeEdge(parent.key, child.key, joint, kind, points, label, joint in independent)


def _tree_edges(tree: _Tree, nodes: dict[str, GraphNode],
                independent: set[str]) -> tuple[TreeEdge, ...]:
    """The tree joints and the frames' attachments, in node order."""
    out = []
    for key, kids in tree.children.items():
        for kid in kids:
            joint, kind = tree.joint.get(kid, ("", "frame"))
            out.append(_edge(nodes[key], nodes[kid], joint, kind, independent))
    return tuple(out)


def _bend(start: Box, end: Box, rad: float) -> float:
    """``rad`` signed so that the arc bulges downwards (rightwards for a vertical chord),
    away from the tree edges above the bodies it joins."""
    dx, dy = end.x - start.x, end.y - start.y
    return rad if dx > 0 or (dx == 0 and dy > 0) else -rad


def arc_point(start: Box, end: Box, rad: float, t: float) -> tuple[float, float]:
    """The point at parameter ``t`` of matplotlib's ``arc3`` between two boxes' centres: a
    quadratic Bézier whose control point is ``rad`` times the chord off its middle."""
    (x0, y0), (x2, y2) = (start.x, start.y), (end.x, end.y)
    cx, cy = (x0 + x2) / 2 + rad * (y2 - y0), (y0 + y2) / 2 - rad * (x2 - x0)
    return ((1 - t) ** 2 * x0 + 2 * t * (1 - t) * cx + t * t * x2,
            (1 - t) ** 2 * y0 + 2 * t * (1 - t) * cy + t * t * y2)


def _crossings(start: Box, end: Box, rad: float, obstacles: list[tuple[Box, int]]) -> int:
    """The weighted count of the arc's sample points in an obstacle other than its ends
    (``obstacles``: boxes with their weights)."""
    count = 0
    for i in range(1, ARC_SAMPLES):
        x, y = arc_point(start, end, rad, i / ARC_SAMPLES)
        point = Box(x, y, 0.0, 0.0)
        count += sum(w for b, w in obstacles if b not in (start, end) and b.overlaps(point))
    return count


def _curvature(start: Box, end: Box, rad: float, obstacles: list[tuple[Box, int]]) -> float:
    """The arc's signed curvature: of ``rad`` times :data:`ARC_BENDS`, bulging down or
    up, the first that crosses the fewest obstacles."""
    options = [sign * _bend(start, end, rad * k) for k in ARC_BENDS for sign in (1, -1)]
    return min(options, key=lambda r: _crossings(start, end, r, obstacles))


def _arc(name: str, kind: str, start: GraphNode, end: GraphNode, rad: float, text: str,
         taken: list[Box], obstacles: list[tuple[Box, int]]) -> ArcEdge:
    """An arc between two nodes, around the ``obstacles`` where it can, its label on the
    first free spot along it (else at its middle); the label joins ``taken``."""
    rad = _curvature(start.box, end.box, rad, obstacles)
    width = text_width(text, JOINT_FONT) + 0.4
    spots = []
    for shift in (0.0, -LABEL_HEIGHT, LABEL_HEIGHT):
        for t in LABEL_STOPS:
            x, y = arc_point(start.box, end.box, rad, t)
            spots.append(Box(x, y + shift, width, LABEL_HEIGHT))
    label = next((b for b in spots if not any(b.overlaps(o) for o in taken)), spots[0])
    taken.append(label)
    return ArcEdge(name, kind, start.key, end.key, rad, text, label)


def _obstacles(nodes: dict[str, GraphNode], taken: list[Box]) -> list[tuple[Box, int]]:
    """What arcs go around: the nodes (weight 10) and the labels placed so far (1)."""
    boxes = [n.box for n in nodes.values()]
    return [(b, 10) for b in boxes] + [(b, 1) for b in taken if b not in boxes]


def _loops(model: Model, nodes: dict[str, GraphNode], taken: list[Box]) -> tuple[ArcEdge, ...]:
    """One arc per loop joint, from its parent body to its child body, marked as a cut."""
    return tuple(_arc(j.name, j.type.value, nodes[j.parent], nodes[j.child], LOOP_RAD,
                      f"✂ {j.name}", taken, _obstacles(nodes, taken))
                 for j in model.loop_joints)


def _couplings(model: Model, nodes: dict[str, GraphNode],
               taken: list[Box]) -> tuple[ArcEdge, ...]:
    """One arrow per coupling, from its master's body to the coupled joint's body."""
    child = {j.name: j.child for j in model.joints}
    out = []
    for c in model.couplings:
        if c.joint in child and c.master in child:
            text = f"{c.joint} = {scalar_text(c.ratio)}·{c.master}"
            out.append(_arc(c.joint, "coupling", nodes[child[c.master]], nodes[child[c.joint]],
                            COUPLING_RAD, text, taken, _obstacles(nodes, taken)))
    return tuple(out)


# ------------------------------------------------------------------- embedding, title
def _embedding(model: Model) -> tuple[tuple[AggregateShade, ...], tuple[str, ...], str]:
    """The aggregates of the constraint embedding, the independent joints and a line saying
    what the embedding is (or why it is not available)."""
    if not model.loop_joints and not model.couplings:
        return (), (), ""
    from symgen.loops import analyse_loops
    from symgen.loops.embedding import describe_embedding

    try:
        analysis = analyse_loops(model) if model.loop_joints else None
        report, _ = describe_embedding(model, analysis)
    except SymgenError as exc:
        return (), (), f"loop analysis: not available ({exc})"
    if not report["available"]:
        return (), (), f"constraint embedding: not available ({report['reason']})"
    child = {j.name: j.child for j in model.joints}
    shades = []
    for k, agg in enumerate(report["aggregates"], 1):
        closes = [*(f"loop {n}" for n in agg["loops"]), *(f"coupling {n}" for n in
                                                           agg["coupled"])]
        shades.append(AggregateShade(tuple(child[j] for j in agg["joints"]), agg["parent"],
                                     f"aggregate {k}: {', '.join(closes)}"))
    independent = tuple(sorted({n.split("[")[0] for n in report["independent"]}))
    line = (f"constraint embedding: {len(shades)} aggregate{'s' * (len(shades) != 1)}, "
            f"independent coordinates {', '.join(report['independent']) or 'none'}")
    return tuple(shades), independent, line


def _title(model: Model) -> str:
    loops = len(model.loop_joints)
    return (f"{model.name}: {model.nbodies} moving bodies, nq = {model.nq}, nv = {model.nv}, "
            f"{loops} loop{'s' * (loops != 1)}")


def graph_layout(model: Model) -> GraphLayout:
    """The kinematic graph of ``model`` laid out (module documentation): bodies, tree
    joints, loop joints, couplings, the constraint embedding's aggregates and the default
    frames, in em of the body-label font."""
    tree = _tree(model)
    nodes = _nodes(tree, model.root)
    aggregates, independent, line = _embedding(model)
    edges = _tree_edges(tree, nodes, set(independent) if model.loop_joints else set())
    taken = [n.box for n in nodes.values()] + [e.label for e in edges if e.label is not None]
    loops = _loops(model, nodes, taken)
    return GraphLayout(_title(model), line, nodes, edges, loops,
                       _couplings(model, nodes, taken), aggregates, independent)


__all__ = ["ArcEdge", "AggregateShade", "Box", "GraphLayout", "GraphNode", "TreeEdge",
           "arc_point", "graph_layout", "text_width"]
