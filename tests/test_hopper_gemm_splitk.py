"""The split-K Hopper GEMM (``hopper_gemm_splitk``): its split rule's picks, the K slices, the
SMEM budget with an fp32 C ring, bad shapes and configs, the sm_90a build at the comparison
group's shapes with the SASS that proves its parts (WGMMA fed by TMA, fp32 partials through the
TMA store, the reduce's 128-bit loads after ``griddepcontrol.wait``), and -- on an H200 -- the
rule's and every fixed config against the fp32 reference at ragged shapes."""

from __future__ import annotations

import math
import re
from functools import cache

import pytest

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.cute_python.gemm.hopper_gemm.split_k.kernel import k_slice
from mla_var3.kernel.cute_python.gemm.hopper_gemm.split_k.plan import (
    MAX_PARTIAL_SHARE,
    MIN_FILL,
    MIN_K_TILES,
    HopperGemmSplitKPlan,
    SplitKConfig,
    estimate_splitk,
    max_splits,
    padded_n,
    pick_splitk,
)
from mla_var3.kernel.errors import UnsupportedShapeError

SM90A = Arch.parse("sm_90a")
GROUP_SHAPES = {
    "m16": {"m": 16, "n": 8192, "k": 8192},
    "m64": {"m": 64, "n": 8192, "k": 8192},
    "m9616": {"m": 9616, "n": 784, "k": 7280},
    "m1024": {"m": 1024, "n": 1024, "k": 1024},
}
# The rule's picks at the group's shapes (the plan's docstring gives the reasoning).
PICKS = {
    "m16": SplitKConfig((64, 128), (1, 1), 2, 1),  # 64 tiles x 2 slices of 64 K tiles: 128 units
    "m64": SplitKConfig((64, 128), (1, 1), 2, 1),
    "m9616": SplitKConfig((128, 128), (2, 1), 1, 6),  # 532 tiles fill waves already: the v5 pick, unsplit
    "m1024": SplitKConfig((128, 64), (1, 2), 1, 8),  # 16 MiB of partials for 4 MiB of A and B: unsplit
}
# A long K behind a few tiles: 32 pairs of 128 x 128 x 2 slices of 128 K tiles (a 2 x 1 cluster split).
LONG_K = {"m": 1024, "n": 1024, "k": 16384}
LONG_K_PICK = SplitKConfig((128, 128), (2, 1), 2, 4)
BUILDS = {**GROUP_SHAPES, "long_k": LONG_K}


@pytest.mark.parametrize("key", PICKS)
def test_rule_picks_at_the_group_shapes(key: str) -> None:
    assert pick_splitk(*GROUP_SHAPES[key].values()) == PICKS[key]


@pytest.mark.parametrize(
    "shape",
    [*GROUP_SHAPES.values(), LONG_K, {"m": 256, "n": 8192, "k": 8192}, {"m": 512, "n": 512, "k": 512}],
    ids=str,
)
def test_split_picks_fill_the_gpu_with_slices_of_at_least_four_k_tiles(shape: dict[str, int]) -> None:
    config = pick_splitk(*shape.values())
    if config.splits == 1:
        return
    (tm, tn), (cm, cn) = config.tile_mn, config.cluster_mn
    cluster_tiles = math.ceil(math.ceil(shape["m"] / tm) / cm) * math.ceil(math.ceil(shape["n"] / tn) / cn)
    ctas = cluster_tiles * config.splits * cm * cn
    assert MIN_FILL * 132 <= ctas <= 132, "one wave that fills at least 3/4 of the SMs"
    assert math.ceil(shape["k"] / 64) // config.splits >= MIN_K_TILES
    partials = 4 * shape["m"] * config.splits * padded_n(shape["n"], config.tile_mn, config.cluster_mn)
    assert partials <= MAX_PARTIAL_SHARE * (shape["m"] + shape["n"]) * shape["k"] * 2
    if shape["m"] <= 64:
        assert tm == 64, "no 128-row tile for a skinny M"


def test_shapes_whose_tiles_fill_a_wave_or_whose_partials_dominate_are_not_split() -> None:
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.config_rule import pick_config

    for shape in ((2048, 2048, 2048), (8192, 8192, 8192), (9616, 784, 7280), (1024, 1024, 1024)):
        picked, rule = pick_splitk(*shape), pick_config(*shape)
        assert (picked.splits, picked.tile_mn, picked.cluster_mn) == (1, rule.tile_mn, rule.cluster_mn), shape


def test_the_fewest_splits_that_fill_win() -> None:
    # 64 x 256 tiles would need 4 slices to fill the GPU at M = 16, 64 x 128 tiles need 2.
    config = pick_splitk(16, 8192, 8192)
    assert config.splits == 2 and config.tile_mn == (64, 128)


def test_short_k_is_never_split() -> None:
    assert max_splits(255) == 1 and max_splits(256) == 1 and max_splits(512) == 2
    assert pick_splitk(16, 8192, 192).splits == 1


def test_long_k_behind_few_tiles_is_split_and_the_model_predicts_a_gain() -> None:
    assert pick_splitk(*LONG_K.values()) == LONG_K_PICK
    split = estimate_splitk(*LONG_K.values(), LONG_K_PICK)
    unsplit = estimate_splitk(*LONG_K.values(), pick_splitk(1024, 1024, 1024))
    assert (split.units, split.waves) == (128, 1)
    assert split.time_us < unsplit.time_us


@pytest.mark.parametrize("k_tiles", [1, 2, 7, 16, 114, 128])
@pytest.mark.parametrize("splits", [1, 2, 3, 4, 7])
def test_k_slices_cover_k_once_balanced_and_never_empty(k_tiles: int, splits: int) -> None:
    if splits > k_tiles:
        return  # the plan rejects it (test_more_slices_than_k_tiles_is_rejected)
    slices = [k_slice(s, k_tiles, splits) for s in range(splits)]
    assert slices[0][0] == 0 and sum(count for _, count in slices) == k_tiles
    assert all(first + count == nxt for (first, count), (nxt, _) in zip(slices, slices[1:], strict=False))
    counts = {count for _, count in slices}
    assert min(counts) >= 1 and max(counts) - min(counts) <= 1


def test_workspace_columns_are_whole_cluster_tiles() -> None:
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.split_k.kernel import HopperGemmSplitK

    for tile, cluster, n in (((64, 256), (1, 1), 784), ((128, 128), (1, 2), 1048), ((128, 64), (2, 1), 8192)):
        gemm = HopperGemmSplitK(tile, cluster, 2)
        assert gemm.padded_n(n) == padded_n(n, tile, cluster)
        assert (
            padded_n(n, tile, cluster) % (tile[1] * cluster[1]) == 0
            and 0 <= padded_n(n, tile, cluster) - n < tile[1] * cluster[1]
        )


def test_stages_fit_smem_with_the_fp32_ring_and_one_more_would_not() -> None:
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.config_rule import TILES
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.split_k.kernel import (
        HopperGemmSplitK,
        splitk_smem_budget,
    )
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import SMEM_CAPACITY_SM90

    for tile in TILES:
        gemm = HopperGemmSplitK(tile, (1, 1), 2)
        assert gemm.dynamic_smem_bytes() <= SMEM_CAPACITY_SM90
        assert splitk_smem_budget(gemm.tile_mnk, gemm.stages + 1, gemm.epi_stages).total > SMEM_CAPACITY_SM90
        ring_16bit = 64 * 32 * 2 * gemm.epi_stages * gemm.consumer_wgs
        assert splitk_smem_budget(gemm.tile_mnk, gemm.stages, gemm.epi_stages).c_ring >= 2 * ring_16bit
    with pytest.raises(ValueError, match="fp32 C ring"):
        HopperGemmSplitK((128, 256), (1, 1), 2, stages=4)  # 4 fit a 16-bit ring, not an fp32 one


def test_more_slices_than_k_tiles_is_rejected() -> None:
    plan = HopperGemmSplitKPlan("bfloat16")
    fixed = plan._autotune_configs()[1]
    assert fixed["splits"] == 4
    with pytest.raises(UnsupportedShapeError, match=r"4 K slices need K >= 193 \(K=128 has 2 tiles"):
        plan.resolve({"m": 16, "n": 8192, "k": 128}, fixed)
    assert plan.resolve({"m": 16, "n": 8192, "k": 256}, fixed) == fixed


def test_bad_shapes_are_rejected_in_one_line() -> None:
    plan = HopperGemmSplitKPlan("bfloat16")
    with pytest.raises(UnsupportedShapeError, match="--k .* multiple of 8"):
        plan.check_shape({"m": 16, "n": 8192, "k": 100})
    with pytest.raises(UnsupportedShapeError, match="M x N .* at most"):
        plan.check_shape({"m": 2**20, "n": 2**14, "k": 64})
    with pytest.raises(ValueError, match="splits must be >= 1"):
        from mla_var3.kernel.cute_python.gemm.hopper_gemm.split_k.kernel import HopperGemmSplitK

        HopperGemmSplitK((128, 128), (1, 1), 0)


def test_registered_for_sm90a_with_the_rule_first() -> None:
    from mla_var3.kernel.registry import get_plan

    plan = get_plan("hopper_gemm_splitk")
    assert plan is HopperGemmSplitKPlan
    assert plan.archs == ("sm_90a",) and plan.layer == "gemm" and plan.dtypes == ("bfloat16", "float16")
    assert plan("bfloat16").default_config()["rule"] == "pick_splitk"


def test_group_declares_auto_and_splitk_against_cublas() -> None:
    from mla_var3.evidence.groups import get_group

    group = get_group("gemm_bf16_splitk")
    assert group.reference == "cublas_gemm"
    assert [m.id for m in group.members] == ["cublas_gemm", "hopper_gemm_auto", "hopper_gemm_splitk"]
    assert group.shapes == tuple("m{m}-n{n}-k{k}-bfloat16".format(**shape) for shape in GROUP_SHAPES.values())


def _misplaced_epilogue_values(c_dtype: str, tile_n: int, threads: range) -> tuple[int, int]:
    """Trace the epilogue's register -> SMEM copy on coordinate tensors: for each thread, value v of
    subtile j of the retiled accumulator must be the tile element at (row, 32 j + col) of the
    subtile's value v, both sides named by the copy's source layout (stmatrix moves values across
    lanes, so a thread's SMEM addresses are not its values' coordinates); for the fp32 plain store
    the destination layout must be that same map. Returns (mismatches, values checked)."""
    import cutlass
    import cutlass.cute as cute
    import cutlass.utils.hopper_helpers as sm90_utils
    from cutlass.cute.nvgpu import CopyUniversalOp, OperandMajorMode, warp

    counts = {}

    @cute.jit
    def trace() -> None:
        bf16 = cutlass.BFloat16
        wg_mma = sm90_utils.make_trivial_tiled_mma(
            bf16,
            bf16,
            OperandMajorMode.K,
            OperandMajorMode.K,
            cutlass.Float32,
            (1, 1, 1),
            tiler_mn=(64, tile_n),
        )
        if cutlass.const_expr(c_dtype == "float32"):  # the split kernel's epilogue
            c_map = cute.make_copy_atom(warp.StMatrix8x8x16bOp(False, 4), cutlass.Float32)
            store = cute.make_copy_atom(CopyUniversalOp(), cutlass.Float32)
        else:  # the v5 epilogue, as a control of the check itself
            c_map = store = cute.make_copy_atom(warp.StMatrix8x8x16bOp(False, 4), bf16)
        r2s = cute.make_tiled_copy_S(store, cute.make_tiled_copy_C_atom(c_map, wg_mma))
        tile, sub = cute.make_identity_tensor((64, tile_n)), cute.make_identity_tensor((64, 32))
        bad, checked = 0, 0
        for t in cutlass.range_constexpr(threads.start, threads.stop, threads.step):
            acc = r2s.retile(wg_mma.get_slice(t).partition_C(tile))
            src, dst = r2s.get_slice(t).partition_S(sub), r2s.get_slice(t).partition_D(sub)
            n = cute.size(src)
            for j in cutlass.range_constexpr(tile_n // 32):
                for v in cutlass.range_constexpr(n):
                    want = (src[v][0], 32 * j + src[v][1])
                    bad += cutlass.const_expr((acc[j * n + v][0], acc[j * n + v][1]) != want)
                    if cutlass.const_expr(c_dtype == "float32"):
                        bad += cutlass.const_expr((dst[v][0], dst[v][1]) != (src[v][0], src[v][1]))
                    checked += 1
        counts["result"] = (bad, checked)

    cute.compile(trace, options="--gpu-arch sm_90a")
    return counts["result"]


@pytest.mark.parametrize("c_dtype", ["bfloat16", "float32"])
def test_fp32_epilogue_puts_every_accumulator_value_at_its_column(c_dtype: str) -> None:
    bad, checked = _misplaced_epilogue_values(c_dtype, 128, range(0, 128, 9))
    assert checked == 15 * 4 * 16 and bad == 0


# --- sm_90a builds (CPU) ------------------------------------------------------------------------
@cache
def _compiled(key: str, dtype: str = "bfloat16"):  # noqa: ANN202 - CompileResult
    from mla_var3.kernel.compile_cache import compile_cached

    plan = HopperGemmSplitKPlan(dtype)
    return compile_cached(plan, plan.default_config(), BUILDS[key], "sm_90a", need_function=False)


def _kernels_sass(key: str) -> dict[str, str]:
    """SASS per kernel of the build: ``{"gemm": ..., "reduce": ...}`` (no reduce when unsplit)."""
    from mla_var3.analysis.sass import disassemble

    sections = re.split(r"\n(?=\s*\.section\s+\.text\.)", disassemble(_compiled(key).compiled.cubin))
    out = {}
    for section in sections[1:]:
        name = re.match(r"\s*\.section\s+\.text\.(\S+)", section).group(1)
        out["reduce" if "reduce_kernel" in name else "gemm"] = section
    return out


def _count(sass: str, opcode: str) -> int:
    return len(re.findall(rf"\b{re.escape(opcode)}\b", sass))


@pytest.mark.parametrize("key", ["m16", "m64", "long_k"])
def test_split_build_is_wgmma_fed_by_tma_with_fp32_partials_and_no_spills(key: str) -> None:
    sass = _kernels_sass(key)
    gemm = sass["gemm"]
    assert _count(gemm, "HGMMA") >= 4, "WGMMA (4 per 64-wide K tile)"
    assert "UTMALDG" in gemm and "UTMASTG" in gemm, "TMA loads of A and B, TMA stores of the partials"
    assert "STSM" not in gemm, "fp32 partials take st.shared, not stmatrix (16-bit only)"
    assert "STS.64" in gemm, "each thread's accumulator pairs go to SMEM 64 bits at a time"
    assert "USETMAXREG" in gemm
    for kernel in sass.values():
        assert not re.search(r"\b(LDL|STL)\b", kernel), "local memory (register spills)"


@pytest.mark.parametrize("key", ["m16", "m64", "long_k"])
def test_reduce_loads_each_slice_with_one_128_bit_load_after_the_pdl_wait(key: str) -> None:
    reduce = _kernels_sass(key)["reduce"]
    splits = {**PICKS, "long_k": LONG_K_PICK}[key].splits
    assert _count(reduce, "LDG.E.128") == splits, "one 128-bit load per slice, all before the first add"
    assert _count(reduce, "STG.E.64") == 1, "four 16-bit elements of C stored at once"
    wait = reduce.index("ACQBULK")  # griddepcontrol.wait
    assert wait < reduce.index("LDG.E.128"), "no partial is read before the GEMM grid completed"
    assert _count(reduce, "FADD") >= 4 * (splits - 1)


@pytest.mark.parametrize("key", ["m16", "long_k"])
def test_gemm_triggers_the_reduce_early(key: str) -> None:
    gemm = _kernels_sass(key)["gemm"]
    assert "PREEXIT" in gemm, "griddepcontrol.launch_dependents: the reduce launches before the GEMM ends"


@pytest.mark.parametrize("key", ["m9616", "m1024"])
def test_unsplit_pick_is_the_v5_kernel(key: str) -> None:
    sass = _kernels_sass(key)
    assert set(sass) == {"gemm"}, "no reduce kernel when the rule does not split"
    assert "STSM" in sass["gemm"], "the v5 epilogue: 16-bit C through stmatrix"


def test_fp16_builds_too() -> None:
    assert _compiled("m64", "float16").compiled.cubin


# --- on an H200 ---------------------------------------------------------------------------------
# The group's shapes, M = 1 and a long K; RAGGED: M, N no tile multiple, K with a partial last K tile.
GPU_SHAPES = [
    {"m": 1, "n": 8192, "k": 8192},
    {"m": 16, "n": 8192, "k": 8192},
    {"m": 1024, "n": 1024, "k": 1024},
    {"m": 9616, "n": 784, "k": 7280},
    LONG_K,
]


RAGGED = [{"m": 1000, "n": 1048, "k": 520}, {"m": 130, "n": 776, "k": 1096}]


def _check_on_gpu(plan: HopperGemmSplitKPlan, config: dict, shape: dict[str, int]) -> None:
    """Fresh randn inputs, C poisoned with NaN, the fp32 reference; twice through one bound launch
    (the second on the workspace the first bind allocated)."""
    import torch

    from mla_var3.kernel.compile_cache import compile_cached

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")
    kernel = plan.plan(config)
    compiled = compile_cached(plan, config, shape, SM90A).compiled
    inputs = plan.prepare_inputs(shape)
    outputs = plan.allocate_outputs(inputs, shape)
    ref = plan.reference_fn(inputs)["c"]
    launch = kernel.bind(compiled, inputs, outputs)
    for attempt in range(2):
        outputs["c"].fill_(float("nan"))
        launch()
        torch.cuda.synchronize()
        out = outputs["c"].float()
        assert torch.isfinite(out).all(), f"{config} launch {attempt}: some of C was not written"
        assert float((out - ref).norm() / ref.norm()) <= plan.tolerance(), (config, attempt)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", [*RAGGED, *GPU_SHAPES], ids=str)
def test_rule_matches_reference_on_gpu(dtype: str, shape: dict[str, int]) -> None:
    """The rule's config (config 0): split where it splits, the v5 kernel where it does not."""
    plan = HopperGemmSplitKPlan(dtype)
    _check_on_gpu(plan, plan.default_config(), shape)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", RAGGED, ids=str)
@pytest.mark.parametrize("index", [1, 2, 3, 4])
def test_fixed_configs_match_reference_on_gpu(index: int, shape: dict[str, int]) -> None:
    """Every fixed config (64- and 128-row tiles, 2 and 4 slices, a 2 x 1 cluster) at ragged M, N, K."""
    plan = HopperGemmSplitKPlan("bfloat16")
    _check_on_gpu(plan, plan._autotune_configs()[index], shape)
