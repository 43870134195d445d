"""The Hopper GEMM config rule (``hopper_gemm/config_rule.py``) and the plan that runs it
(``hopper_gemm_auto``): tiles per SM, wave quantization, the SMEM budget of every pick, the
rule's picks where we know what they must be, and the v5 kernel compiled with them. The plan's
GPU correctness test is with the worklog steps' (``test_hopper_gemm_steps.py``)."""

from __future__ import annotations

import math
import random

import pytest

from mla_var3.kernel.cute_python.gemm.hopper_gemm.config_rule import (
    CLUSTERS,
    H200,
    TIE,
    TILES,
    GemmConfig,
    candidates,
    concurrent_clusters,
    estimate,
    pick_config,
    ranked,
    raster_group,
)

V5_DEFAULT = GemmConfig((128, 256), (2, 1), 4, 8)  # hopper_gemm_ws's default config


def test_tiles_per_sm_and_waves_of_the_one_size_config_at_1024() -> None:
    # 1024^3 in 128 x 256 tiles: 8 x 4 = 32 tiles, 16 pairs for 66 pair slots: a quarter of the GPU.
    e = estimate(1024, 1024, 1024, V5_DEFAULT)
    assert (e.tiles, e.cluster_tiles, e.concurrent_clusters, e.waves) == (32, 16, 66, 1)
    assert e.wave_efficiency == pytest.approx(16 / 66)
    assert e.tiles_per_sm == pytest.approx(32 / 132)


def test_one_tile_past_a_full_wave_costs_a_whole_wave() -> None:
    config = GemmConfig((128, 128), (1, 1), 6, 1)
    full = estimate(12 * 128, 11 * 128, 8192, config)  # 132 tiles
    one_more = estimate(7 * 128, 19 * 128, 8192, config)  # 133 tiles
    assert (full.waves, one_more.waves) == (1, 2)
    assert one_more.wave_efficiency == pytest.approx(133 / 264)
    assert full.bound == one_more.bound == "feed"
    assert one_more.time_us - H200.fixed_us == pytest.approx(2 * (full.time_us - H200.fixed_us))


def test_large_shapes_get_the_v5_default_config() -> None:
    for shape in ((8192, 8192, 8192), (4096, 4096, 4096), (5632, 3072, 8192), (4096, 128256, 4096)):
        assert pick_config(*shape) == V5_DEFAULT, shape


def test_small_shapes_trade_tile_size_for_filled_sms() -> None:
    for size in (512, 1024):
        pick = estimate(size, size, size, pick_config(size, size, size))
        assert pick.config.tile_mn[0] * pick.config.tile_mn[1] < 128 * 256
        assert pick.waves == 1 and pick.tiles > estimate(size, size, size, V5_DEFAULT).tiles
    pick_1024 = estimate(1024, 1024, 1024, pick_config(1024, 1024, 1024))
    assert pick_1024.tiles_per_sm >= 0.9, "one wave that fills the GPU"
    assert pick_1024.time_us < estimate(1024, 1024, 1024, V5_DEFAULT).time_us / 1.5


def test_skinny_m_is_dram_bound_and_uses_64_row_tiles() -> None:
    for m in (16, 64):
        pick = estimate(m, 8192, 8192, pick_config(m, 8192, 8192))
        assert pick.bound == "dram" and pick.config.tile_mn[0] == 64
        assert pick.config.raster_group_m == 1, "one tile row: nothing to band"


def test_fewer_sms_never_want_smaller_tiles() -> None:
    area = {sms: math.prod(pick_config(1024, 1024, 1024, sm_count=sms).tile_mn) for sms in (16, 66, 132)}
    assert area[16] >= area[66] >= area[132]


def test_every_candidate_fits_smem_and_one_more_stage_would_not() -> None:
    import cutlass.memory

    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import (
        DSL_STATIC_SMEM,
        smem_budget,
    )

    capacity = cutlass.memory.get_smem_capacity_in_bytes("sm_90")
    seen = set()
    for config in candidates(8192, 8192):
        tile = (*config.tile_mn, 64)
        assert smem_budget(tile, config.stages, 4).total + DSL_STATIC_SMEM <= capacity, config
        assert smem_budget(tile, config.stages + 1, 4).total + DSL_STATIC_SMEM > capacity, config
        seen.add((config.tile_mn, config.cluster_mn))
    assert seen == {(t, c) for t in TILES for c in CLUSTERS}


def test_clusters_wider_than_the_tile_grid_are_not_candidates() -> None:
    assert all(c.cluster_mn[0] == 1 for c in candidates(16, 8192))


def test_raster_band_balances_a_wave_of_a_and_b() -> None:
    # 66 pairs of 128 x 256 tiles along M: sqrt(66 * 256 / 256) ~ 8 cluster rows per band.
    assert raster_group(8192, 8192, (128, 256), (2, 1), 132) == 8
    assert raster_group(8192, 8192, (128, 128), (1, 1), 132) == round(math.sqrt(132))
    assert raster_group(256, 8192, (128, 256), (2, 1), 132) == 1


def test_concurrent_clusters_are_whole_clusters() -> None:
    assert [concurrent_clusters(c, 132) for c in ((1, 1), (2, 1), (1, 2))] == [132, 66, 66]


def test_the_pick_is_the_fastest_within_the_tie_margin_at_random_shapes() -> None:
    rng = random.Random(20261130)
    for _ in range(40):
        m, n, k = (8 * rng.randint(32, 2048) for _ in range(3))
        estimates = ranked(m, n, k)
        best = min(e.time_us for e in estimates)
        assert estimates[0].time_us <= best * (1 + TIE), (m, n, k)
        assert estimates[0].config == pick_config(m, n, k)


# --- the plan ------------------------------------------------------------------------------------


def test_auto_plan_config_zero_is_the_rule_and_the_rest_are_its_candidates() -> None:
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.auto.plan import RULE, HopperGemmAutoPlan

    plan = HopperGemmAutoPlan("bfloat16")
    first, *fixed = plan._autotune_configs()
    assert first == {"rule": RULE, "sm_count": 132}  # no GPU here: the H200's count
    assert len(fixed) == len(TILES) * len(CLUSTERS)
    assert plan.resolve({"m": 8192, "n": 8192, "k": 8192}, first) == V5_DEFAULT.kernel_kwargs()
    assert plan.static_shape_params is None, "the binary depends on the shape through the rule"


def test_auto_plan_at_8192_compiles_to_the_v5_binary(hopper_ws_default_cubin: bytes) -> None:
    from mla_var3.kernel.compile_cache import compile_cached
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.auto.plan import HopperGemmAutoPlan

    plan = HopperGemmAutoPlan("bfloat16")
    result = compile_cached(
        plan, plan.default_config(), {"m": 8192, "n": 8192, "k": 8192}, "sm_90a", need_function=False
    )
    assert result.compiled.cubin == hopper_ws_default_cubin


def test_auto_plan_at_1024_runs_the_small_tile() -> None:
    from mla_var3.analysis.sass import instruction_histogram, opcode_histogram
    from mla_var3.kernel.compile_cache import compile_cached
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.auto.plan import HopperGemmAutoPlan

    plan = HopperGemmAutoPlan("float16")
    shape = {"m": 1024, "n": 1024, "k": 1024}
    result = compile_cached(plan, plan.default_config(), shape, "sm_90a", need_function=False)
    pick = pick_config(1024, 1024, 1024, "float16")
    ops = opcode_histogram(instruction_histogram(result.compiled.cubin, "sm_90a"))
    assert ops.get("UTMASTG", 0) == pick.tile_mn[1] // 32, "one TMA store per 64 x 32 subtile"
    assert "LDL" not in ops and ops.get("USETMAXREG", 0) == 2
    assert result.compiled.dynamic_smem_bytes <= 227 * 1024


def test_the_random_group_shapes_are_the_seeded_draw() -> None:
    from mla_var3.evidence.groups import GEMM_RANDOM_SHAPES

    rng = random.Random(10)
    drawn = []
    for _ in range(5):
        m, n, k = (8 * rng.randint(32, 2048) for _ in range(3))
        drawn.append(f"m{m}-n{n}-k{k}")
    assert tuple(drawn) == GEMM_RANDOM_SHAPES
