"""The progress lines of long builds (symgen.build.progress.BuildProgress) on a fake clock:
when they appear, an updating line on a terminal, plain lines in a log."""

from __future__ import annotations

import io
import re

import pytest

from symgen.build.progress import CLEAR_LINE, LOG_EVERY, PROGRESS_AFTER, BuildProgress


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def build(stream: io.StringIO, enabled: bool | None, clock: Clock, total: int = 4) -> None:
    """A build of ``total`` files, one done every 10 s (ticks every second), then linked."""
    report = BuildProgress(total, enabled, stream, clock)
    for done in range(total):
        for _ in range(10):
            report.update(done)
            clock.now += 1.0
    report.update(total, linking=True)
    clock.now += 1.0
    report.finish()


def test_a_log_gets_one_line_per_file_done_and_a_total():
    log = io.StringIO()
    build(log, True, Clock())
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue()
    assert [line.split(",")[0] for line in lines[:-1]] == [
        "compiling C: 0/4 files", "compiling C: 1/4 files", "compiling C: 2/4 files",
        "compiling C: 3/4 files", "linking: 4 C files compiled"]
    assert lines[1].endswith(", 10 s") and lines[-1] == "compiled 4 C files in 41 s"


def test_a_log_is_told_every_so_often_while_no_file_is_done():
    log, clock = io.StringIO(), Clock()
    report = BuildProgress(2, True, log, clock)
    for _ in range(int(2.5 * LOG_EVERY)):
        report.update(0)
        clock.now += 1.0
    assert log.getvalue().count("compiling C: 0/2 files") == 3


def test_a_terminal_gets_one_line_rewritten_every_tick_then_the_total():
    tty = Terminal()
    build(tty, True, Clock())
    text = tty.getvalue()
    assert text.count(CLEAR_LINE) == 4 * 10 + 1 + 1  # every tick, the link, the clearing
    assert "\n" not in text.removesuffix("\n")
    assert text.endswith(CLEAR_LINE + "compiled 4 C files in 41 s\n")


@pytest.mark.parametrize("stream", [io.StringIO, Terminal])
def test_by_default_only_a_build_of_more_than_a_few_seconds_shows(stream):
    quick, clock = stream(), Clock()
    report = BuildProgress(3, None, quick, clock)
    report.update(0)
    clock.now += PROGRESS_AFTER / 2
    report.update(3, linking=True)
    report.finish()
    assert quick.getvalue() == ""

    slow = stream()
    build(slow, None, Clock())  # 41 s
    shown = re.findall(r"compiling C: (\d)/4 files, (\d+) s", slow.getvalue())
    assert min(int(seconds) for _, seconds in shown) == PROGRESS_AFTER  # quiet until then
    assert {done for done, _ in shown} == {"0", "1", "2", "3"}
    assert slow.getvalue().endswith("compiled 4 C files in 41 s\n")


def test_progress_false_is_silent_and_a_failed_build_gives_no_total():
    off = io.StringIO()
    build(off, False, Clock())
    assert off.getvalue() == ""
    tty, clock = Terminal(), Clock()
    report = BuildProgress(2, True, tty, clock)
    report.update(1)
    report.finish(ok=False)
    assert tty.getvalue().endswith(CLEAR_LINE) and "compiled" not in tty.getvalue()
