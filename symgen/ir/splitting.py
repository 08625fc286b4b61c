"""Splitting a very large straight-line program into consecutive parts, for the C printer.

A compiler's register allocation over one basic block grows faster than linearly with the
number of values live in it: gcc 12 at -O2 needs 6 minutes and 5 GB for the 82,000
operations of Talos' inverse-dynamics derivatives in one function, 13 minutes and 14 GB for
its 187,000-operation forward-dynamics derivatives. A program of at least
:data:`SPLIT_MIN` assignments is therefore printed as parts of about :data:`PART_SIZE`
assignments, each its own C function; a temporary read by a later part travels through a
work array of the calling kernel (stack memory: still allocation-free and reentrant), its
elements reused once their temporaries are dead (linear scan over the parts).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from symgen.ir.expr import Elem, Sym
from symgen.ir.program import Program

#: Programs with at least this many assignments are printed in parts.
SPLIT_MIN = 16000
#: Assignments per part.
PART_SIZE = 8000


@dataclass(frozen=True)
class Part:
    """Assignments ``start`` to ``stop`` (exclusive) of a program; ``reads``: earlier parts'
    temporaries it reads, ``exports``: its temporaries that later parts (or the outputs,
    stored by the last part) read, each with its element of the work array."""

    start: int
    stop: int
    reads: dict[Sym, int]
    exports: dict[Sym, int]


def part_count(program: Program, part_size: int | None = None) -> int:
    """How many parts :func:`split` makes of ``program`` (default part size
    :data:`PART_SIZE`)."""
    size = PART_SIZE if part_size is None else part_size
    return max((len(program.assignments) + size - 1) // size, 1)


def split(program: Program, part_size: int | None = None) -> tuple[list[Part], int]:
    """The parts of ``program`` (default part size :data:`PART_SIZE`) and the size of
    their work array."""
    part_size = PART_SIZE if part_size is None else part_size
    n = len(program.assignments)
    part_of = {sym: i // part_size for i, (sym, _) in enumerate(program.assignments)}
    count = part_count(program, part_size)
    readers: dict[Sym, set[int]] = {}
    for i, (_, expr) in enumerate(program.assignments):
        for s in expr.symbols():
            if not isinstance(s, Elem):
                readers.setdefault(s, set()).add(i // part_size)
    for e in program.final_expressions():  # the last part stores the outputs and solves
        for s in e.symbols():
            if not isinstance(s, Elem):
                readers.setdefault(s, set()).add(count - 1)
    crossing = {s: max(parts) for s, parts in readers.items() if max(parts) > part_of[s]}
    released: dict[int, list[Sym]] = {}
    for s, last in crossing.items():
        released.setdefault(last, []).append(s)
    free: list[int] = []  # a heap of free elements
    slot: dict[Sym, int] = {}
    size = 0
    exports: list[dict[Sym, int]] = []
    for p in range(count):
        mine: dict[Sym, int] = {}
        for sym, _ in program.assignments[p * part_size:(p + 1) * part_size]:
            if sym in crossing:
                if free:
                    slot[sym] = heapq.heappop(free)
                else:
                    slot[sym], size = size, size + 1
                mine[sym] = slot[sym]
        exports.append(mine)
        for s in released.get(p, ()):  # read for the last time in this part
            heapq.heappush(free, slot[s])
    reads: list[dict[Sym, int]] = [{} for _ in range(count)]
    for s in crossing:
        for p in readers[s]:
            if p > part_of[s]:
                reads[p][s] = slot[s]
    parts = [Part(p * part_size, min((p + 1) * part_size, n), reads[p], exports[p])
             for p in range(count)]
    return parts, max(size, 1)


__all__ = ["PART_SIZE", "SPLIT_MIN", "Part", "part_count", "split"]
