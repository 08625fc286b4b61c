"""Property-based fuzzing of the readers and of ``generate`` (issue 11, "Done when").

Hypothesis writes YAML and URDF model files, both structurally plausible ones (random trees
of up to 4 bodies with random joint types, numbers that are sane, huge, tiny, negative or
not finite, expressions, names with unicode, control characters, ``*/``, C keywords) and
damaged ones (truncated, with characters inserted or removed, random bytes, deep nesting).
Each file goes through ``symgen.load``; a model that loads goes through
``symgen.generate(model, ["mass_matrix", "inverse_dynamics"])`` and ``symgen.emit_c``.
Every outcome must be a result or a :class:`symgen.SymgenError`; anything else (another
exception, a hang past ``TIMEOUT`` seconds, a non-finite literal in the C) is a failure that
prints the input.

The suite runs ``FAST_EXAMPLES`` examples per format, derandomised (reproducible in CI).
``SYMGEN_FUZZ_EXAMPLES=N pytest -m slow tests/build/test_fuzz_readers.py -s`` runs N
examples per format with a fixed seed (``SYMGEN_FUZZ_SEED``, default 11) and prints the tally.
SDF files are fuzzed the same way, with this module's machinery, in test_fuzz_sdf.py.
"""

from __future__ import annotations

import functools
import math
import os
import re
import signal
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pytest
import yaml
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import symgen
from symgen import SymgenError

#: Examples per format in the default (fast) run.
FAST_EXAMPLES = 200
#: Seconds an example may take before it counts as a hang.
TIMEOUT = 120
KERNELS = ["mass_matrix", "inverse_dynamics"]
MAX_BODIES = 4

# ---------------------------------------------------------------------------- atoms
NASTY_NAMES = [
    "a", "b", "link", "tool-1", "tool_1", "tip", "tip_batch", "*/", "/*", "a*/b",
    "x*/ int oops; /*", "??/", "a??/", "int", "double", "return", "static", "_Bool", "main",
    "ärm", "l²", "日本", "a b", " ", "a\tb", "a\x07b", "a\x00b", "a\nb", "\u202e", "world",
    "ground", "universe", "root_joint", "__param_m", "$m", "1abc", "a" * 200, "M", "q", "tau",
]
JOINT_TYPES = [
    "revolute", "continuous", "prismatic", "helical", "cylindrical", "universal", "planar",
    "spherical", "free", "fixed", "Revolute", "warp", "",
]
URDF_JOINT_TYPES = ["revolute", "continuous", "prismatic", "fixed", "floating", "planar", "ball"]
SPECIAL_NUMBERS = [
    0.0, -0.0, 1.0, -1.0, 1e-300, -1e-300, 5e-324, 1e-12, 1e12, 1e150, 1e200, 1e300, 1e308,
    -1e308, 1.7976931348623157e308, math.inf, -math.inf, math.nan, 10**400, -(10**400), 2**63,
]
SPECIAL_TEXT = [
    "inf", "-inf", "nan", "NaN", ".inf", "1e400", "-1e400", "1e-400", "0x10", "1_000", "1,2",
    "", " ", "abc", "$", "$$m", "$m", "-$m", "pi", "sqrt(-1)", "1/0", "$m/0", "$m**(1/0)",
    "sqrt($m - 2)", "asin(2)", "atan2(0, 0)", "2^3", "__import__('os')", "(" * 300 + "1",
    "+".join(["1"] * 2000), "-" * 1000 + "1", "9" * 5000, "1e300*1e300", "((2**64)**64)**64",
    "$m**64**64", "sin(" * 60 + "1" + ")" * 60, "1e308*$m*10", "x\x00", "\u00e9", "1.5.2",
]

sane = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)
positive = st.floats(0.05, 3.0)
any_float = st.floats(allow_nan=True, allow_infinity=True)
special = st.sampled_from(SPECIAL_NUMBERS)
names = st.one_of(
    st.sampled_from(NASTY_NAMES),
    st.text(min_size=0, max_size=8),
    st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True),
)
#: Names a careful user might write: printable (unicode, punctuation, C keywords, ``*/``).
clean_names = st.one_of(
    st.sampled_from([n for n in NASTY_NAMES if n.isprintable() and n.strip()]),
    st.text(st.characters(blacklist_categories=("Cc", "Cs", "Co", "Cn", "Zl", "Zp")),
            min_size=1, max_size=8).filter(lambda n: n.strip() == n and n),
    st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True),
)


def name_list(bad: int, n: int, prefix: str) -> st.SearchStrategy[list[str]]:
    """``n`` names: distinct and printable in a clean document, anything otherwise."""
    if bad:
        return st.lists(st.one_of(st.from_regex(prefix + r"[0-9]", fullmatch=True), names),
                        min_size=n, max_size=n)
    return st.lists(st.one_of(st.from_regex(prefix + r"[0-9]", fullmatch=True), clean_names),
                    min_size=n, max_size=n, unique=True)


def rare(draw, n: int) -> bool:
    """True with probability about 1/n. Hypothesis favours small integers, so the rare
    outcome is the largest one."""
    return draw(st.integers(1, n)) == n


def _rare_pct(draw, percent: int) -> bool:
    return draw(st.integers(0, 99)) >= 100 - percent


@functools.cache
def expressions(params: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Random value expressions over ``params`` (and constants, functions, bad tokens)."""
    leaf = st.one_of(
        sane.map(repr),
        special.map(repr),
        st.sampled_from(["pi", "2", "0", "1e-3"] + [f"${p}" for p in params] + ["$nope"]),
    )

    def extend(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**", "^", "%"]), inner).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"
            ),
            st.tuples(st.sampled_from(["-", "+", "--"]), inner).map(lambda t: t[0] + t[1]),
            st.tuples(
                st.sampled_from(["sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "exp"]),
                inner,
            ).map(lambda t: f"{t[0]}({t[1]})"),
            st.tuples(inner, inner).map(lambda t: f"atan2({t[0]}, {t[1]})"),
        )

    return st.recursive(leaf, extend, max_leaves=8)


GOOD = {"sane": sane, "positive": positive}


@functools.cache
def good_values(params: tuple[str, ...], good: str) -> st.SearchStrategy[object]:
    """Valid values: numbers in range, and expressions of the parameters that stay so."""
    refs = [f"${p}" for p in params]
    exprs = [st.sampled_from([f"{r} * 0.5" for r in refs] + [f"sqrt({r}) / 2" for r in refs]
                             + [f"-{r} / 4" for r in refs])] if params and good == "sane" else []
    exprs += [st.sampled_from([f"{r} + 0.1" for r in refs])] if params else []
    return st.one_of(GOOD[good], GOOD[good], GOOD[good], *exprs, st.sampled_from(["pi / 4"]))


@functools.cache
def bad_values(params: tuple[str, ...], good: str) -> st.SearchStrategy[object]:
    """Anything: huge/tiny/non-finite numbers, expressions, wrong types, and good values."""
    return st.one_of(
        good_values(params, good), special, any_float, st.integers(-(10**30), 10**30),
        expressions(params), st.sampled_from(SPECIAL_TEXT),
        st.sampled_from([None, True, [], {}, [1, 2], {"a": 1}]),
    )


class Values:
    """Draws values for one document: clean documents get only good values, the others get
    a bad value with probability ``bad`` percent. Some documents are scaled: every plain
    number ("sane": lengths, angles; "positive": masses, inertias) times 10**k, |k| <= 160,
    to probe the largest and smallest magnitudes a model may have."""

    def __init__(self, draw, params: list[str], bad: int) -> None:
        self.draw, self.params, self.bad = draw, tuple(params), bad
        self.scale = {"sane": 1.0, "positive": 1.0}
        if rare(draw, 4):
            self.scale = {k: 10.0 ** draw(st.integers(-160, 160)) for k in self.scale}

    def __call__(self, good: str = "sane") -> object:
        if self.bad and _rare_pct(self.draw, self.bad):
            return self.draw(bad_values(self.params, good))
        value = self.draw(good_values(self.params, good))
        return value * self.scale[good] if isinstance(value, float) else value

    def vector(self, good: str = "sane", n: int = 3) -> object:
        if self.bad and _rare_pct(self.draw, self.bad):
            return self.draw(st.one_of(st.lists(sane, max_size=4), bad_values(self.params, good)))
        return [self(good) for _ in range(n)]

    def inertia(self) -> object:
        a, b = self.draw(positive), self.draw(positive)
        c = self.draw(st.floats(abs(a - b) + 1e-6, a + b))
        a, b, c = (x * self.scale["positive"] for x in (a, b, c))
        if not self.bad or not _rare_pct(self.draw, self.bad):
            return self.draw(st.sampled_from([[a, b, c], [a, b, c, 0.0, 0.0, 0.0],
                                              {"ixx": a, "iyy": b, "izz": c}]))
        return self.draw(st.one_of(
            st.just([self("positive") for _ in range(3)]),
            st.just([self() for _ in range(6)]),
            st.just([[self() for _ in range(3)] for _ in range(3)]),
            bad_values(self.params, "positive"),
        ))


# ---------------------------------------------------------------------------- YAML
@st.composite
def yaml_documents(draw) -> dict:
    """A YAML model as a Python document: a random tree of up to MAX_BODIES bodies. Half the
    documents are clean (every value valid, names may still be nasty)."""
    params = draw(st.lists(st.sampled_from(["m", "L", "k", "r"]), max_size=2, unique=True))
    bad = draw(st.sampled_from([0, 0, 0, 0, 3, 10, 30]))
    v = Values(draw, params, bad)
    doc: dict = {"name": draw(names if bad else clean_names)}
    if params:
        doc["parameters"] = {
            p: draw(st.one_of(positive, positive, st.fixed_dictionaries(
                {"default": positive}, optional={"description": st.text(max_size=5)}),
                *([special] if bad else [])))
            for p in params
        }
    planar = rare(draw, 6)
    if planar:
        doc["plane"] = "xy" if not bad else draw(st.sampled_from(["xy", "xy", "xz"]))
    root = draw(st.sampled_from(["ground", "ground", "world", "base"]))
    if root != "ground" or draw(st.booleans()):
        doc["root"] = root
    n = draw(st.integers(1, MAX_BODIES))
    body_names = draw(name_list(bad, n, "b").filter(lambda b: root not in b))
    joint_names = draw(name_list(bad, n + 2, "j"))
    types = (["revolute", "prismatic", "continuous", "fixed", "helical", "cylindrical",
              "universal", "spherical", "free"] if not planar
             else ["revolute", "prismatic", "continuous", "fixed", "planar"])
    if bad:
        types = types + JOINT_TYPES
    bodies, joints = [], []
    for k, bname in enumerate(body_names):
        body: dict = {"name": bname}
        if not bad or not rare(draw, 10):
            body["mass"] = v("positive")
        if draw(st.booleans()):
            body["com"] = v.vector("sane", 2 if planar else 3)
        if not rare(draw, 6):
            body["inertia"] = v.inertia()
        bodies.append(body)
        parent = root if k == 0 else draw(st.sampled_from([root] + body_names[:k]))
        joint: dict = {
            "name": joint_names[k],
            "type": draw(st.sampled_from(types)),
            "parent": parent,
            "child": bname,
        }
        if draw(st.booleans()):
            if planar:
                joint["origin"] = {"xy": v.vector("sane", 2), "angle": v()}
            else:
                joint["origin"] = draw(st.fixed_dictionaries(
                    {}, optional={"xyz": st.just(v.vector()), "rpy": st.just(v.vector())}))
        if draw(st.booleans()) and joint["type"] not in ("fixed", "free", "spherical"):
            if planar:
                joint["axis"] = [0, 0, 1] if joint["type"] != "prismatic" else v.vector("sane", 2)
            else:
                joint["axis"] = v.vector()
        if joint["type"] == "universal" and draw(st.booleans()):
            joint["axis2"] = v.vector()
        if joint["type"] == "helical" and draw(st.booleans()):
            joint["pitch"] = v()
        if rare(draw, 5):
            joint["limits"] = {k: v() for k in draw(st.sets(st.sampled_from(
                ["lower", "upper", "velocity", "effort"])))}
            if not bad:
                joint["limits"] = {"lower": -draw(positive), "upper": draw(positive),
                                   "effort": draw(positive)}
        joints.append(joint)
    doc["bodies"], doc["joints"] = bodies, joints
    if rare(draw, 5):
        doc["frames"] = [{"name": joint_names[-1], "body": draw(st.sampled_from(body_names)),
                          "origin": {"xyz": v.vector()}}]
    if len(joints) > 1 and rare(draw, 6):
        doc["couplings"] = [{"joint": joints[-1]["name"], "master": joints[0]["name"],
                             "ratio": v()}]
    if rare(draw, 7):
        doc["gravity"] = v.vector("sane", 2 if planar else 3)
    if rare(draw, 10):
        doc["loops"] = [{"name": joint_names[-2], "type": "revolute", "parent": root,
                         "child": body_names[-1]}]
    if bad and rare(draw, 10):
        doc[draw(names)] = v()  # an unknown (or duplicate) key
    return doc


def _yaml_text(doc: dict, unicode: bool) -> str:
    try:
        return yaml.safe_dump(doc, allow_unicode=unicode, sort_keys=False)
    except (ValueError, OverflowError, yaml.YAMLError):  # e.g. unrepresentable values
        return repr(doc)


@st.composite
def mutated(draw, text: str) -> str:
    """``text`` damaged a few times: truncated, characters inserted, removed or replaced."""
    for _ in range(draw(st.integers(1, 3))):
        if not text:
            break
        i = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["truncate", "insert", "delete", "replace", "duplicate"]))
        junk = draw(st.one_of(
            st.sampled_from(["\x07", "\x00", "\t", ":", "- ", "[", "{", "&a ", "*a", "!!int ",
                             "!!python/object:os.system ", "\n  ", '"', "'", "#", "%", "@",
                             "<<: ", "? ", "|", ">", "\ufeff", "\ud7ff", "é"]),
            st.text(max_size=4),
        ))
        if kind == "truncate":
            text = text[:i]
        elif kind == "insert":
            text = text[:i] + junk + text[i:]
        elif kind == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 20)):]
        elif kind == "replace":
            text = text[:i] + junk + text[i + 1:]
        else:
            j = draw(st.integers(0, len(text)))
            text = text[:i] + text[min(i, j):max(i, j)] + text[i:]
    return text


def deep_nesting(depth: int, kind: str) -> str:
    if kind == "flow":
        return "name: m\nbodies: " + "[" * depth + "]" * depth + "\n"
    if kind == "block":
        return "name: m\nx:\n" + "".join("  " * k + f"k{k}:\n" for k in range(1, depth))
    if kind == "mapping":
        return "name: m\nx: " + "{a: " * depth + "1" + "}" * depth + "\n"
    return 'name: m\nbodies: [{name: a, mass: "' + "(" * depth + "1" + ")" * depth + '"}]\n'


@st.composite
def yaml_files(draw) -> bytes:
    kind = draw(st.sampled_from(["model"] * 6 + ["mutated"] * 3 + ["bytes", "text", "deep"]))
    if kind == "bytes":
        return draw(st.binary(max_size=400))
    if kind == "text":
        return draw(st.text(max_size=200)).encode("utf-8", "surrogatepass")
    if kind == "deep":
        depth = draw(st.sampled_from([10, 63, 64, 65, 100, 250, 1000, 5000]))
        return deep_nesting(depth, draw(st.sampled_from(["flow", "block", "mapping", "expr"])))\
            .encode()
    text = _yaml_text(draw(yaml_documents()), draw(st.booleans()))
    if kind == "mutated":
        text = draw(mutated(text))
    return text.encode("utf-8", "surrogatepass")


# ---------------------------------------------------------------------------- URDF
def _num_text(draw, good: st.SearchStrategy, bad: int) -> str:
    if not bad or not _rare_pct(draw, bad):
        return repr(draw(good))
    return draw(st.one_of(special.map(str), any_float.map(repr), st.sampled_from(SPECIAL_TEXT)))


def _triple(draw, good: st.SearchStrategy, bad: int) -> str:
    n = 3 if not bad else draw(st.sampled_from([3, 3, 3, 3, 3, 2, 4]))
    sep = draw(st.sampled_from([" ", " ", " ", ",", "  ", "\t"]))
    return sep.join(_num_text(draw, good, bad) for _ in range(n))


def _attr(value: str, escape_it: bool) -> str:
    return quoteattr(value) if escape_it else f'"{value}"'


@st.composite
def urdf_documents(draw) -> str:
    """A URDF: a random tree of up to MAX_BODIES + 1 links; half are clean (valid values)."""
    bad = draw(st.sampled_from([0, 0, 0, 0, 3, 10, 30]))
    esc = not bad or not rare(draw, 10)  # mostly well-formed XML
    n = draw(st.integers(1, MAX_BODIES))
    link_names = draw(name_list(bad, n + 1, "l"))
    joint_names = draw(name_list(bad, n, "j"))
    out = [f"<robot name={_attr(draw(names if bad else clean_names), esc)}>"]
    for k, lname in enumerate(link_names):
        out.append(f"  <link name={_attr(lname, esc)}>")
        if (k > 0 or draw(st.booleans())) and not rare(draw, 7):
            a, b = draw(positive), draw(positive)
            c = draw(st.floats(abs(a - b) + 1e-6, a + b))
            moments = [repr(a), repr(b), repr(c)]
            if bad and rare(draw, 4):
                moments = [_num_text(draw, positive, bad) for _ in range(3)]
            off = [_num_text(draw, st.just(0.0), bad) for _ in range(3)]
            inertia = (f'<inertia ixx="{moments[0]}" iyy="{moments[1]}" izz="{moments[2]}" '
                       f'ixy="{off[0]}" ixz="{off[1]}" iyz="{off[2]}"/>')
            if rare(draw, 10):
                inertia = ""
            mass = f'<mass value="{_num_text(draw, positive, bad)}"/>'
            if bad and rare(draw, 10):
                mass = ""
            origin = ""
            if draw(st.booleans()):
                origin = (f'<origin xyz="{_triple(draw, sane, bad)}" '
                          f'rpy="{_triple(draw, sane, bad)}"/>')
            out.append(f"    <inertial>{origin}{mass}{inertia}</inertial>")
        out.append("  </link>")
    types = URDF_JOINT_TYPES[:2] * 3 + URDF_JOINT_TYPES[:-1] + (["ball"] if bad else [])
    for k in range(1, n + 1):
        jname = joint_names[k - 1]
        jtype = draw(st.sampled_from(types))
        parent = link_names[draw(st.integers(0, k - 1))]
        if bad and rare(draw, 20):
            parent = link_names[draw(st.integers(0, n))]  # maybe a cycle
        parts = [f"  <joint name={_attr(jname, esc)} type={_attr(jtype, esc)}>",
                 f"    <parent link={_attr(parent, esc)}/>",
                 f"    <child link={_attr(link_names[k], esc)}/>"]
        if draw(st.booleans()):
            parts.append(f'    <origin xyz="{_triple(draw, sane, bad)}" '
                         f'rpy="{_triple(draw, sane, bad)}"/>')
        if draw(st.booleans()):
            parts.append(f'    <axis xyz="{_triple(draw, sane, bad)}"/>')
        if rare(draw, 4):
            lower, upper = _num_text(draw, sane, bad), _num_text(draw, sane, bad)
            if not bad:
                lower, upper = repr(-draw(positive)), repr(draw(positive))
            parts.append(f'    <limit lower="{lower}" upper="{upper}" '
                         f'effort="{_num_text(draw, positive, bad)}" '
                         f'velocity="{_num_text(draw, positive, bad)}"/>')
        if k > 1 and rare(draw, 6):
            parts.append(f"    <mimic joint={_attr(joint_names[0], esc)} "
                         f'multiplier="{_num_text(draw, sane, bad)}"/>')
        parts.append("  </joint>")
        out += parts
    if rare(draw, 10):
        out.append(f"  <gazebo>{escape(draw(st.text(max_size=10)))}</gazebo>")
    out.append("</robot>")
    return "\n".join(out) + "\n"


@st.composite
def urdf_files(draw) -> bytes:
    kind = draw(st.sampled_from(["model"] * 6 + ["mutated"] * 3 + ["bytes", "deep", "entity"]))
    if kind == "bytes":
        return draw(st.binary(max_size=400))
    if kind == "deep":
        depth = draw(st.sampled_from([10, 1000, 20000]))
        return ('<robot name="r">' + "<x>" * depth + "</x>" * depth
                + '<link name="a"/></robot>').encode()
    if kind == "entity":
        entities = "".join(f'<!ENTITY a{k} "' + f"&a{k - 1};" * 10 + '">' for k in range(1, 9))
        return (f'<?xml version="1.0"?>\n<!DOCTYPE robot [<!ENTITY a0 "xxxxxxxxxx">{entities}'
                f'<!ENTITY e SYSTEM "file:///etc/hostname">]>\n'
                f'<robot name="&a{draw(st.integers(0, 8))};"><link name="a"/></robot>').encode()
    text = draw(urdf_documents())
    if kind == "mutated":
        text = draw(mutated(text))
    return text.encode("utf-8", "surrogatepass")


# ---------------------------------------------------------------------------- the check
_NON_FINITE_LITERAL = re.compile(r"(?<![A-Za-z0-9_])(inf|nan|INF|NAN|Infinity|NaN)(?![A-Za-z0-9_])")


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # pragma: no cover - only on a hang
    raise _Timeout(f"no result within {TIMEOUT} s")


class Tally:
    """Outcomes of the examples of one format."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.counts: Counter[str] = Counter()
        self.failures: list[str] = []
        self.start = time.perf_counter()

    def run(self, content: bytes, floating_base: bool, directory: Path) -> None:
        path = directory / f"model.{self.fmt}"
        path.write_bytes(content)
        self.counts["tried"] += 1
        stage = "load"
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(TIMEOUT)
        try:
            model = symgen.load(path, floating_base=floating_base)
            stage = "generate"
            kernels = symgen.generate(model, KERNELS)
            stage = "emit"
            source = symgen.emit_c(kernels)
            code = source.header + source.source
            literal = _NON_FINITE_LITERAL.search(_strip_comments(code))
            if literal:
                raise AssertionError(f"non-finite literal {literal.group(0)!r} in the C")
            self.counts["accepted"] += 1
        except SymgenError:
            self.counts["rejected"] += 1
            self.counts[f"rejected at {stage}"] += 1
        except BaseException as exc:  # noqa: BLE001 - anything else is what we look for
            if isinstance(exc, KeyboardInterrupt):
                raise
            self.counts["other"] += 1
            tb = "".join(traceback.format_exception(exc, limit=-4))
            self.failures.append(
                f"--- {self.fmt} input ({stage}, floating_base={floating_base}): "
                f"{content[:3000]!r}\n{tb[-3000:]}"
            )
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)

    def summary(self) -> str:
        seconds = time.perf_counter() - self.start
        c = self.counts
        stages = ", ".join(f"{k} {v}" for k, v in sorted(c.items()) if k.startswith("rejected "))
        return (f"{self.fmt}: tried {c['tried']}, accepted {c['accepted']}, rejected "
                f"{c['rejected']} ({stages}), other {c['other']}; {seconds:.0f} s")

    def check(self) -> None:
        print(self.summary())
        report = os.environ.get("SYMGEN_FUZZ_REPORT")
        if report:
            with open(report, "a", encoding="utf-8") as fh:
                fh.write(self.summary() + "\n" + "\n".join(self.failures) + "\n")
        assert self.counts["tried"] == self.counts["accepted"] + self.counts["rejected"] + \
            self.counts["other"]
        assert not self.failures, f"{len(self.failures)} unexpected outcome(s):\n" + \
            "\n".join(self.failures[:5])


def _strip_comments(code: str) -> str:
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    code = re.sub(r"//[^\n]*", " ", code)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', code)


def fuzz(fmt: str, strategy: st.SearchStrategy[bytes], examples: int,
         seed_value: int | None = None) -> Tally:
    """Run ``examples`` examples: derandomised, or from ``seed_value`` when given."""
    tally = Tally(fmt)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)

        @settings(max_examples=examples, deadline=None, database=None,
                  derandomize=seed_value is None, suppress_health_check=list(HealthCheck))
        @given(strategy, st.booleans())
        def run(content: bytes, floating_base: bool) -> None:
            tally.run(content, floating_base, directory)

        if seed_value is not None:
            run = seed(seed_value)(run)
        run()
    return tally


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize(("fmt", "strategy"), [
    ("yaml", yaml_files()),
    # 11 s; test_fuzz_big (slow tier) runs 5000 URDF examples
    pytest.param("urdf", urdf_files(), marks=pytest.mark.slow)])
def test_fuzz_fast(fmt, strategy):
    fuzz(fmt, strategy, FAST_EXAMPLES).check()


@pytest.mark.slow
@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize(("fmt", "strategy"), [("yaml", yaml_files()), ("urdf", urdf_files())])
def test_fuzz_big(fmt, strategy):
    """SYMGEN_FUZZ_EXAMPLES (default 5000) examples per format, seed SYMGEN_FUZZ_SEED."""
    examples = int(os.environ.get("SYMGEN_FUZZ_EXAMPLES", "5000"))
    fuzz(fmt, strategy, examples, int(os.environ.get("SYMGEN_FUZZ_SEED", "11"))).check()
