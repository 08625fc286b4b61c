"""Lines of an MJCF file's named elements, so that errors about a compiled MuJoCo model
can cite ``file:line`` (MuJoCo's compiled model keeps names, not lines)."""

from __future__ import annotations

from pathlib import Path

from symgen.errors import ModelError
from symgen.io._xml import Node, parse_xml


class SourceLines:
    """``line(tag, name)``: the line of the first ``<tag name=...>`` of the main file (any
    element with that name when the tag does not match; the root's line for ``name=""``);
    None when the element is not in the main file (e.g. it came from an ``<include>``)."""

    def __init__(self, path: Path) -> None:
        self.by_tag: dict[tuple[str, str], int] = {}
        self.by_name: dict[str, int] = {}
        self.root_line: int | None = None
        self.equalities: list[int] = []
        try:
            root = parse_xml(path)
        except ModelError:  # MuJoCo read it: keep going without lines
            return
        self.root_line = root.line
        stack: list[Node] = [root]
        while stack:
            node = stack.pop()
            name = node.attrs.get("name")
            if name:
                self.by_tag.setdefault((node.tag, name), node.line)
                self.by_name.setdefault(name, node.line)
            if node.tag == "equality":
                self.equalities += [child.line for child in node.children]
            stack.extend(reversed(node.children))

    def equality_line(self, index: int) -> int | None:
        """The line of the ``index``-th equality constraint (MuJoCo keeps their order)."""
        return self.equalities[index] if index < len(self.equalities) else None

    def line(self, tag: str, name: str) -> int | None:
        if not name:
            return self.root_line
        return self.by_tag.get((tag, name), self.by_name.get(name))


__all__ = ["SourceLines"]
