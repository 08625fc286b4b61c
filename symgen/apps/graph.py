"""A picture of a model's kinematic graph (``symgen info MODEL --graph FILE``,
:func:`draw_graph`): bodies, tree joints coloured by type and labelled, loop joints as dashed
red arcs marked as cuts, couplings as dotted arrows, the constraint embedding's aggregates
as shaded regions behind their bodies and the default frames as marked leaves. The layout is
:func:`symgen.apps.graph_layout.graph_layout`; this module draws it with matplotlib (the
``graph`` extra: ``pip install 'symgen[graph]'``), as SVG, PNG or PDF.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from symgen.apps.graph_layout import (
    FRAME_FONT,
    FRAME_LINE,
    FRAME_MARK,
    JOINT_FONT,
    NOTE_FONT,
    GraphLayout,
    GraphNode,
    graph_layout,
)
from symgen.errors import SymgenError
from symgen.model import Model

#: The file formats, by suffix.
FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf"}
#: Colour and legend text of each tree-joint type (and of a default frame's attachment).
JOINT_STYLES: dict[str, tuple[str, str]] = {
    "revolute": ("#1f5fbf", "revolute"),
    "continuous": ("#0e9aa7", "continuous"),
    "prismatic": ("#e07b00", "prismatic"),
    "helical": ("#8c564b", "helical"),
    "cylindrical": ("#9a9a00", "cylindrical"),
    "universal": ("#2e9e3e", "universal"),
    "planar": ("#d3479b", "planar"),
    "spherical": ("#7b3fbf", "spherical"),
    "free": ("#8a8a8a", "free (floating base)"),
    "fixed": ("#444444", "fixed"),
    "frame": ("#b0b0b0", "default frame, fixed on its body"),
}
LOOP_COLOUR, COUPLING_COLOUR, FRAME_COLOUR = "#d62728", "#c2185b", "#f2b01e"
#: Fill colours of the aggregates, in turn.
AGGREGATE_COLOURS = ("#fde7b0", "#cfe6f7", "#d7efcf", "#f5d3e4", "#e2daf2", "#f9dcc4")
#: Font size range (points) and the width (inches) the picture aims at.
FONT_RANGE, TARGET_WIDTH = (6.0, 10.0), 22.0
MONO = "DejaVu Sans Mono"


def _file_format(path: Path) -> str:
    """The format named by the file's suffix (one-line error otherwise)."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise SymgenError(f"--graph {path}: the file must end in .svg, .png or .pdf")
    return fmt


def _figure_class():
    """matplotlib's Figure, or a one-line error naming the extra that installs it."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise SymgenError("drawing the graph needs matplotlib: pip install "
                          "'symgen[graph]'") from None
    return Figure


def draw_graph(model: Model, path: str | Path, fontsize: float | None = None) -> Path:
    """Draw the kinematic graph of ``model`` into ``path`` (.svg, .png or .pdf): bodies,
    joints by type, loop joints and their cuts, couplings, the constraint embedding's
    aggregates and the default frames (module documentation). ``fontsize``: of the body
    labels, points (default: from the model's size). Returns the path."""
    path = Path(path)
    fmt = _file_format(path)
    figure = _figure(_figure_class(), graph_layout(model), fontsize)
    width, height = figure.get_size_inches()
    dpi = min(200.0, max(100.0, 4000.0 / max(width, height)))
    figure.savefig(path, format=fmt, dpi=dpi, bbox_inches="tight", pad_inches=0.2)
    return path


def _figure(figure_class, layout: GraphLayout, fontsize: float | None):
    """A figure whose axes fill it with one data unit = one em of the body font."""
    left, bottom, right, top = layout.bounds
    left, bottom, right, top = left - 1.0, bottom - 1.0, right + 1.0, top + 1.0
    lo, hi = FONT_RANGE
    fs = fontsize or min(hi, max(lo, 72.0 * TARGET_WIDTH / (right - left)))
    fig = figure_class(figsize=((right - left) * fs / 72.0, (top - bottom) * fs / 72.0))
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(left, right)
    ax.set_ylim(bottom, top)
    ax.set_axis_off()
    _aggregates(ax, layout, fs)
    _tree_edges(ax, layout, fs)
    patches = _nodes(ax, layout, fs)
    _arcs(ax, layout, fs, patches)
    _legend(ax, layout, fs)
    title = layout.title + (f"\n{layout.subtitle}" if layout.subtitle else "")
    ax.set_title(title, loc="left", fontsize=fs * 1.2, family=MONO)
    return fig


def _aggregates(ax, layout: GraphLayout, fs: float) -> None:
    """Each aggregate as a shaded region: rounded boxes around its bodies, joined along its
    tree edges."""
    from matplotlib.patches import FancyBboxPatch

    for k, agg in enumerate(layout.aggregates):
        colour = AGGREGATE_COLOURS[k % len(AGGREGATE_COLOURS)]
        members = set(agg.bodies)
        for edge in layout.edges:  # the bodies hanging from the aggregate's parent: joined
            if edge.parent == agg.parent and edge.child in members:  # along its bus
                xs, ys = zip(*edge.points[1:], strict=True)
                ax.plot(xs, ys, color=colour, lw=1.6 * fs, solid_capstyle="round",
                        solid_joinstyle="round", zorder=0)
        for body in agg.bodies:
            x0, y0, x1, y1 = layout.nodes[body].box.bounds
            ax.add_patch(FancyBboxPatch((x0, y0), x1 - x0, y1 - y0, fc=colour, ec="none",
                                        boxstyle="round,pad=0.6,rounding_size=0.8",
                                        zorder=0))
        for edge in layout.edges:
            if edge.parent in members and edge.child in members:
                xs, ys = zip(*edge.points, strict=True)
                ax.plot(xs, ys, color=colour, lw=1.6 * fs, solid_capstyle="round",
                        solid_joinstyle="round", zorder=0)


def _tree_edges(ax, layout: GraphLayout, fs: float) -> None:
    """The tree joints as elbows in their type's colour, labelled with the joint's name
    (bold: an independent coordinate of the constraint embedding)."""
    for edge in layout.edges:
        colour = JOINT_STYLES.get(edge.type, JOINT_STYLES["fixed"])[0]
        xs, ys = zip(*edge.points, strict=True)
        thin = edge.type in ("frame", "free")
        ax.plot(xs, ys, color=colour, lw=fs * (0.1 if thin else 0.17), zorder=2,
                solid_joinstyle="miter")
        if edge.label is not None:
            ax.text(edge.label.x - edge.label.width / 2, edge.label.y, edge.joint,
                    ha="left", va="center", fontsize=fs * JOINT_FONT, family=MONO,
                    color=colour, fontweight="bold" if edge.independent else "normal",
                    zorder=4)


def _nodes(ax, layout: GraphLayout, fs: float) -> dict:
    """The bodies as boxes (the root grey) with their labels, the default frames as marked
    stacked names; returns each body's patch (arcs are clipped at them)."""
    patches = {}
    for node in layout.nodes.values():
        if node.kind == "frames":
            _frames(ax, node, fs)
        else:
            patches[node.key] = _body(ax, node, fs)
    return patches


def _body(ax, node: GraphNode, fs: float):
    """One body's box, name and note; a diamond on its corner when it is a default frame."""
    from matplotlib.patches import FancyBboxPatch

    x0, y0, x1, y1 = node.box.bounds
    patch = FancyBboxPatch((x0, y0), x1 - x0, y1 - y0, fc="#e4e4e4" if node.kind == "root"
                           else "white", ec="#333333", lw=fs * 0.09, zorder=3,
                           boxstyle="round,pad=0,rounding_size=0.45")
    ax.add_patch(patch)
    x = node.box.x + (FRAME_MARK / 2 if node.frame else 0.0)
    name_y = node.box.y + (0.5 if len(node.lines) > 1 else 0.0)
    ax.text(x, name_y, node.lines[0], ha="center", va="center", fontsize=fs,
            family=MONO, zorder=4)
    if len(node.lines) > 1:
        ax.text(x, node.box.y - 0.65, node.lines[1], ha="center", va="center",
                fontsize=fs * NOTE_FONT, family=MONO, color="#666666", zorder=4)
    if node.frame:
        ax.plot([x0 + 0.4 + FRAME_MARK / 2], [name_y], marker="D", ms=fs * 0.6,
                mfc=FRAME_COLOUR, mec="#5a4200", mew=fs * 0.05, zorder=5)
    return patch


def _frames(ax, node: GraphNode, fs: float) -> None:
    """A body's default frames: one marked name a line."""
    x0, _, _, y1 = node.box.bounds
    for i, name in enumerate(node.lines):
        y = y1 - 0.15 - (i + 0.5) * FRAME_LINE
        ax.plot([x0 + 0.5], [y], marker="D", ms=fs * 0.6, mfc=FRAME_COLOUR, mec="#5a4200",
                mew=fs * 0.05, zorder=5)
        ax.text(x0 + 1.1, y, name, ha="left", va="center", fontsize=fs * FRAME_FONT,
                family=MONO, color="#333333", zorder=4)


def _arcs(ax, layout: GraphLayout, fs: float, patches: dict) -> None:
    """Loop joints (dashed red, "✂": the cut) and couplings (dotted arrows, a solid head),
    clipped at the boxes of the bodies they join, labelled on a free spot along them."""
    for arcs, colour, style, head in ((layout.loops, LOOP_COLOUR, "--", None),
                                      (layout.couplings, COUPLING_COLOUR, ":", "-|>")):
        for arc in arcs:
            ends = (patches[arc.start], patches[arc.end])
            _arc_patch(ax, layout, arc, ends, "-", colour, fs * 0.17, style, fs)
            if head is not None:
                _arc_patch(ax, layout, arc, ends, head, colour, 0.0, "-", fs)
            ax.text(arc.label.x, arc.label.y, arc.text, ha="center", va="center",
                    fontsize=fs * JOINT_FONT, family=MONO, color=colour, zorder=6,
                    bbox={"fc": "white", "ec": "none", "pad": 0.5, "alpha": 0.85})


def _arc_patch(ax, layout: GraphLayout, arc, ends: tuple, arrow: str, colour: str,
               width: float, style: str, fs: float) -> None:
    """One arc (``arrow``: matplotlib's arrow style) between the patches ``ends``."""
    from matplotlib.patches import FancyArrowPatch

    start, end = layout.nodes[arc.start].box, layout.nodes[arc.end].box
    ax.add_patch(FancyArrowPatch(
        (start.x, start.y), (end.x, end.y), connectionstyle=f"arc3,rad={arc.rad}",
        arrowstyle=arrow, mutation_scale=fs * 1.2, color=colour, lw=width, linestyle=style,
        patchA=ends[0], patchB=ends[1], zorder=1))


def _legend(ax, layout: GraphLayout, fs: float) -> None:
    """What the colours and line styles mean: the joint types drawn, loop joints,
    couplings, default frames, aggregates."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = []
    types = {e.type for e in layout.edges}
    for kind, (colour, text) in JOINT_STYLES.items():
        if kind in types:
            marker = "D" if kind == "frame" else None
            handles.append(Line2D([], [], color=colour, lw=fs * 0.17, marker=marker,
                                  mfc=FRAME_COLOUR, mec="#5a4200", label=text))
    if layout.loops:
        handles.append(Line2D([], [], color=LOOP_COLOUR, ls="--", lw=fs * 0.17,
                              label="✂ loop joint (cut)"))
    if layout.couplings:
        handles.append(Line2D([], [], color=COUPLING_COLOUR, ls=":", lw=fs * 0.17,
                              label="coupling (master → coupled)"))
    if any(e.independent for e in layout.edges):
        handles.append(Line2D([], [], ls="none", label="bold joint: independent coordinate"))
    for k, agg in enumerate(layout.aggregates):
        handles.append(Patch(fc=AGGREGATE_COLOURS[k % len(AGGREGATE_COLOURS)],
                             label=textwrap.fill(agg.text, 46, subsequent_indent="  ")))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0),
              prop={"family": MONO, "size": fs * 0.9}, frameon=False)


__all__ = ["FORMATS", "draw_graph"]
