"""Property-based fuzzing of the SDFormat reader, with the machinery of test_fuzz_readers.py
(its atoms, :func:`mutated` and :func:`fuzz`): every file goes through ``symgen.load``, a
model that loads through ``generate`` and ``emit_c``, and every outcome must be a result or
a :class:`symgen.SymgenError` (damaged files: a one-line ModelError), never a traceback.

Hypothesis writes SDF files as test_fuzz_readers.py writes URDF: structurally plausible ones
(random trees of up to 4 links, with or without a ``<world>``, several SDFormat versions,
every joint type, poses ``relative_to`` other frames in degrees or as quaternions, axes
``expressed_in`` other frames, ``<limit>``, ``<dynamics>``, ``<mimic>``, ``<frame>``s,
loop joints; numbers sane, huge, tiny, negative or not finite; nasty names) and damaged ones
(truncated, characters inserted or removed, random bytes, deep nesting, entity expansion).

The default run is ``FAST_EXAMPLES`` examples from seed ``SEED``; ``SYMGEN_FUZZ_EXAMPLES=N
pytest -m slow tests/build/test_fuzz_sdf.py -s`` runs N (default 2000) from
``SYMGEN_FUZZ_SEED`` (default 11) and prints the tally.
"""

from __future__ import annotations

import os
from xml.sax.saxutils import escape

import pytest
from hypothesis import strategies as st
from test_fuzz_readers import (
    MAX_BODIES,
    _attr,
    _num_text,
    _rare_pct,
    _triple,
    clean_names,
    fuzz,
    mutated,
    name_list,
    names,
    positive,
    rare,
    sane,
)

#: Examples in the default run (about 3 s), from a fixed seed.
FAST_EXAMPLES = 100
SEED = 7
SDF_JOINT_TYPES = ["revolute", "continuous", "prismatic", "fixed", "ball", "universal", "screw"]
VERSIONS = ["1.6", "1.7", "1.7", "1.8", "1.9", "1.10", "1.11"]
BAD_VERSIONS = ["1.5", "2", "x", "", "1.7.1"]


def _vec(draw, bad: int) -> str:
    """Three lengths or angles: space-separated in a clean document (SDFormat's form), as
    test_fuzz_readers' triples (commas, tabs, 2 or 4 numbers, bad values) otherwise."""
    if not bad:
        return " ".join(repr(draw(sane)) for _ in range(3))
    return _triple(draw, sane, bad)


def _text(value: str, escape_it: bool) -> str:
    return escape(value) if escape_it else value


def _pose(draw, bad: int, frames: list[str], legacy: bool) -> str:
    """A ``<pose>``: six numbers, maybe in degrees, a quaternion, relative_to a frame."""
    attrs = ""
    if frames and not legacy and draw(st.booleans()):
        attrs += f" relative_to={_attr(draw(st.sampled_from(frames)), True)}"
    if draw(st.booleans()):
        return f"<pose{attrs}>{_vec(draw, bad)} {_vec(draw, bad)}</pose>"
    if draw(st.booleans()):
        return f'<pose{attrs} degrees="true">{_vec(draw, bad)} 0 90 45</pose>'
    quat = " ".join(_num_text(draw, sane, bad) for _ in range(4))
    return f'<pose{attrs} rotation_format="quat_xyzw">{_vec(draw, bad)} {quat}</pose>'


def _inertial(draw, bad: int) -> str:
    a, b = draw(positive), draw(positive)
    moments = [repr(a), repr(b), repr(draw(st.floats(abs(a - b) + 1e-6, a + b)))]
    if bad and rare(draw, 4):
        moments = [_num_text(draw, positive, bad) for _ in range(3)]
    inertia = "".join(f"<{k}>{v}</{k}>" for k, v in zip(("ixx", "iyy", "izz"), moments,
                                                         strict=True))
    if draw(st.booleans()):
        inertia += "".join(f"<{k}>{_num_text(draw, st.just(0.0), bad)}</{k}>"
                           for k in ("ixy", "ixz", "iyz"))
    pose = f"<pose>{_vec(draw, bad)} 0 0 0</pose>" if draw(st.booleans()) else ""
    mass = f"<mass>{_num_text(draw, positive, bad)}</mass>" if not rare(draw, 10) else ""
    return f"<inertial>{pose}{mass}<inertia>{inertia}</inertia></inertial>"


def _axis(draw, tag: str, bad: int, frames: list[str], legacy: bool, leader: str | None) -> str:
    xyz = _vec(draw, bad) if not rare(draw, 3) else draw(
        st.sampled_from(["1 0 0", "0 1 0", "0 0 1"]))
    attrs = ""
    if frames and not legacy and rare(draw, 4):
        attrs = f" expressed_in={_attr(draw(st.sampled_from(frames)), True)}"
    parts = [f"<{tag}><xyz{attrs}>{xyz}</xyz>"]
    if rare(draw, 3):
        lower, upper = _num_text(draw, sane, bad), _num_text(draw, sane, bad)
        if not bad:
            lower, upper = repr(-draw(positive)), repr(draw(positive))
        parts.append(f"<limit><lower>{lower}</lower><upper>{upper}</upper>"
                     f"<effort>{_num_text(draw, positive, bad)}</effort></limit>")
    if rare(draw, 3):
        values = {"damping": positive, "friction": positive, "spring_reference": sane,
                  "spring_stiffness": positive}
        chosen = [k for k in values if draw(st.booleans())]
        parts.append("<dynamics>" + "".join(
            f"<{k}>{_num_text(draw, values[k], bad)}</{k}>" for k in chosen) + "</dynamics>")
    if leader is not None and rare(draw, 6):
        parts.append(f"<mimic joint={_attr(leader, True)}><multiplier>"
                     f"{_num_text(draw, sane, bad)}</multiplier></mimic>")
    return "".join(parts) + f"</{tag}>"


@st.composite
def sdf_documents(draw) -> str:
    """An SDF file: a random tree of up to MAX_BODIES + 1 links (sometimes a loop joint
    more); a clean one (bad = 0) has valid values and well-formed XML."""
    bad = draw(st.sampled_from([0, 0, 0, 0, 3, 10, 30]))
    esc = not bad or not rare(draw, 10)
    version = draw(st.sampled_from(VERSIONS))
    if bad and rare(draw, 8):
        version = draw(st.sampled_from(BAD_VERSIONS))
    legacy = version == "1.6"
    n = draw(st.integers(1, MAX_BODIES))
    # links, joints and frames share one namespace from SDFormat 1.7
    given = draw(name_list(bad, 2 * n + 2, "n"))
    links, joints = given[:n + 1], given[n + 1:]
    frames: list[str] = []  # names a pose or axis may refer to
    out = [f"<model name={_attr(draw(names if bad else clean_names), esc)}>"]
    for k, lname in enumerate(links):
        pose = _pose(draw, bad, frames, legacy) if draw(st.booleans()) else ""
        inertial = _inertial(draw, bad) if not rare(draw, 7) else ""
        out.append(f"  <link name={_attr(lname, esc)}>{pose}{inertial}</link>")
        frames.append(lname)
        if k == 0:
            continue
        jname = joints[k - 1]
        jtype = draw(st.sampled_from(SDF_JOINT_TYPES[:3] * 2 + SDF_JOINT_TYPES
                                     + (["gearbox", "weird", ""] if bad else [])))
        parent = links[draw(st.integers(0, k - 1))]
        if bad and rare(draw, 20):
            parent = draw(st.sampled_from(["world", *links]))  # floating links, cycles
        parts = [f"  <joint name={_attr(jname, esc)} type={_attr(jtype, esc)}>",
                 f"<parent>{_text(parent, esc)}</parent>",
                 f"<child>{_text(lname, esc)}</child>"]
        if draw(st.booleans()):
            parts.append(_pose(draw, bad, frames, legacy))
        if draw(st.booleans()):
            parts.append(_axis(draw, "axis", bad, frames, legacy, joints[0] if k > 1 else None))
        if jtype == "universal" or rare(draw, 10):
            parts.append(_axis(draw, "axis2", bad, frames, legacy, None))
        if jtype == "screw" and draw(st.booleans()):
            tag = draw(st.sampled_from(["screw_thread_pitch", "thread_pitch"]))
            parts.append(f"<{tag}>{_num_text(draw, sane, bad)}</{tag}>")
        parts.append("</joint>")
        out.append("".join(parts))
        frames.append(jname)
    if rare(draw, 5):  # the first link welded (or hinged) to the world
        out.append(f"  <joint name={_attr('w_' + links[0], esc)} type="
                   f"{_attr(draw(st.sampled_from(['fixed', 'revolute'])), esc)}>"
                   f"<parent>world</parent><child>{_text(links[0], esc)}</child></joint>")
    if n > 1 and rare(draw, 5):  # a loop joint: a second parent for the last link
        must = "<physics><simbody><must_be_loop_joint>true</must_be_loop_joint></simbody>" \
            "</physics>" if draw(st.booleans()) else ""
        out.append(f"  <joint name={_attr(joints[n], esc)} type=\"revolute\">"
                   f"<parent>{_text(links[0], esc)}</parent>"
                   f"<child>{_text(links[n], esc)}</child>{must}</joint>")
    if not legacy and rare(draw, 4):
        attached = draw(st.sampled_from(frames))
        out.append(f"  <frame name={_attr('f_' + attached, esc)} "
                   f"attached_to={_attr(attached, esc)}>{_pose(draw, bad, frames, legacy)}"
                   "</frame>")
    if rare(draw, 10):
        out.append('  <plugin name="p" filename="x.so"><anything/></plugin>')
    out.append("</model>")
    body = "\n".join(out)
    if _rare_pct(draw, 30):
        gravity = _vec(draw, bad)
        body = f'<world name="w"><gravity>{gravity}</gravity>\n{body}\n</world>'
    return f'<?xml version="1.0"?>\n<sdf version="{version}">\n{body}\n</sdf>\n'


@st.composite
def sdf_files(draw) -> bytes:
    kind = draw(st.sampled_from(["model"] * 6 + ["mutated"] * 3 + ["bytes", "deep", "entity"]))
    if kind == "bytes":
        return draw(st.binary(max_size=400))
    if kind == "deep":
        depth = draw(st.sampled_from([10, 1000, 20000]))
        return ('<sdf version="1.7"><model name="m">' + "<x>" * depth + "</x>" * depth
                + '<link name="a"/></model></sdf>').encode()
    if kind == "entity":
        entities = "".join(f'<!ENTITY a{k} "' + f"&a{k - 1};" * 10 + '">' for k in range(1, 9))
        return (f'<?xml version="1.0"?>\n<!DOCTYPE sdf [<!ENTITY a0 "xxxxxxxxxx">{entities}'
                f'<!ENTITY e SYSTEM "file:///etc/hostname">]>\n<sdf version="1.7">'
                f'<model name="&a{draw(st.integers(0, 8))};"><link name="a"/></model></sdf>'
                ).encode()
    text = draw(sdf_documents())
    if kind == "mutated":
        text = draw(mutated(text))
    return text.encode("utf-8", "surrogatepass")


@pytest.mark.filterwarnings("error::RuntimeWarning", "ignore::UserWarning")
def test_fuzz_sdf():
    fuzz("sdf", sdf_files(), FAST_EXAMPLES, SEED).check()


@pytest.mark.slow
@pytest.mark.filterwarnings("error::RuntimeWarning", "ignore::UserWarning")
def test_fuzz_sdf_big():
    """SYMGEN_FUZZ_EXAMPLES (default 2000) examples, seed SYMGEN_FUZZ_SEED (default 11)."""
    examples = int(os.environ.get("SYMGEN_FUZZ_EXAMPLES", "2000"))
    fuzz("sdf", sdf_files(), examples, int(os.environ.get("SYMGEN_FUZZ_SEED", "11"))).check()
