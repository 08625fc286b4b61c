"""Progress of long builds on stderr (:func:`symgen.build.compiler.compile_kernels`): the C
files compiled out of the total and the elapsed time. On a terminal one line is rewritten in
place; elsewhere (a log, a pipe) plain lines are printed: one each time a file is done, and
one every :data:`LOG_EVERY` seconds while none is."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

#: Wall-clock seconds after which a build shows its progress (``progress=None``).
PROGRESS_AFTER = 5.0
#: Seconds between the build's looks at its compilers (the terminal line's update rate).
TICK = 1.0
#: In a log, seconds between lines while no file is done.
LOG_EVERY = 30.0
#: Clears a terminal's line and returns to its start.
CLEAR_LINE = "\r\x1b[K"


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (False when it cannot tell)."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


class BuildProgress:
    """The progress lines of one build of ``total`` C files. ``enabled``: True always, False
    never, None once the build has taken :data:`PROGRESS_AFTER` seconds. ``stream`` (default:
    ``sys.stderr`` when the build starts) and ``clock`` (seconds) are for tests."""

    def __init__(self, total: int, enabled: bool | None, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.enabled, self.clock = total, enabled, clock
        self.stream = sys.stderr if stream is None else stream
        self.live = is_terminal(self.stream)
        self.started = self.last_line = clock()
        self.shown = False
        self.last_text = ""

    def update(self, done: int, linking: bool = False) -> None:
        """Report ``done`` files compiled (``linking``: all of them, now linked)."""
        now = self.clock()
        if not self._visible(now):
            return
        state = (f"linking: {self.total} C files compiled" if linking
                 else f"compiling C: {done}/{self.total} files")
        text = f"{state}, {now - self.started:.0f} s"
        if self.live:
            self._write(CLEAR_LINE + text)
        elif state != self.last_text or now - self.last_line >= LOG_EVERY:
            self._write(text + "\n")
            self.last_line = now
        self.last_text = state

    def finish(self, ok: bool = True) -> None:
        """End the report: on a terminal the line is cleared; when anything was shown and
        the build succeeded, one last line gives the total time."""
        if not self.shown:
            return
        if self.live:
            self._write(CLEAR_LINE)
        if ok:
            self._write(f"compiled {self.total} C files in {self.clock() - self.started:.0f} s\n")

    def _visible(self, now: float) -> bool:
        if self.enabled is None:
            return self.shown or now - self.started >= PROGRESS_AFTER
        return self.enabled

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()
        self.shown = True


__all__ = ["LOG_EVERY", "PROGRESS_AFTER", "TICK", "BuildProgress", "is_terminal"]
