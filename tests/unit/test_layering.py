"""The package's layering: each stage of the pipeline imports only the stages below it, and
no module imports, directly or through others, a module that imports it back.

The import graph is read from the source (every ``import`` and ``from ... import``, those
inside functions included, since they run as surely as the others); ``from symgen.a import
b`` depends on ``symgen.a`` (its ``__init__`` runs first) and, when ``b`` is a submodule, on
``symgen.a.b``; ``import symgen.a.b`` on ``symgen.a.b``. :data:`STAGES` is the stage order,
read from the layering table of docs/architecture.md; a module's stage is that of its first
package under ``symgen``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "symgen"

ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def read_stages(text: str) -> tuple[tuple[str, ...], ...]:
    """The rooms of each stage, lowest first, from the layering table of
    docs/architecture.md (rows ``| n | stage | `room`, ... | ... |``)."""
    rows = re.findall(r"^\| (\d+) \| [^|]+ \| ([^|]+) \|", text, re.M)
    assert [int(n) for n, _ in rows] == list(range(len(rows))), "stages numbered 0, 1, ..."
    return tuple(
        tuple(name.removeprefix("symgen/").removesuffix(".py").removesuffix("/")
              for name in re.findall(r"`([^`]+)`", rooms))
        for _, rooms in rows)


#: The stages, lowest first: a module may import its own stage and the stages below it.
STAGES = read_stages(ARCHITECTURE.read_text())


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def stage_of(module: str) -> int:
    parts = module.split(".")
    room = parts[1] if len(parts) > 1 else "__init__"
    for level, rooms in enumerate(STAGES):
        if room in rooms:
            return level
    raise AssertionError(f"{module}: its room {room!r} has no stage in STAGES")


def imported(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """(imported symgen module, line) of every import in ``path``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "symgen":
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "symgen":
                continue
            yield target, node.lineno  # the package (or module) named runs first
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in MODULES:
                    yield sub, node.lineno


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: line of the first such import}."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in MODULES.items():
        edges: dict[str, int] = {}
        for target, line in imported(module, path):
            if target in MODULES and target != module:  # (a missing module fails on import)
                edges.setdefault(target, line)
        graph[module] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan 1972)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


GRAPH = import_graph()


def test_the_table_is_read() -> None:
    """The stage table parses into the rooms it names (a check of the reader itself)."""
    table = "| 0 | ground | `errors.py`, `cnames.py` | x |\n| 1 | IR | `ir/` | y |\n"
    assert read_stages(table) == (("errors", "cnames"), ("ir",))
    assert STAGES[0][0] == "errors" and STAGES[-1] == ("__init__",)


def test_every_room_has_a_stage() -> None:
    for module in MODULES:
        stage_of(module)


def test_no_import_cycles() -> None:
    found = cycles(GRAPH)
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_no_stage_imports_a_higher_one() -> None:
    wrong = [
        f"{MODULES[a].relative_to(PACKAGE.parent)}:{line}: {a} imports {b}"
        for a, edges in GRAPH.items()
        for b, line in edges.items()
        if stage_of(b) > stage_of(a)
    ]
    assert not wrong, "imports of a higher stage:\n" + "\n".join(wrong)


@pytest.mark.parametrize("source, expected", [
    ("from symgen.ir import program\n", ["symgen.ir", "symgen.ir.program"]),
    ("from symgen.ir.program import Program\n", ["symgen.ir.program"]),
    ("def f():\n    import symgen.ir.expr\n", ["symgen.ir.expr"]),
    ("from ...ir import expr\n", ["symgen.ir", "symgen.ir.expr"]),
    ("from . import printer\n", ["symgen.backends.c99", "symgen.backends.c99.printer"]),
])
def test_the_graph_reads_every_form_of_import(tmp_path: Path, source: str,
                                              expected: list[str]) -> None:
    """The reader resolves absolute, relative and function-level imports alike."""
    path = tmp_path / "emit.py"
    path.write_text(source)
    found = [t for t, _ in imported("symgen.backends.c99.emit", path)]
    assert found == expected


def test_a_cycle_is_found() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert cycles(graph) == [["a", "b", "c"]]
