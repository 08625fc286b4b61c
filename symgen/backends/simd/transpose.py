"""In-register transposes of W x W blocks for the ``simd`` backend's gather and scatter.

A batch function's arguments are arrays of structures (state ``l``'s element ``i`` at
``src[l*n + i]``) and its lanes are structures of arrays (vector ``i``, lane ``l``). A block of
W consecutive elements of W states is W unaligned vector loads (one per state), a W x W
transpose, and W vector stores; the scatter is the same in reverse. The transpose is the
recursive block exchange (Eklundh 1972, "A fast computer method for matrix transposing",
IEEE Trans. Computers C-21(7): log2 W stages, stage ``d`` swapping the off-diagonal d x d
blocks of every 2d x 2d block), every step one two-vector shuffle: a pure data movement, so
the values are the loaded ones, bit for bit.
"""

from __future__ import annotations


def is_power_of_two(width: int) -> bool:
    return width >= 2 and width & (width - 1) == 0


def shuffle_masks(width: int, d: int) -> tuple[list[int], list[int]]:
    """Stage ``d`` of the transpose on the row pair ``(a, b)`` (rows ``i`` and ``i + d``):
    indices into the concatenation ``a ++ b`` (GCC ``__builtin_shuffle``, Clang
    ``__builtin_shufflevector``) of the new rows ``i`` and ``i + d``."""
    lo = [j if not j & d else width + j - d for j in range(width)]
    hi = [j + d if not j & d else width + j for j in range(width)]
    return lo, hi


def transpose_steps(width: int) -> list[tuple[int, int, list[int], list[int]]]:
    """``(i, i + d, lo, hi)`` for every stage and row pair, in order: rows ``r0..r{W-1}``
    (row ``i`` lane ``j`` = element ``(i, j)``) end as their transpose."""
    if not is_power_of_two(width):
        raise ValueError(f"no transpose network for width {width}")
    steps, d = [], 1
    while d < width:
        lo, hi = shuffle_masks(width, d)
        steps += [(i, i + d, lo, hi) for i in range(width) if not i & d]
        d *= 2
    return steps


def transpose_lines(width: int, vector: str, shuffle: str) -> list[str]:
    """C statements transposing the vectors ``r0..r{W-1}`` in place (``shuffle(a, b, ...)``
    the two-vector shuffle macro)."""
    lines = []
    for i, j, lo, hi in transpose_steps(width):
        lines.append(f"{{ const {vector} a = r{i}, b = r{j}; "
                     f"r{i} = {shuffle}(a, b, {', '.join(map(str, lo))}); "
                     f"r{j} = {shuffle}(a, b, {', '.join(map(str, hi))}); }}")
    return lines


def block_helpers(width: int, names: dict[str, str]) -> dict[str, object]:
    """The block gather's body (``dst[j]`` lane ``l`` = ``src[l*n + j]``, j < W) and the block
    store's parameters and body (``dst[l*n + j]`` = ``rj`` lane ``l``) for ``width``;
    ``names``: ``V`` (lane vector), ``U`` (its unaligned, aliasing variant) and ``shuffle``."""
    v, u, shuffle = names["V"], names["U"], names["shuffle"]
    rows = range(width)
    swap = transpose_lines(width, v, shuffle)

    def offset(array: str, i: int) -> str:
        return array if i == 0 else f"{array} + n" if i == 1 else f"{array} + {i} * n"

    gather = [f"{v} r{i} = ({v})*(const {u} *)({offset('src', i)});" for i in rows]
    gather += swap + [f"dst[{i}] = r{i};" for i in rows]
    store = swap + [f"*({u} *)({offset('dst', i)}) = r{i};" for i in rows]
    return {"width": width, "gather": gather, "store": store,
            "store_params": ", ".join(f"{v} r{i}" for i in rows)}


def store_calls(width: int, name: str, values: list[str], block: str, lanes: str
                ) -> list[str]:
    """C calls writing the lane vectors ``values`` (the printed output elements of one state
    group) to the output array ``name`` (``n = len(values)`` reals per state): ``block(dst, n,
    W vectors)`` per W consecutive elements, the last block overlapping the one before it
    when W does not divide n (the same values again), or ``lanes(dst, n, vector)`` per
    element when n < W."""
    n = len(values)
    if n < width:
        return [f"{lanes}({name} + {i}, {n}, {x});" for i, x in enumerate(values)]
    starts = list(range(0, n - width + 1, width)) + ([n - width] if n % width else [])
    calls = []
    for b in starts:
        call = f"{block}({name} + {b}, {n}, {', '.join(values[b:b + width])});"
        if len(call) > 92:
            args = [f"{name} + {b}", str(n), *values[b:b + width]]
            call = f"{block}(" + ",\n        ".join(args) + ");"
        calls.append(call)
    return calls


__all__ = ["block_helpers", "is_power_of_two", "shuffle_masks", "store_calls",
           "transpose_lines", "transpose_steps"]
