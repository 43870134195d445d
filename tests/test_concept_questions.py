"""The facts the concept pages written for learners' open questions state in prose about their snippets'
output (tensor-ssa, warp-intrinsics, arguments, and the printing section of debugging). The site build
fails when a snippet raises or an ``@expect`` no longer holds; these fail when a snippet still runs but
its output no longer says what the page's text says (a DSL update changing the SASS or a printed form).
"""

from __future__ import annotations

from mla_var3.knowledge.expected import run
from snippets.cpu import arguments, tensor_ssa, warp_intrinsics


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


# --- warp-intrinsics -------------------------------------------------------------------------------


def _added(table: str) -> dict[str, str]:
    """A two-column table of the warp-intrinsics page: call -> the SASS cell as printed."""
    return {row.split("|")[1].strip().strip("`"): row.split("|")[2].strip() for row in table.splitlines()[2:]}


def test_each_warp_call_adds_the_instruction_the_page_names() -> None:
    rows = _added(warp_intrinsics.intrinsic_table())
    assert rows["v + warp_idx()"] == "`LEA.HI`" and "`S2R`" in rows["v + lane_idx()"]
    for mode in ("IDX", "BFLY", "DOWN", "UP"):
        assert any(added == f"`SHFL.{mode}`" for added in rows.values())
    assert "`VOTE.ANY`" in rows["vote_ballot_sync(v > 0)"] and "`VOTE.ALL`" in rows["vote_all_sync(v > 0)"]
    assert "`POPC`" in rows["popc(vote_ballot_sync(v > 0))"]
    assert rows["warp_reduction(v, operator.add)"] == "`IADD3` ×5, `SHFL.BFLY` ×5"
    assert "`REDUX.SUM.S32`" in rows["warp_redux_sync(v, 'add')"] and "SHFL" not in rows["warp_redux_sync(v, 'add')"]
    assert "`ELECT`" in rows["with elect_one():"]


def test_float_redux_is_one_instruction_on_blackwell_and_refused_on_hopper() -> None:
    rows = _added(warp_intrinsics.redux_table())
    assert rows["float_max_tree"] == "`FMNMX` ×5, `SHFL.BFLY` ×5"
    assert "`CREDUX.MAX.F32`" in rows["float_max_redux"] and "SHFL" not in rows["float_max_redux"]
    assert "ptxas" in run("snippets.cpu.warp_intrinsics:error_float_redux_on_hopper").error_text


# --- arguments -------------------------------------------------------------------------------------


def test_only_the_constexpr_arrives_as_a_python_value() -> None:
    out = run("snippets.cpu.arguments:show_scalar_kinds").output
    assert "d: Constexpr       -> int      4" in out
    for line in ("a: Int32           -> Int32    ?", "b: int             -> Int32    ?",
                 "e: Float32         -> Float32  ?", "f: bool            -> Boolean  ?"):  # fmt: skip
        assert line in out


def test_python_ints_recompile_through_the_cache_and_the_compiled_object_truncates_floats() -> None:
    rows = arguments.scalar_calls_table().splitlines()[2:]
    grew = [row.split("|")[2].strip() for row in rows[:6]]
    assert grew == ["yes", "no (cache hit)", "yes", "yes", "no (cache hit)", "yes"]
    assert rows[-1] == "| `compiled(2.7)` | no (the compiled object) | `n = 2, scale = 2` |"


def test_the_divisibility_promise_sets_the_access_width() -> None:
    rows = {row.split("|")[1].strip(): row for row in arguments.divisibility_table().splitlines()[2:]}
    assert "`LDG.E.U16` ×8" in rows["1"] and "`LDG.E` ×4" in rows["2"] and "`LDG.E.128` ×1" in rows["8"]
    assert "?{i64 div=8}" in rows["8"]


def test_printed_forms_are_the_ones_the_page_explains() -> None:
    out = run("snippets.cpu.arguments:show_printed_forms").output
    for form in ("((2,4),(2,2)):((1,4),(2,16))", "(?{div=4},8):(1,?{div=4})", "S<3,4,3> o 0 o (8,64):(64,1)",
                 "tensor<ptr<bf16, gmem, align<16>> o (?,?{div=8}):(?{i64 div=8},1)>", "((Int32(?), Int32(?)), (Int64(?), 1))"):  # fmt: skip
        assert form in out


# --- debugging: printing ---------------------------------------------------------------------------


def test_printf_formats_and_print_tensor_print_what_the_page_reads() -> None:
    out = run("snippets.cpu.printing:formats").output
    assert "braces:  n = 7, x = 2.500000" in out and "C style: n = 7, x = 2.500" in out
    assert "layout:  (2,3):(3,1)" in out and ": f32, generic, align<4>) o (2,3):(3,1), data=" in out
    assert "[ 3.000000,  4.000000,  5.000000, ]" in out
