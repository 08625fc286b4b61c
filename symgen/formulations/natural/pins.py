"""Pins shared by every body that meets there (García de Jalón & Bayo 1994, ch. 2: a basic
point is shared by all the elements that meet at it).

A pin joint (revolute, spherical, universal) makes a point of its parent and a point of its
child coincide for all time. A point fixed on a body is identified by the body and its
location, so two pin joints that touch a common body (the ground counts) at one location
act on the same material point: union-find over such pairs gives one basic point per pin,
whatever the order of the joints. Two pins that merely coincide in the assembled drawing
but share no body (bodies crossing there) stay apart. The same holds for the axis unit
vectors of revolute joints of one pin: a direction fixed on a common body is one vector.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

#: Relative tolerance of "the same location" / "the same direction".
RELATIVE_TOLERANCE = 1e-9


def model_size(locations: Iterable[np.ndarray]) -> float:
    """The diagonal of the bounding box of ``locations`` (1 when they are all one point)."""
    points = np.array([np.asarray(p, float) for p in locations])
    if points.size == 0:
        return 1.0
    size = float(np.linalg.norm(points.max(axis=0) - points.min(axis=0)))
    return size if size > 0.0 else 1.0


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, a: int) -> int:
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _groups(n: int, bodies: Sequence[tuple[int, int]], same) -> list[int]:
    """Union of the items that share a body (either side) and satisfy ``same(i, k)``;
    returns, for every item, the first (lowest) item of its group."""
    touching: dict[int, list[int]] = {}
    for i, pair in enumerate(bodies):
        for body in set(pair):
            touching.setdefault(body, []).append(i)
    uf = _UnionFind(n)
    for items in touching.values():
        for a, i in enumerate(items):
            for k in items[a + 1:]:
                if uf.find(i) != uf.find(k) and same(i, k):
                    uf.union(i, k)
    return [uf.find(i) for i in range(n)]


def pin_groups(bodies: Sequence[tuple[int, int]], locations: Sequence[np.ndarray],
               tolerance: float) -> list[int]:
    """For pins with (parent, child) ``bodies`` (-1: ground) at world ``locations``, the
    first pin of each one's group: pins are joined when they share a body and lie within
    ``tolerance`` of each other, transitively."""
    where = [np.asarray(p, float) for p in locations]
    return _groups(len(where), bodies,
                   lambda i, k: float(np.linalg.norm(where[i] - where[k])) <= tolerance)


def axis_groups(bodies: Sequence[tuple[int, int]], axes: Sequence[np.ndarray],
                pins: Sequence[int]) -> list[int]:
    """For revolute joints of pins ``pins`` (their pin groups), the first joint of each
    one's axis group: joints of one pin are joined when they share a body and their unit
    axes are parallel or antiparallel (a line fixed on the common body), transitively."""
    unit = [np.asarray(a, float) / np.linalg.norm(a) for a in axes]

    def same(i: int, k: int) -> bool:
        return (pins[i] == pins[k]
                and float(np.linalg.norm(np.cross(unit[i], unit[k]))) <= RELATIVE_TOLERANCE)

    return _groups(len(unit), bodies, same)


__all__ = ["RELATIVE_TOLERANCE", "axis_groups", "model_size", "pin_groups"]
