"""Errors raised for user mistakes in a model description."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceRef:
    """Where an element was declared: a file and, when the reader knows it, a line."""

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else self.file


class SymgenError(Exception):
    """Base class of every error symgen raises for bad user input."""


class ModelWarning(UserWarning):
    """A model file holds something symgen does not know and skips (an unknown URDF element
    or attribute, likely a typo); ``strict=True`` makes it a :class:`ModelError`."""


class ModelError(SymgenError, ValueError):
    """A model is invalid. The message names the offending element (and its source)."""

    def __init__(self, message: str, source: SourceRef | None = None) -> None:
        self.source = source
        super().__init__(f"{source}: {message}" if source is not None else message)
