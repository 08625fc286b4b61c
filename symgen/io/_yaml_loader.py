"""A PyYAML loader that remembers the line of every mapping and of every key.

Mappings load as :class:`LineDict` (``.line``: line of the mapping, ``.key_lines``: line of
each key), sequences as :class:`LineList` (``.line``). Duplicate keys are errors (plain PyYAML
silently keeps the last one). Floats in exponent form without a dot (``1e-3``), which YAML 1.1
reads as strings, load as numbers. Collections nest at most :data:`MAX_DEPTH` levels deep, so
that neither PyYAML's recursive composer nor the reader can exhaust the stack, and every
failure of PyYAML (bad characters, syntax, a value its constructors refuse such as the date
``2001-13-45``) is a :class:`ModelError` at file:line.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from symgen.errors import ModelError, SourceRef


class LineDict(dict):
    """A mapping with the line of its first key (``line``) and of each key (``key_lines``)."""

    line: int = 0
    key_lines: dict

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


class LineList(list):
    """A sequence with the line where it starts."""

    line: int = 0


_FLOAT_TAG = "tag:yaml.org,2002:float"
_FLOAT = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)


#: Deepest accepted nesting of mappings and lists (a model file needs about 5).
MAX_DEPTH = 64


class _Loader(yaml.SafeLoader):
    file = "<yaml>"
    depth = 0

    def compose_node(self, parent, index):  # type: ignore[no-untyped-def]
        """PyYAML's composer, with the nesting depth bounded (it recurses per level)."""
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise ModelError(
                    f"invalid YAML: nested more than {MAX_DEPTH} levels deep",
                    SourceRef(self.file, mark.line + 1),
                )
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_object(self, node, deep=False):  # type: ignore[no-untyped-def]
        """PyYAML's constructor; a value it cannot build (``!!int abc``, the date
        ``2001-13-45``, ...) is a ModelError at the value's line."""
        try:
            return super().construct_object(node, deep=deep)
        except (ModelError, yaml.YAMLError):
            raise
        except (ValueError, TypeError, OverflowError, ArithmeticError) as exc:
            raise ModelError(
                f"invalid YAML value {_clip(str(node.value))}: {exc}",
                SourceRef(self.file, node.start_mark.line + 1),
            ) from None


def _clip(text: str, limit: int = 40) -> str:
    return repr(text) if len(text) <= limit else repr(text[: limit - 3]) + "..."


_Loader.yaml_implicit_resolvers = {
    first: [r for r in resolvers if r[0] != _FLOAT_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(_FLOAT_TAG, _FLOAT, list("-+0123456789."))


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        line = key_node.start_mark.line + 1
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise ModelError(
                "a mapping key must be a plain name", SourceRef(loader.file, line)
            ) from None
        if key in out:
            raise ModelError(
                f"duplicate key {key!r} (first given on line {out.key_lines[key]})",
                SourceRef(loader.file, line),
            )
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = line
    return out


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode) -> LineList:
    out = LineList(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def load_yaml(path: Path) -> object:
    """Load ``path``; every YAML error becomes a ModelError citing file:line."""
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelError(
            f"cannot read model file: {exc.strerror or exc}", SourceRef(file)
        ) from None
    except UnicodeDecodeError as exc:
        raise ModelError(f"not UTF-8 text ({exc.reason})", SourceRef(file)) from None
    loader = None
    try:
        loader = _Loader(text)  # the reader checks every character here
        loader.file = file
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "syntax error"
        raise ModelError(f"invalid YAML: {problem}", SourceRef(file, line)) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        raise ModelError(
            f"invalid YAML: {exc.reason}, character {_character(exc.character)} "
            f"(column {column})",
            SourceRef(file, line),
        ) from None
    except yaml.YAMLError as exc:
        message = " ".join(str(exc).split())
        raise ModelError(f"invalid YAML: {message}", SourceRef(file)) from None
    except RecursionError:
        raise ModelError("invalid YAML: nested too deeply", SourceRef(file)) from None
    finally:
        if loader is not None:
            loader.dispose()


def _character(c: object) -> str:
    if isinstance(c, int):
        return f"#x{c:04x}"
    return f"#x{ord(c):04x}" if isinstance(c, str) and len(c) == 1 else repr(c)
