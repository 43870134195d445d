"""The facts the concept pages written for learners' open questions state in prose about their snippets'
output (tensor-ssa, warp-intrinsics, arguments, and the printing section of debugging). The site build
fails when a snippet raises or an ``@expect`` no longer holds; these fail when a snippet still runs but
its output no longer says what the page's text says (a DSL update changing the SASS or a printed form).
"""

from __future__ import annotations

from mla_var3.knowledge.expected import run
from snippets.cpu import tensor_ssa


def _cells(table: str) -> dict[str, list[str]]:
    """A Markdown table's body rows by their first cell (backticks stripped)."""
    rows = {}
    for row in table.splitlines()[2:]:
        cells = [c.strip().strip("`") for c in row.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


# --- tensor-ssa ------------------------------------------------------------------------------------


def test_each_object_is_the_kind_the_page_names() -> None:
    out = run("snippets.cpu.tensor_ssa:show_kinds").output
    assert "g     _Tensor      tensor<ptr<bf16, gmem, align<16>> o (8):(1)>" in out
    assert "r     _Tensor      tensor<ptr<f32, rmem" in out
    assert "v     TensorSSA    tensor_value<vector<8xbf16> o (8,)>" in out
    assert "x     Float32      ?" in out and "total ArithValue   ?" in out


def test_value_arithmetic_compiles_to_one_wide_load_and_store_and_a_bf16_compare() -> None:
    rows = _cells(tensor_ssa.math_table())
    assert rows["LDG.E.128"] == ["1"] and rows["STG.E.128"] == ["1"]
    assert rows["MUFU.EX2"] == ["8"] and rows["FMUL"] == ["8"] and rows["F2FP.BF16.F32.PACK_AB"] == ["4"]
    assert "HSETP2.BF16_V2.GT.AND" in rows and "SEL" in rows and not any(m.startswith("FSETP") for m in rows)


def test_float_to_int_truncates_and_floor_ceil_fold_into_the_conversion() -> None:
    rows = _cells(tensor_ssa.conversion_table())
    assert rows == {"F2I.CEIL.NTZ": ["1"], "F2I.FLOOR.NTZ": ["1"], "F2I.TRUNC.NTZ": ["1"]}


def test_indexing_the_value_or_the_tensor_keeps_everything_in_registers() -> None:
    rows = _cells(tensor_ssa.indexing_table())
    assert rows["sum_of_value"][1:] == rows["sum_of_tensor"][1:] == ["0", "0", "0", "8"]
