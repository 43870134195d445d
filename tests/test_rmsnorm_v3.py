"""rmsnorm_v3 (x staged in an SMEM ring by cp.async.bulk): its launch rule as a function of N, M
and the SM count, the rows each CTA loads and stores (a model of the schedule, and the store's tile
read as coordinates from the kernel's own helper), the shapes it refuses, its sm_90a SASS (bulk
copies and mbarriers for x, 128-bit loads of w only, 128-bit LDS and STG, no spills), and, on the
H200, every row against the float64 reference on randn with y poisoned with NaN."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.plan import MAX_N, RmsNormV3Plan
from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.tiling import (
    DEFAULT_SMEM_BUDGET,
    LAYOUTS,
    MAX_STAGES,
    SM90_SMEM_PER_BLOCK,
    THREADS,
    StagedRows,
    staged_rows,
)
from mla_var3.kernel.errors import UnsupportedShapeError

H200_SMS = 132
SM90_SMEM_PER_SM = 233472  # 228 KiB shared by the CTAs of one SM
CONFIGS = RmsNormV3Plan()._autotune_configs()
CONFIG_IDS = ("six-stages", "three-stages", "two-per-sm", "one-per-sm")
GROUP_SHAPES = ({"m": 32768, "n": 4096}, {"m": 32768, "n": 8192}, {"m": 16384, "n": 16384})
# Odd shapes: M under the SM count with short blocks (199 x 1000: N with a column tail, 16 rows per
# stage), one row, three vectors per thread (6144, 12288), five with a tail (20000), several ring
# wraps with CTA ranges one row apart (32771 x 4096: 248 or 249 rows, blocks of 4).
ODD_SHAPES = (
    {"m": 199, "n": 1000},
    {"m": 1, "n": 4096},
    {"m": 7, "n": 16384},
    {"m": 4099, "n": 1024},
    {"m": 3, "n": 2048},
    {"m": 1001, "n": 6144},
    {"m": 517, "n": 12288},
    {"m": 133, "n": 20000},
    {"m": 32771, "n": 4096},
)


def test_the_rule_keeps_four_vectors_per_thread_and_512_threads_per_sm() -> None:
    rules = {n: staged_rows(n) for n in (1024, 2048, 4096, 8192, 16384)}
    # (threads per row, rows per stage, stages, CTAs per SM, scheduled)
    assert {
        n: (r.threads_per_row, r.rows_per_stage, r.stages, r.ctas_per_sm, r.scheduled)
        for n, r in rules.items()
    } == {
        1024: (32, 8, 6, 2, True),
        2048: (64, 4, 6, 2, True),
        4096: (128, 2, 6, 2, True),
        8192: (256, 1, 6, 2, True),
        16384: (512, 1, 6, 1, False),
    }
    for rule in rules.values():
        assert rule.threads * rule.ctas_per_sm == THREADS and rule.vectors_per_thread == 4
        assert rule.stage_bytes * rule.ctas_per_sm == 32 * 1024


def test_one_cta_per_sm_is_the_first_runs_rule() -> None:
    rules = {n: staged_rows(n, layout="one_per_sm") for n in (1024, 4096, 8192, 16384)}
    assert {n: (r.threads, r.rows_per_stage, r.stages, r.ctas_per_sm) for n, r in rules.items()} == {
        1024: (512, 16, 6, 1),
        4096: (512, 4, 6, 1),
        8192: (512, 2, 6, 1),
        16384: (512, 1, 6, 1),
    }


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("n", [1000, 6144, 12288, 20000, MAX_N])
def test_the_rule_at_other_lengths_fits_the_smem_budget(n: int, layout: str) -> None:
    rule = staged_rows(n, layout=layout)
    assert rule.threads * rule.ctas_per_sm == THREADS
    assert 2 <= rule.stages <= MAX_STAGES
    assert rule.ctas_per_sm * rule.stages * rule.stage_bytes <= DEFAULT_SMEM_BUDGET
    assert rule.vectors_per_thread == -(-n // (8 * rule.threads_per_row)) <= 5


def test_a_smaller_budget_gives_fewer_stages_of_the_same_size() -> None:
    assert staged_rows(16384, 3 * 32 * 1024) == StagedRows(
        n=16384, threads_per_row=512, rows_per_stage=1, stages=3
    )
    assert staged_rows(4096, 3 * 32 * 1024) == StagedRows(
        n=4096, threads_per_row=128, rows_per_stage=2, stages=3, ctas_per_sm=2, scheduled=True
    )


def test_the_grid_per_layout() -> None:
    # Rows of 512 threads: one persistent CTA per SM, no more CTAs than rows.
    long_rows = staged_rows(16384)
    assert (long_rows.ctas(16384, H200_SMS), long_rows.ctas(7, H200_SMS), long_rows.ctas(0, H200_SMS)) == (
        132,
        7,
        1,
    )
    # Scheduled: one CTA per ring of blocks (32768 rows in 16384 blocks of 2, 6 per CTA), at least
    # every slot while there are blocks (199 rows: 100 blocks), never more CTAs than rows.
    short_rows = staged_rows(4096)
    assert short_rows.ctas(32768, H200_SMS) == 2731
    assert (short_rows.ctas(199, H200_SMS), short_rows.ctas(1, H200_SMS)) == (100, 1)
    assert staged_rows(4096, layout="two_per_sm").ctas(32768, H200_SMS) == 2 * H200_SMS


def test_an_unknown_layout_is_refused() -> None:
    with pytest.raises(ValueError, match="layout must be one of"):
        staged_rows(4096, layout="three_per_sm")


def _schedule(m: int, rule: StagedRows, grid: int) -> tuple[Counter[int], list[list[int]]]:
    """The kernel's schedule in Python (kernel.py, ``RmsNormStaged.kernel``): each CTA's row range,
    the blocks its elected thread issues (prologue, then a refill after each block) in issue order,
    and the rows it stores. Returns how often each row is stored and each CTA's issue order."""
    share, extra = divmod(m, grid)
    stored: Counter[int] = Counter()
    issues = []
    for b in range(grid):
        start = b * share + min(b, extra)
        end = start + share + (1 if b < extra else 0)
        blocks = -(-(end - start) // rule.rows_per_stage)
        issued = [i for i in range(rule.stages) if i < blocks]
        for block in range(blocks):
            assert issued[block] == block  # the stage waited on holds this block
            if block + rule.stages < blocks:
                issued.append(block + rule.stages)
            first = start + block * rule.rows_per_stage
            stored.update(r for r in range(first, first + rule.rows_per_stage) if r < end)
        issues.append(issued)
    return stored, issues


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [*GROUP_SHAPES, *ODD_SHAPES], ids=lambda s: f"m{s['m']}-n{s['n']}")
def test_the_schedule_stores_every_row_once(shape: dict[str, int], layout: str) -> None:
    rule = staged_rows(shape["n"], layout=layout)
    stored, issues = _schedule(shape["m"], rule, rule.ctas(shape["m"], H200_SMS))
    assert stored == Counter(range(shape["m"]))
    assert all(order == list(range(len(order))) for order in issues)


def test_the_store_tile_starts_at_the_blocks_first_row() -> None:
    """``rows_from`` read as coordinates (an identity tensor) at every rule's tile, one row or many.
    The first GPU run stored every one-row block into row 0: the tile was tiled first and offset
    after, and a mode of size 1 has stride 0 (the last assertion keeps that pitfall in view)."""
    import cutlass.cute as cute

    from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.kernel import row_tiling, rows_from

    tilers = sorted(
        {
            row_tiling(staged_rows(n, layout=lay)).tiler
            for n in (1000, 4096, 8192, 16384, 20000)
            for lay in LAYOUTS
        }
    )
    assert (1, 16384) in tilers and (4, 4096) in tilers
    seen: dict[tuple[int, int], tuple[str, str, str]] = {}

    @cute.jit
    def probe() -> None:
        coords = cute.make_identity_tensor((32768, 20480))
        for rows, cols in tilers:
            tile = rows_from(coords, (rows, cols), 5)
            offset_after = cute.domain_offset((5, 0), cute.local_tile(coords, (rows, cols), (0, 0)))
            seen[(rows, cols)] = (str(tile[0]), str(tile[(rows - 1, cols - 1)]), str(offset_after[0]))

    cute.compile(probe)
    for (rows, cols), (first, last, offset_after) in seen.items():
        assert (first, last) == ("(5, 0)", f"({5 + rows - 1}, {cols - 1})"), (rows, cols)
        assert offset_after == ("(0, 0)" if rows == 1 else "(5, 0)")


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ({"m": 1, "n": 4097}, "multiple of 8"),
        ({"m": 1, "n": 24576}, "use rmsnorm_v2"),
        ({"m": 2**20, "n": 4096}, "32-bit element offsets"),
    ],
    ids=["n-not-16-bytes", "n-over-registers", "m-times-n-over-int32"],
)
def test_shapes_it_cannot_take_are_refused_with_the_fix(shape: dict[str, int], message: str) -> None:
    with pytest.raises(UnsupportedShapeError, match=message):
        RmsNormV3Plan().check_shape(shape)


def test_two_stages_that_do_not_fit_are_refused() -> None:
    with pytest.raises(UnsupportedShapeError, match="two SMEM stages"):
        staged_rows(65536)


def _compile(shape: dict[str, int]) -> tuple[Counter[str], int, int, int | None]:
    from mla_var3.analysis.resources import resource_usage
    from mla_var3.analysis.sass import disassemble, parse_sass
    from mla_var3.kernel.compile_cache import compile_cached

    plan = RmsNormV3Plan()
    compiled = compile_cached(plan, plan.default_config(), shape, "sm_90a", need_function=False).compiled
    ops: Counter[str] = Counter()
    for mnemonics in parse_sass(disassemble(compiled.cubin)).values():
        ops.update(mnemonics)
    usage = resource_usage(compiled.cubin)
    return (
        ops,
        max(r.local_bytes for r in usage),
        max(r.registers for r in usage),
        compiled.dynamic_smem_bytes,
    )


@pytest.mark.parametrize("shape", [*GROUP_SHAPES, {"m": 133, "n": 20000}], ids=lambda s: f"n{s['n']}")
def test_sass_x_by_bulk_copy_w_and_y_by_128_bit_accesses_no_spills(shape: dict[str, int]) -> None:
    rule = staged_rows(shape["n"])
    vectors = rule.vectors_per_thread
    ops, local, registers, smem = _compile(shape)
    # x: one bulk copy per row of a stage, in the prologue (every stage) and the refill (one stage),
    # each after the arrive that arms the stage's mbarrier with its bytes.
    assert ops["UBLKCP.S.G"] == rule.rows_per_stage * (rule.stages + 1)
    assert ops["SYNCS.ARRIVE.TRANS64"] == rule.stages + 1
    assert ops["SYNCS.PHASECHK.TRANS64.TRYWAIT"] >= 1
    # The only global loads are the weight's (two 128-bit copies per 8 columns, once per CTA); x is
    # read from SMEM (128-bit) and y stored 128 bits at a time.
    assert sum(n for op, n in ops.items() if op.startswith("LDG")) == ops["LDG.E.128"] == 2 * vectors
    assert ops["LDS.128"] == vectors and ops["STG.E.128"] == vectors
    assert local == 0 and not any(op.startswith(("LDL", "STL")) for op in ops)
    assert registers * rule.threads * rule.ctas_per_sm <= 65536  # the SM's CTAs fit its register file
    assert smem is not None and rule.stages * rule.stage_bytes <= smem <= SM90_SMEM_PER_BLOCK
    assert rule.ctas_per_sm * (smem + 1024) <= SM90_SMEM_PER_SM  # and its SMEM (1 KiB reserved per CTA)
    assert not any(op.startswith(("UCGABAR", "STAS")) for op in ops)  # no cluster


@pytest.mark.gpu
@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("shape", [*GROUP_SHAPES, *ODD_SHAPES], ids=lambda s: f"m{s['m']}-n{s['n']}")
def test_v3_matches_reference_on_gpu(shape: dict[str, int], config: dict[str, int]) -> None:
    from mla_var3.kernel.compile_cache import compile_cached

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")
    plan = RmsNormV3Plan()
    plan.check_shape(shape)
    default = plan.default_config()
    rule = staged_rows(shape["n"], config["smem_budget"], config["layout"])
    if config != default and rule == staged_rows(shape["n"], default["smem_budget"], default["layout"]):
        pytest.skip(f"{config} gives the default's rule at N = {shape['n']}: the default's test runs that kernel")
    kernel = plan.plan(config)
    compiled = compile_cached(plan, config, shape, "sm_90a").compiled  # $MLA_VAR3_CACHE_DIR: precompiled here
    inputs = plan.prepare_inputs(shape)
    outputs = plan.allocate_outputs(inputs, shape)
    outputs["y"].fill_(float("nan"))
    kernel.launch(compiled, inputs, outputs)
    torch.cuda.synchronize()
    out, ref = outputs["y"].double(), plan.reference_fn(inputs)["y"]
    assert torch.isfinite(out).all(), (
        f"{int((~torch.isfinite(out)).any(dim=1).sum())} rows not (fully) written"
    )
    # Per row: one wrong row of 16384 would hide in a tensor-wide relative error.
    row_error = (out - ref).norm(dim=1) / ref.norm(dim=1)
    worst = int(row_error.argmax())
    assert float(row_error[worst]) <= plan.tolerance(), (
        f"row {worst}: relative error {float(row_error[worst]):.3g}"
    )


def test_the_devlogs_rule_table_follows_the_plan() -> None:
    from snippets.cpu.rmsnorm_v3_rule import row_ranges, rule_table

    lines = rule_table().splitlines()
    assert "| 16384 | 512 | 1 | 32 KiB | 6 | 160 KiB | 4 | 1 (512) | persistent: one CTA per slot |" in lines
    assert (
        "| 20000 | 512 | 1 | 39.06 KiB | 4 | 117.2 KiB | 5 | 1 (512) | persistent: one CTA per slot |"
        in lines
    )
    assert (
        "| 4096 | 128 | 2 | 16 KiB | 6 | 80 KiB | 4 | 2 (256) | scheduled: a CTA per ring of blocks |"
        in lines
    )
    assert any(line.startswith("| 4097 | refused:") and "multiple of 8" in line for line in lines)
    assert any(line.startswith("| 24576 | refused:") for line in lines)
    assert row_ranges(16384, 16384, H200_SMS) == "132 CTAs: 16 of 125 rows, 116 of 124"
    assert row_ranges(7, 16384, H200_SMS) == "7 CTAs of 1 row each"
    assert row_ranges(32768, 4096, H200_SMS) == "2731 CTAs: 2727 of 12 rows, 4 of 11"
