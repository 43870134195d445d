"""rmsnorm_v3 (x staged in an SMEM ring by cp.async.bulk, persistent CTAs): its launch rule as a
function of N, M and the SM count, the shapes it refuses, its sm_90a SASS (bulk copies and mbarriers
for x, 128-bit loads of w only, 128-bit LDS and STG, no spills), and, on the H200, every row against
the float64 reference on randn with y poisoned with NaN."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.plan import MAX_N, RmsNormV3Plan
from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.tiling import (
    DEFAULT_SMEM_BUDGET,
    MAX_STAGES,
    SM90_SMEM_PER_BLOCK,
    THREADS,
    StagedRows,
    staged_rows,
)
from mla_var3.kernel.errors import UnsupportedShapeError

H200_SMS = 132
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


def test_the_rule_keeps_four_vectors_per_thread_and_32_kib_stages_up_to_16384() -> None:
    rules = {n: staged_rows(n) for n in (1024, 2048, 4096, 8192, 16384)}
    assert {n: (r.threads_per_row, r.rows_per_stage, r.stages) for n, r in rules.items()} == {
        1024: (32, 16, 6),
        2048: (64, 8, 6),
        4096: (128, 4, 6),
        8192: (256, 2, 6),
        16384: (512, 1, 6),
    }
    for rule in rules.values():
        assert rule.threads == THREADS and rule.vectors_per_thread == 4 and rule.stage_bytes == 32 * 1024


@pytest.mark.parametrize("n", [1000, 6144, 12288, 20000, MAX_N])
def test_the_rule_at_other_lengths_fits_the_smem_budget(n: int) -> None:
    rule = staged_rows(n)
    assert rule.threads == THREADS
    assert 2 <= rule.stages <= MAX_STAGES and rule.stages * rule.stage_bytes <= DEFAULT_SMEM_BUDGET
    assert rule.vectors_per_thread == -(-n // (8 * rule.threads_per_row)) <= 5


def test_a_smaller_budget_gives_fewer_stages_of_the_same_size() -> None:
    assert staged_rows(16384, 3 * 32 * 1024) == StagedRows(
        n=16384, threads_per_row=512, rows_per_stage=1, stages=3
    )


def test_one_cta_per_sm_and_no_more_ctas_than_rows() -> None:
    assert StagedRows.ctas(16384, H200_SMS) == H200_SMS
    assert StagedRows.ctas(7, H200_SMS) == 7
    assert StagedRows.ctas(0, H200_SMS) == 1


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
    assert registers * THREADS <= 65536  # the 512-thread CTA fits an SM's register file
    assert smem is not None and rule.stages * rule.stage_bytes <= smem <= SM90_SMEM_PER_BLOCK
    assert not any(op.startswith(("UCGABAR", "STAS")) for op in ops)  # no cluster


@pytest.mark.gpu
@pytest.mark.parametrize(
    "config",
    [{"smem_budget": DEFAULT_SMEM_BUDGET}, {"smem_budget": 3 * 32 * 1024}],
    ids=["six-stages", "three-stages"],
)
@pytest.mark.parametrize("shape", [*GROUP_SHAPES, *ODD_SHAPES], ids=lambda s: f"m{s['m']}-n{s['n']}")
def test_v3_matches_reference_on_gpu(shape: dict[str, int], config: dict[str, int]) -> None:
    from mla_var3.kernel.compile_cache import compile_cached

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")
    plan = RmsNormV3Plan()
    plan.check_shape(shape)
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
    assert "| 16384 | 512 | 1 | 32 KiB | 6 | 160 KiB | 4 |" in lines
    assert "| 20000 | 512 | 1 | 39.06 KiB | 4 | 117.2 KiB | 5 |" in lines
    assert any(line.startswith("| 4097 | refused:") and "multiple of 8" in line for line in lines)
    assert any(line.startswith("| 24576 | refused:") for line in lines)
    assert row_ranges(16384, H200_SMS) == "132 CTAs: 16 of 125 rows, 116 of 124"
    assert row_ranges(7, H200_SMS) == "7 CTAs of 1 row each"
