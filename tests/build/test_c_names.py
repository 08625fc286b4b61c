"""Names from model files never change the meaning of the generated C (issue 11, items 3, 4,
5, 7 and the C literals of item 2).

Hostile names (``*/``, ``/*``, ``??/``, backslashes, newlines, C keywords, non-ASCII) must
give C that compiles under the strict flags with exactly the expected external symbols and
declarations (gcc's own preprocessor strips the comments, ``nm`` lists the symbols), and
kernels whose values match ``symgen.reference``. Names that become equal as C identifiers
still give one kernel each; an invalid ``--prefix`` is an error, never rewritten.
"""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest
from cli_runner import run_split
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import EXAMPLES

import symgen
from symgen import reference as ref
from symgen.backends.c99.emit import emit_c
from symgen.backends.c99.printer import CPrinter
from symgen.cnames import c_comment_text, c_identifier, check_prefix, default_prefix
from symgen.errors import SymgenError
from symgen.generate import KernelSet, Options, assign_program_names
from symgen.io.builder import ModelBuilder
from symgen.ir.expr import Num
from symgen.ir.program import ProgramBuilder

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Werror"]
ROBOT = "x*/ int oops; /* ärm"
#: frame -> position on the last body (distinct, so a kernel given the wrong frame fails)
FRAMES = {"tool-1": (0.1, 0.0, 0.0), "tool_1": (0.0, 0.1, 0.0), "tip": (0.0, 0.0, 0.1),
          "tip_batch": (0.1, 0.1, 0.0), "腕 ??/": (0.0, 0.1, 0.1), "static": (0.2, 0.0, 0.1)}
#: the documented names (symgen.generate.assign_program_names) of the frame Jacobians
JACOBIANS = {"tool-1": "frame_jacobian_tool_1_2", "tool_1": "frame_jacobian_tool_1",
             "tip": "frame_jacobian_tip", "tip_batch": "frame_jacobian_tip_batch_2",
             "腕 ??/": "frame_jacobian_u8155", "static": "frame_jacobian_static"}
KERNELS = ["mass_matrix", "frame_jacobian", "forward_kinematics"]


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def hostile_model():
    b = ModelBuilder(ROBOT)
    m = b.parameter("static", 1.5)  # a C keyword as a parameter name
    b.body("a*/b", mass=1.0, com=(0.1, 0.0, 0.0), inertia=(0.01, 0.02, 0.03))
    b.body("l²", mass=m, com=(0.0, 0.1, 0.0), inertia=(0.02, 0.01, 0.03))
    b.body("for ??/", mass=0.7, com=(0.0, 0.0, 0.1), inertia=(0.03, 0.02, 0.01))
    b.joint("x*/ int oops; /*", "revolute", "world", "a*/b", axis=(0, 0, 1))
    b.joint("int\\", "revolute", "a*/b", "l²", xyz=(0.3, 0.0, 0.0), axis=(0, 1, 0))
    b.joint("line\nbreak /* c", "prismatic", "l²", "for ??/", xyz=(0.0, 0.2, 0.0),
            axis=(1, 0, 0))
    for name, xyz in FRAMES.items():
        b.frame(name, "for ??/", xyz=xyz)
    return b.build()


@pytest.fixture(scope="module")
def hostile():
    return symgen.generate(hostile_model(), KERNELS)


def _unescape(text: str) -> str:
    """Inverse of c_comment_text, written independently from its rules (module docstring)."""
    out, i = [], 0
    while i < len(text):
        if text[i] != "\\":
            out.append(text[i])
            i += 1
        elif text[i + 1] in "/*?":
            out.append(text[i + 1])
            i += 2
        elif text[i + 1] == "x":
            out.append(chr(int(text[i + 2:i + 4], 16)))
            i += 4
        else:
            width = 4 if text[i + 1] == "u" else 8
            out.append(chr(int(text[i + 2:i + 2 + width], 16)))
            i += 2 + width
    return "".join(out)


def _safe_in_comment(text: str) -> bool:
    return (all(" " <= ch <= "~" for ch in text) and "*/" not in text and "/*" not in text
            and "??" not in text and not text.endswith("\\"))


@pytest.mark.parametrize("text", ["a*/b", "x*/ int oops; /*", "j??/", "??=", "back\\", "*/*/",
                                  "???/", "l²", "ärm\n", "\x07", "😀", "/**/"])
def test_comment_text_is_safe_and_reversible(text):
    escaped = c_comment_text(text)
    assert _safe_in_comment(escaped), escaped
    assert _unescape(escaped) == text


@settings(max_examples=300, deadline=None, derandomize=True)  # fixed examples
@given(st.text())
def test_comment_text_is_safe_and_reversible_for_any_text(text):
    escaped = c_comment_text(text)
    assert _safe_in_comment(escaped)
    assert _unescape(escaped) == text


@pytest.mark.parametrize(
    ("name", "ident"),
    [
        ("ärm", "arm"),  # NFKD: a + COMBINING DIAERESIS, the mark dropped
        ("l²", "l2"),  # NFKD of SUPERSCRIPT TWO is "2"
        ("ﬁnger", "finger"),  # NFKD of the ligature U+FB01 is "fi"
        ("腕", "u8155"),  # no decomposition: the code point
        ("tool-1", "tool_1"),
        ("x*/ int oops; /*", "x_int_oops"),
        ("__Init__", "Init"),  # no leading underscore, no double underscore
        ("-", "x"),
    ],
)
def test_identifier_rule(name, ident):
    assert c_identifier(name) == ident


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text())
def test_identifier_is_always_a_safe_fragment(name):
    assert re.fullmatch(r"[A-Za-z0-9]+(_[A-Za-z0-9]+)*", c_identifier(name))


@pytest.mark.parametrize("real", ["double", "float"])
def test_hostile_names_compile_to_exactly_the_expected_declarations(hostile, tmp_path, real):
    src = emit_c(hostile, real=real)
    assert src.prefix == "x_int_oops_arm"
    src.write(tmp_path)
    obj = tmp_path / "k.o"
    run = subprocess.run(["gcc", *STRICT, "-c", str(tmp_path / src.source_name), "-o", str(obj)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[:3000]
    symbols = subprocess.run(["nm", "-g", "--defined-only", str(obj)], capture_output=True,
                             text=True, check=True).stdout.split()[2::3]
    expected = {f"x_int_oops_arm_{p}{s}" for p in hostile.programs for s in ("", "_batch")}
    assert set(symbols) == expected
    # the header without its comments (gcc's preprocessor): only the guard, the typedef,
    # the size macros and the prototypes
    code = subprocess.run(["gcc", "-std=c99", "-fpreprocessed", "-dD", "-E", "-P",
                           str(tmp_path / src.header_name)], capture_output=True, text=True,
                          check=True).stdout
    allowed = re.compile(
        r"#ifndef X_INT_OOPS_ARM_H|#define X_INT_OOPS_ARM_H|#include <stddef\.h>|#endif"
        rf"|typedef {real} x_int_oops_arm_real;|#define X_INT_OOPS_ARM_N[A-Z]+ \d+"
        r"|void x_int_oops_arm_\w+\((const )?x_int_oops_arm_real \w+\[\d+\](, (const )?"
        r"x_int_oops_arm_real \w+\[\d+\])*\);"
        r"|void x_int_oops_arm_\w+_batch\(size_t count(, (const )?x_int_oops_arm_real \*\w+)+\);")
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    assert [line for line in lines if not allowed.fullmatch(line)] == []
    assert sum(line.startswith("void ") for line in lines) == len(expected)


def test_colliding_frame_names_each_keep_a_kernel(hostile):
    assert {hostile.frame_of[name]: name for name in hostile.frame_of} == JACOBIANS
    assert list(hostile.programs) == ["mass_matrix", *JACOBIANS.values(), "forward_kinematics"]
    header = symgen.emit_c(hostile).header
    assert "frame_jacobian_tool_1_2: frame 'tool-1'" in header  # the rename is documented


def test_program_names_rule_orders_exact_names_first():
    targets = [("frame_jacobian", "tool-1"), ("frame_jacobian", "tool_1"),
               ("frame_jacobian", "tip"), ("frame_jacobian", "tip_batch"),
               ("frame_jacobian", "tool_1_2"), ("mass_matrix", None)]
    names = assign_program_names(targets)
    assert names == {
        ("frame_jacobian", "tool-1"): "frame_jacobian_tool_1_3",  # after the exact names
        ("frame_jacobian", "tool_1"): "frame_jacobian_tool_1",
        ("frame_jacobian", "tip"): "frame_jacobian_tip",
        ("frame_jacobian", "tip_batch"): "frame_jacobian_tip_batch_2",
        ("frame_jacobian", "tool_1_2"): "frame_jacobian_tool_1_2",
        ("mass_matrix", None): "mass_matrix",
    }
    # a frame name can also complete another kernel's name
    names = assign_program_names([("frame_jacobian", "dot_v_tip"),
                                  ("frame_jacobian_dot_v", "tip")])
    assert list(names.values()) == ["frame_jacobian_dot_v_tip", "frame_jacobian_dot_v_tip_2"]


def test_hostile_kernels_match_the_reference(hostile):
    """Through cffi (whose parser would reject conflicting declarations), every kernel is
    compared with symgen.reference: the Jacobians of frames whose names collide as C
    identifiers each belong to their own frame."""
    model = hostile.model
    lib = symgen.compile_kernels(hostile)
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = ref.random_configuration(model, rng)
        np.testing.assert_allclose(lib.mass_matrix(q), ref.mass_matrix(model, q),
                                   rtol=1e-12, atol=1e-12)
        for frame, name in JACOBIANS.items():
            want = ref.frame_jacobian(model, q, frame, "local_world_aligned")
            np.testing.assert_allclose(lib[name](q), want, rtol=1e-12, atol=1e-12)


URDF = """<?xml version="1.0" encoding="utf-8"?>
<robot name="ärm">
  <link name="base"/>
  <link name="l²"><inertial><mass value="1.0"/><origin xyz="0.1 0 0"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="腕 */ int oops; /*"><inertial><mass value="0.5"/><origin xyz="0 0.1 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tool-1"/>
  <link name="tool_1"/>
  <joint name="j??/" type="revolute"><parent link="base"/><child link="l²"/>
    <axis xyz="0 0 1"/><limit effort="1" velocity="1" lower="-1" upper="1"/></joint>
  <joint name="static" type="continuous"><parent link="l²"/>
    <child link="腕 */ int oops; /*"/><origin xyz="0.3 0 0"/><axis xyz="0 1 0"/></joint>
  <joint name="f1" type="fixed"><parent link="腕 */ int oops; /*"/><child link="tool-1"/>
    <origin xyz="0.1 0 0"/></joint>
  <joint name="f2" type="fixed"><parent link="腕 */ int oops; /*"/><child link="tool_1"/>
    <origin xyz="0 0.1 0"/></joint>
</robot>
"""


def test_non_ascii_urdf_generates_and_compiles(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(URDF, encoding="utf-8")
    out = tmp_path / "gen"
    result = run_split("generate", str(path), "-o", str(out), "--frame", "tool-1",
                       "--frame", "tool_1")
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["arm.c", "arm.h"]
    header = (out / "arm.h").read_text(encoding="ascii")
    assert "void arm_frame_jacobian_tool_1(" in header
    assert "void arm_frame_jacobian_tool_1_2(" in header
    run = subprocess.run(["gcc", *STRICT, "-c", str(out / "arm.c"), "-o", str(tmp_path / "k.o")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[:3000]


# ---------------------------------------------------------------- prefix
@pytest.mark.parametrize("prefix", ["1 a-b", "ärm", "int", "_arm", "a__b", "arm_", "", "a-b",
                                    "static"])
def test_invalid_prefix_is_an_error(prefix):
    with pytest.raises(SymgenError, match="invalid C prefix"):
        check_prefix(prefix)


def test_prefix_is_used_as_given_or_rejected(hostile):
    src = emit_c(hostile, prefix="Arm_2")
    assert src.header_name == "Arm_2.h" and "void Arm_2_mass_matrix(" in src.header
    with pytest.raises(SymgenError, match="invalid C prefix '1 a-b'"):
        emit_c(hostile, prefix="1 a-b")


def test_cli_rejects_an_invalid_prefix_in_one_line(tmp_path):
    out = tmp_path / "never"
    result = run_split("generate", str(EXAMPLES / "double_pendulum.yaml"), "-o", str(out),
                       "--kernels", "mass_matrix", "--prefix", "1 a-b")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()  # progress lines, then the error
    assert lines[-1].startswith("symgen: error: invalid C prefix '1 a-b'")
    assert "Traceback" not in result.stderr
    assert not out.exists()


@pytest.mark.parametrize(("name", "prefix"), [("1 a-b", "m_1_a_b"), ("ärm", "arm"),
                                              ("int", "m_int"), ("Panda", "panda"),
                                              ("x*/ int oops; /*", "x_int_oops")])
def test_default_prefix(name, prefix):
    assert default_prefix(name) == prefix
    assert check_prefix(prefix) == prefix


def test_symbol_clash_in_a_kernel_set_names_both():
    model = symgen.load(EXAMPLES / "double_pendulum.yaml")
    ks = KernelSet(model, Options())
    for name in ("a", "a_batch"):
        b = ProgramBuilder(name, "constant")
        b.output("y", 1, [Num(1.0)])
        ks.programs[name] = b.build()
        ks.kernel_of[name] = name
    with pytest.raises(SymgenError, match="a_batch.*both get the C name dp_a_batch"):
        emit_c(ks, prefix="dp")


# ---------------------------------------------------------------- literals
def _constant_set(values) -> KernelSet:
    model = symgen.load(EXAMPLES / "double_pendulum.yaml")
    b = ProgramBuilder("constants", "constant outputs")
    b.output("y", len(values), [Num(v) for v in values])
    ks = KernelSet(model, Options())
    ks.programs["constants"] = b.build()
    ks.kernel_of["constants"] = "constants"
    return ks


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
@pytest.mark.parametrize("real", ["double", "float"])
def test_non_finite_literal_is_an_error(value, real):
    with pytest.raises(SymgenError, match="not finite"):
        CPrinter(real).number(value)
    with pytest.raises(SymgenError, match="kernel constants: the number"):
        emit_c(_constant_set([1.0, value]), real=real)


def test_float_literals_stay_in_float_range(tmp_path):
    with pytest.raises(SymgenError, match="exceeds the range of float"):
        emit_c(_constant_set([1e300]), real="float")
    assert CPrinter("float").number(1e-50) == "0.0f"  # below half the least subnormal
    values = [1e-50, 1e-40, 3.4028234e38, 0.1, 1e300, 4.9e-324]
    for real in ("double", "float"):
        src = emit_c(_constant_set(values if real == "double" else values[:4]), real=real)
        src.write(tmp_path / real)
        run = subprocess.run(["gcc", *STRICT, "-c", str(tmp_path / real / src.source_name),
                              "-o", str(tmp_path / "k.o")], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[:2000]


# ---------------------------------------------------------------- natural-coordinate headers
def test_natural_header_describes_its_own_kernels(tmp_path):
    """The four-bar's natural kernels take q[4] (n = 4 points' coordinates, m = 3
    constraints, docs/natural.md); the tree model has nq = 3. Both headers go into one
    program."""
    from symgen.natural import natural_kernels

    model = symgen.load(EXAMPLES / "four_bar.yaml")
    _, natural = natural_kernels(model)
    tree = symgen.generate(model, ["mass_matrix"])
    paths = symgen.write_c(natural, tmp_path) + symgen.write_c(tree, tmp_path)
    assert sorted(p.name for p in paths) == ["four_bar.c", "four_bar.h", "four_bar_natural.c",
                                             "four_bar_natural.h"]
    header = (tmp_path / "four_bar_natural.h").read_text()
    assert "#define FOUR_BAR_NATURAL_N 4 " in header
    assert "#define FOUR_BAR_NATURAL_M 3 " in header
    assert "_NQ" not in header and "_NV " not in header
    assert "void four_bar_natural_nc_step(const four_bar_natural_real q[4]," in header
    (tmp_path / "main.c").write_text(
        '#include "four_bar.h"\n#include "four_bar_natural.h"\n'
        "int main(void) {\n"
        "    four_bar_natural_real q[FOUR_BAR_NATURAL_N] = {0}, phi[FOUR_BAR_NATURAL_M];\n"
        "    four_bar_real M[FOUR_BAR_NV * FOUR_BAR_NV], qt[FOUR_BAR_NQ] = {0};\n"
        "    four_bar_natural_nc_constraints(q, phi);\n"
        "    four_bar_mass_matrix(qt, M);\n"
        "    return (int)(phi[0] + M[0]);\n}\n")
    run = subprocess.run(["gcc", *STRICT, str(tmp_path / "main.c"), str(tmp_path / "four_bar.c"),
                          str(tmp_path / "four_bar_natural.c"), "-lm", "-o",
                          str(tmp_path / "main")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[:3000]

