"""Layout algebra on a CPU: CuTe DSL layouts built and evaluated at trace time (no GPU, no launch).

The docs build imports this file from markdown-exec blocks (the DSL reads a function's source
from disk, so the code cannot live in the page). Each ``@cute.jit`` function below is traced by
``cute.compile``; Python code inside it runs once, with layouts as compile-time values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cutlass
import cutlass.cute as cute

from mla_var3.knowledge.expected import program_name_only

_results: list[tuple[str, str]] = []
_grid: list[list[int]] = []


def _trace(fn: Callable[..., None], *args: Any) -> None:
    """``cute.compile`` with the host program's arguments hidden: the DSL parses ``sys.argv`` for
    ``-diagnostic`` with argparse, which takes ``-d`` as its abbreviation, so ``mkdocs build -d DIR``
    would make the compile exit the build."""
    with program_name_only():
        cute.compile(fn, *args)


# --8<-- [start:algebra]
@cute.jit
def _algebra() -> None:
    row_major = cute.make_layout((4, 8), stride=(8, 1))  # 4x8 matrix, rows contiguous
    _results.append(("make_layout((4, 8), stride=(8, 1))", str(row_major)))
    # Split into 2x4 tiles: mode 0 is the tile, mode 1 says which tile.
    _results.append(("zipped_divide(row_major, (2, 4))", str(cute.zipped_divide(row_major, (2, 4)))))
    # Read row_major through another layout: index i -> row_major(transposed(i)).
    transposed = cute.make_layout((8, 4), stride=(4, 1))
    _results.append(("composition(row_major, (8, 4):(4, 1))", str(cute.composition(row_major, transposed))))
    _results.append(("coalesce((2, (1, 6)):(1, (6, 2)))", str(cute.coalesce(cute.make_layout((2, (1, 6)), stride=(1, (6, 2)))))))
    swizzle = cute.make_swizzle(3, 3, 3)  # XOR bits [3,6) of an offset with bits [6,9)
    _results.append(("make_swizzle(3, 3, 3)", str(swizzle)))
    _results.append(("size, cosize of row_major", f"{cute.size(row_major)}, {cute.cosize(row_major)}"))
# --8<-- [end:algebra]


def algebra_table() -> str:
    """A Markdown table: each expression and the layout the DSL computed for it."""
    _results.clear()
    _trace(_algebra)
    rows = [f"| `{expr}` | `{value}` |" for expr, value in _results]
    return "\n".join(["| expression | result |", "|---|---|", *rows])


# --8<-- [start:tv_layout]
@cute.jit
def _tv_owner(threads: cutlass.Constexpr, vec: cutlass.Constexpr, ilp: cutlass.Constexpr) -> None:
    # (thread, (value, repeat)) -> offset in a tile of threads*vec*ilp elements:
    # thread t owns the vec-wide chunk t of each threads*vec-element row.
    tv = cute.make_layout((threads, (vec, ilp)), stride=(vec, (1, threads * vec)))
    owner = [0] * cute.size(tv)
    for t in cutlass.range_constexpr(threads):
        for v in cutlass.range_constexpr(vec * ilp):
            owner[tv((t, v))] = t
    _grid.append(owner)
# --8<-- [end:tv_layout]


def tv_owner_rows(threads: int, vec: int, ilp: int) -> list[list[int]]:
    """The thread that owns each element of a tile, one row per repeat (``ilp``)."""
    _grid.clear()
    _trace(_tv_owner, threads, vec, ilp)
    owner = _grid[0]
    width = threads * vec
    return [owner[r * width : (r + 1) * width] for r in range(ilp)]


# --8<-- [start:swizzle]
@cute.jit
def _swizzled_chunks(rows: cutlass.Constexpr, row_elems: cutlass.Constexpr) -> None:
    # A rows x row_elems tile of 16-bit values: 8 values are one 16-byte chunk.
    plain = cute.make_layout((rows, row_elems), stride=(row_elems, 1))
    swizzled = cute.make_composed_layout(cute.make_swizzle(3, 3, 3), 0, plain)
    chunks = row_elems // 8
    # For each physical chunk slot, which logical chunk of the row landed there.
    for r in cutlass.range_constexpr(rows):
        slots = [0] * chunks
        for c in cutlass.range_constexpr(chunks):
            slots[(swizzled((r, c * 8)) % row_elems) // 8] = c
        _grid.append(slots)
# --8<-- [end:swizzle]


def swizzle_rows(rows: int = 8, row_elems: int = 64) -> list[list[int]]:
    """Per row, the logical 16-byte chunk stored in each physical chunk slot under ``Swizzle<3,3,3>``."""
    _grid.clear()
    _trace(_swizzled_chunks, rows, row_elems)
    return [list(r) for r in _grid]
