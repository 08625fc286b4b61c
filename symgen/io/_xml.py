"""A tiny XML element tree that remembers the line of every element (standard library only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from symgen.errors import ModelError, SourceRef


@dataclass
class Node:
    """An XML element: tag, attributes, child elements, the line of its start tag and its
    text (the character data directly inside it, untrimmed; SDFormat keeps values there)."""

    tag: str
    attrs: dict[str, str]
    line: int
    children: list[Node] = field(default_factory=list)
    text: str = ""

    def find(self, tag: str) -> Node | None:
        """The first child element called ``tag``, or None."""
        for child in self.children:
            if child.tag == tag:
                return child
        return None

    def findall(self, tag: str) -> list[Node]:
        return [child for child in self.children if child.tag == tag]


class SourceErrors:
    """One-line errors at ``file:line`` of the elements of one XML file (readers' base)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = str(path)

    def ref(self, node: Node) -> SourceRef:
        return SourceRef(self.file, node.line)

    def error(self, message: str, node: Node) -> ModelError:
        return ModelError(message, self.ref(node))


def parse_xml(path: Path) -> Node:
    """Parse ``path`` into a :class:`Node` tree; malformed XML is a ModelError at file:line."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        message = f"cannot read model file: {exc.strerror or exc}"
        raise ModelError(message, SourceRef(str(path))) from None
    parser = expat.ParserCreate()
    stack: list[Node] = []
    texts: list[list[str]] = []  # the text pieces of each open element, joined at its end
    roots: list[Node] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        node = Node(tag, dict(attrs), parser.CurrentLineNumber)
        if stack:
            stack[-1].children.append(node)
        else:
            roots.append(node)
        stack.append(node)
        texts.append([])

    def end(tag: str) -> None:
        stack.pop().text = "".join(texts.pop())

    def characters(data: str) -> None:
        if texts:
            texts[-1].append(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = characters
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        reason = expat.ErrorString(exc.code)
        raise ModelError(
            f"malformed XML: {reason} (column {exc.offset + 1})", SourceRef(str(path), exc.lineno)
        ) from None
    if not roots:  # pragma: no cover - expat reports "no element found" first
        raise ModelError("malformed XML: no element found", SourceRef(str(path), 1))
    return roots[0]


def root_tag(path: Path) -> str:
    """The tag of the first element of ``path`` (read only until it starts)."""
    parser = expat.ParserCreate()
    found: list[str] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        found.append(tag)
        raise _Found

    parser.StartElementHandler = start
    try:
        with path.open("rb") as f:
            parser.ParseFile(f)
    except _Found:
        return found[0]
    except OSError as exc:
        raise ModelError(f"cannot read model file: {exc.strerror or exc}",
                         SourceRef(str(path))) from None
    except expat.ExpatError as exc:
        raise ModelError(f"malformed XML: {expat.ErrorString(exc.code)} (column "
                         f"{exc.offset + 1})", SourceRef(str(path), exc.lineno)) from None
    raise ModelError("malformed XML: no element found", SourceRef(str(path), 1))


class _Found(Exception):
    """Stops the parser at the first element."""
