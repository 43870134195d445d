"""Layouts and their algebra, evaluated by the CuTe DSL on a CPU for the layouts concept page.

Every result and every picture comes from the DSL: ``algebra_table`` prints what each operation
returned; the grids evaluate a layout at every coordinate of a 2-D domain while tracing (static
layouts give Python integers), and ``layout_svg.grid_svg`` draws them.
"""

from __future__ import annotations

from typing import Any

import cutlass.cute as cute

from mla_var3.knowledge.expected import program_name_only
from snippets.cpu.layout_svg import grid_svg

_rows: list[tuple[str, str]] = []
_grids: dict[str, list[list[int]]] = {}


def _trace(fn: Any) -> None:
    with program_name_only():
        cute.compile(fn)


def _evaluate(name: str, layout: Any, rows: int, cols: int) -> None:
    """Store ``layout((r, c))`` for every coordinate of a ``rows x cols`` domain (at trace time)."""
    _grids[name] = [[layout((r, c)) for c in range(cols)] for r in range(rows)]


# --8<-- [start:shape_stride]
@cute.jit
def _shape_stride():
    row_major = cute.make_layout((4, 8), stride=(8, 1))
    col_major = cute.make_layout((4, 8), stride=(1, 4))  # the default: make_layout((4, 8))
    nested = cute.make_layout(((2, 2), (2, 4)), stride=((1, 4), (2, 8)))  # 2x2 blocks, each contiguous
    for name, layout in (("row_major", row_major), ("col_major", col_major), ("nested", nested)):
        _rows.append((name, str(layout)))
        _evaluate(name, layout, 4, 8)  # offset of each (row, column)
# --8<-- [end:shape_stride]


# --8<-- [start:algebra]
@cute.jit
def _algebra():
    a = cute.make_layout((4, 8), stride=(1, 4))  # a 4x8 column-major matrix
    results = {
        "coalesce((2,(1,6)):(1,(6,2)))": cute.coalesce(cute.make_layout((2, (1, 6)), stride=(1, (6, 2)))),
        "coalesce(a)": cute.coalesce(a),
        "composition(a, (8,4):(4,1))": cute.composition(a, cute.make_layout((8, 4), stride=(4, 1))),
        "complement(4:2, 16)": cute.complement(cute.make_layout(4, stride=2), 16),
        "logical_divide(a, (2,4))": cute.logical_divide(a, (2, 4)),
        "zipped_divide(a, (2,4))": cute.zipped_divide(a, (2, 4)),
        "tiled_divide(a, (2,4))": cute.tiled_divide(a, (2, 4)),
        "logical_product((2,2):(1,2), (2,3):(1,2))": cute.logical_product(
            cute.make_layout((2, 2)), cute.make_layout((2, 3))),
        "blocked_product((2,2):(1,2), (2,3):(1,2))": cute.blocked_product(
            cute.make_layout((2, 2)), cute.make_layout((2, 3))),
        "raked_product((2,2):(1,2), (2,3):(1,2))": cute.raked_product(
            cute.make_layout((2, 2)), cute.make_layout((2, 3))),
    }
    for expr, layout in results.items():
        _rows.append((expr, str(layout)))
# --8<-- [end:algebra]


# --8<-- [start:divide]
@cute.jit
def _divide():
    a = cute.make_layout((8, 8), stride=(1, 8))  # an 8x8 column-major matrix
    tiles = cute.zipped_divide(a, (2, 4))  # ((2,4),(4,2)): mode 0 = inside a tile, mode 1 = which tile
    # Row j of the picture is tile j; column i is element i of that tile; the value is its offset in `a`.
    _grids["zipped"] = [[tiles((i, j)) for i in range(cute.size(tiles, mode=[0]))]
                        for j in range(cute.size(tiles, mode=[1]))]  # fmt: skip
# --8<-- [end:divide]


# --8<-- [start:products]
@cute.jit
def _products():
    block = cute.make_layout((2, 2))  # the tile to repeat: 4 elements
    grid = cute.make_layout((2, 3))  # how many copies: 2 x 3
    _evaluate("blocked", cute.blocked_product(block, grid), 4, 6)  # each copy's 4 offsets stay together
    _evaluate("raked", cute.raked_product(block, grid), 4, 6)  # the copies interleave
# --8<-- [end:products]


def algebra_table() -> str:
    """Each operation and the layout the DSL returned for it."""
    _rows.clear()
    _trace(_algebra)
    return "\n".join(["| expression | result |", "|---|---|", *(f"| `{e}` | `{v}` |" for e, v in _rows)])


def shape_stride_pictures() -> str:
    """The offset of each (row, column) of three 4x8 layouts, coloured by offset // 4 (runs of 4 addresses)."""
    _rows.clear()
    _grids.clear()
    _trace(_shape_stride)
    return "\n".join(
        grid_svg([[v // 4 for v in row] for row in _grids[name]], labels=_grids[name], title=f"{name}: {layout}",
                 row_label="row", col_label="column", cell_text="{v}")
        for name, layout in _rows
    )  # fmt: skip


def divide_picture() -> str:
    """``zipped_divide`` of an 8x8 column-major matrix into 2x4 tiles: offsets, one row per tile."""
    _grids.clear()
    _trace(_divide)
    offsets = _grids["zipped"]
    return grid_svg([[j] * len(row) for j, row in enumerate(offsets)], labels=offsets,
                    title="zipped_divide((8,8):(1,8), (2,4)): offsets, one row per tile",
                    row_label="tile", col_label="element of the tile")  # fmt: skip


def product_pictures() -> str:
    """``blocked_product`` and ``raked_product`` of a 2x2 tile over 2x3 copies, coloured by copy."""
    _grids.clear()
    _trace(_products)
    return "\n".join(
        grid_svg([[v // 4 for v in row] for row in _grids[name]], labels=_grids[name],
                 title=f"{name}_product((2,2), (2,3)): offsets, coloured by copy (offset // 4)",
                 row_label="row", col_label="column")
        for name in ("blocked", "raked")
    )  # fmt: skip

