"""The picture of a model's kinematic graph (symgen.apps.graph_layout, symgen.apps.graph,
``symgen info MODEL --graph FILE``): the layout's properties on open trees, loops and
couplings, and the rendering of Talos, the Delta robot and a chain of three four-bars."""

from __future__ import annotations

import functools
import itertools
import sys

import pytest
from cli_runner import run_split
from loop_mechanisms import four_bar_chain
from mechanisms import n_four_bar
from paths import EXAMPLES

from symgen import load
from symgen.apps.graph import draw_graph
from symgen.apps.graph_layout import Box, arc_point, graph_layout
from symgen.errors import SymgenError
from symgen.formulations.tree.options import default_frames
from symgen.io.robots import robot_urdf, spatial_chain

MECHANISMS = {
    "delta": lambda: load(EXAMPLES / "delta_robot.yaml"),
    "four_bar_chain_3": lambda: four_bar_chain(3),
    "iftomm_row_3": lambda: n_four_bar(3),
    "geared_arm": lambda: load(EXAMPLES / "geared_arm.yaml"),
}


def _talos():
    try:
        return load(robot_urdf("talos"), floating_base=True)
    except SymgenError as exc:
        pytest.skip(str(exc))


@functools.cache
def _model(name: str):
    return _talos() if name == "talos" else MECHANISMS[name]()


@functools.cache
def _layout(name: str):
    return graph_layout(_model(name))


@pytest.fixture(scope="module", params=[*MECHANISMS, "talos"])
def name(request):
    return request.param


@pytest.fixture
def model(name):
    return _model(name)


@pytest.fixture
def layout(name):
    return _layout(name)


def test_every_body_is_placed_once(model, layout):
    bodies = [k for k, n in layout.nodes.items() if n.kind != "frames"]
    assert sorted(bodies) == sorted([model.root, *model.body_names])
    positions = [(n.box.x, n.box.y) for n in layout.nodes.values()]
    assert len(set(positions)) == len(positions)


def test_no_two_boxes_overlap(layout):
    """Bodies, default frames, joint labels and arc labels: nothing drawn over anything."""
    boxes = layout.boxes()
    clashes = [(a, b) for (a, p), (b, q) in itertools.combinations(boxes, 2) if p.overlaps(q)]
    assert not clashes


def test_parents_above_children(model, layout):
    for edge in layout.edges:
        parent, child = layout.nodes[edge.parent], layout.nodes[edge.child]
        assert parent.box.y > child.box.y
        assert child.depth == parent.depth + 1
    joints = {e.joint: e.type for e in layout.edges if e.type != "frame"}
    assert joints == {j.name: j.type.value for j in model.joints}


def test_every_loop_joint_and_coupling_is_drawn(model, layout):
    assert [a.name for a in layout.loops] == [j.name for j in model.loop_joints]
    for arc, joint in zip(layout.loops, model.loop_joints, strict=True):
        assert (arc.start, arc.end) == (joint.parent, joint.child)
        assert joint.name in arc.text and "✂" in arc.text
    assert [a.name for a in layout.couplings] == [c.joint for c in model.couplings]


def test_arcs_go_around_other_bodies(layout):
    """Each loop or coupling arc passes through no box but its two ends'."""
    for arc in (*layout.loops, *layout.couplings):
        start, end = layout.nodes[arc.start].box, layout.nodes[arc.end].box
        others = [n.box for n in layout.nodes.values() if n.box not in (start, end)]
        points = [Box(*arc_point(start, end, arc.rad, i / 40), 0.0, 0.0) for i in range(41)]
        assert not [b for b in others for p in points if b.overlaps(p)], arc.name


def test_default_frames_are_marked(model, layout):
    shown = {n.key for n in layout.nodes.values() if n.frame}
    shown |= {name for n in layout.nodes.values() if n.kind == "frames" for name in n.lines}
    assert shown == set(default_frames(model))


def test_aggregates_of_the_embedding():
    """The chain of three four-bars: one aggregate per four-bar, its crank, coupler and
    rocker, hanging from the previous rocker; the Delta robot: one aggregate of every
    body; the independent joints are the embedding's."""
    chain = _layout("four_bar_chain_3")
    assert [set(a.bodies) for a in chain.aggregates] == [
        {f"crank{k}", f"coupler{k}", f"rocker{k}"} for k in range(3)]
    assert [a.parent for a in chain.aggregates] == ["ground", "rocker0", "rocker1"]
    assert "3 aggregates" in chain.subtitle
    delta, layout = _model("delta"), _layout("delta")
    assert [set(a.bodies) for a in layout.aggregates] == [set(delta.body_names)]
    bold = {e.joint for e in layout.edges if e.independent}
    assert bold == {"motor1", "motor2", "motor3"}


def test_open_tree_has_no_loops_or_aggregates():
    layout = _layout("talos")
    assert (layout.loops, layout.couplings, layout.aggregates, layout.subtitle) == (
        (), (), (), "")
    assert layout.title == "talos: 33 moving bodies, nq = 39, nv = 38, 0 loops"
    assert {e.type for e in layout.edges} == {"free", "revolute", "frame"}


def test_long_chain_is_laid_out_without_recursion():
    layout = graph_layout(spatial_chain(1200))
    xs = {round(n.box.x, 9) for n in layout.nodes.values() if n.kind != "frames"}
    assert len(layout.nodes) >= 1201 and len(xs) == 1  # a chain: one column


# ----------------------------------------------------------------------------- drawing
RENDERED = {
    "talos": _talos,
    "delta_robot": MECHANISMS["delta"],
    "four_bar_chain_3": MECHANISMS["four_bar_chain_3"],
}


@pytest.mark.parametrize("name", RENDERED)
def test_renders_png(name, tmp_path):
    image = pytest.importorskip("matplotlib.image")
    path = draw_graph(RENDERED[name](), tmp_path / f"{name}.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = image.imread(path)
    assert min(pixels.shape[:2]) > 400 and pixels.std() > 0.05
    assert path.stat().st_size > 30_000


def test_renders_svg_and_pdf(tmp_path):
    pytest.importorskip("matplotlib")
    model = four_bar_chain(1)
    assert "<svg" in draw_graph(model, tmp_path / "g.svg").read_text()
    assert draw_graph(model, tmp_path / "g.pdf").read_bytes()[:5] == b"%PDF-"


def test_unknown_suffix_is_one_line_error(tmp_path):
    with pytest.raises(SymgenError, match=r"must end in \.svg, \.png or \.pdf"):
        draw_graph(four_bar_chain(1), tmp_path / "graph.jpg")


def test_missing_matplotlib_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(SymgenError, match=r"pip install 'symgen\[graph\]'"):
        draw_graph(four_bar_chain(1), tmp_path / "graph.png")


def test_cli_graph(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "four_bar.svg"
    result = run_split("info", str(EXAMPLES / "four_bar.yaml"), "--graph", str(out))
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.stderr
    assert "four_bar" in result.stdout and "<svg" in out.read_text()
    bad = run_split("info", str(EXAMPLES / "four_bar.yaml"), "--graph", str(tmp_path / "g.gif"))
    assert bad.exit_code == 2
    assert bad.stderr.strip().count("\n") == 0 and ".svg, .png or .pdf" in bad.stderr
