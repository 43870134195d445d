"""CUTLASS's Blackwell dense GEMM series, imported: each compiles for sm_100a and its SASS shows what
the example adds -- 2-CTA tcgen05 MMA and TMEM in all, TMA prefetch into L2 in the prefetch one, a
Cluster Launch Control query in the dynamic one -- and the SMEM the launch asks for is the
examples' own stage arithmetic. Compile-only: no SM100 GPU here."""

from __future__ import annotations

from collections.abc import Callable

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import pytest
from cutlass.cute.nvgpu import cpasync
from cutlass.cute.runtime import make_fake_compact_tensor

from mla_var3.analysis.sass import disassemble
from mla_var3.kernel.arch import Arch, check_supported
from mla_var3.kernel.compile_cache import compile_cached
from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.common import (
    CONFIGS,
    BlackwellDenseGemmPlan,
)
from mla_var3.kernel.errors import ArchError, UnsupportedShapeError
from mla_var3.kernel.registry import all_plans

SM100A = Arch.parse("sm_100a")
SHAPE = {"m": 8192, "n": 8192, "k": 8192}
SERIES = (
    "cutlass_sm100_dense_gemm",
    "cutlass_sm100_dense_gemm_software_pipeline",
    "cutlass_sm100_dense_gemm_persistent",
    "cutlass_sm100_dense_gemm_persistent_prefetch",
    "cutlass_sm100_dense_gemm_persistent_dynamic",
)
# SASS only one example of the series has: TMA tile prefetch into L2 (cp.async.bulk.prefetch.tensor)
# and the CLC query (clusterlaunchcontrol.try_cancel, multicast to the cluster).
ONLY_IN = {
    "UTMAPF.L2": "cutlass_sm100_dense_gemm_persistent_prefetch",
    "UGETNEXTWORKID": "cutlass_sm100_dense_gemm_persistent_dynamic",
}


# Loading an example puts CUTLASS's examples root on sys.path and registers the module: undone per test.
pytestmark = pytest.mark.usefixtures("restored_imports")


def _count(histogram: dict[str, int], prefix: str) -> int:
    return sum(n for mnemonic, n in histogram.items() if mnemonic.startswith(prefix))


def test_the_series_is_registered_for_sm100a_only() -> None:
    plans = all_plans()
    for name in SERIES:
        plan = plans[name]
        assert issubclass(plan, BlackwellDenseGemmPlan) and plan.archs == ("sm_100a",)
        assert plan.upstream_example().endswith(plan.example_file)
    with pytest.raises(
        ArchError, match=r"does not support sm_90a; it supports sm_100a \(pass --arch sm_100a\)"
    ):
        check_supported(SERIES[0], plans[SERIES[0]].archs, "sm_90a")


@pytest.mark.cutlass
@pytest.mark.parametrize("name", SERIES)
def test_compiles_with_2cta_tcgen05_tmem_and_its_own_addition(name: str) -> None:
    plan = all_plans()[name]("float16")
    result = compile_cached(plan, plan.default_config(), SHAPE, SM100A, need_function=False)
    analysis = result.analysis
    assert analysis is not None
    hist = analysis.sass.histogram
    assert hist.get("UTCHMMA.2CTA", 0) > 0  # tcgen05.mma, cta_group::2: the CTA pair's MMA
    assert _count(hist, "UTMALDG.3D.2CTA") > 0  # TMA loads that complete on the leader CTA's barrier
    assert hist.get("UTCBAR.2CTA.MULTICAST", 0) > 0  # tcgen05.commit to both CTAs' barriers
    assert hist.get("UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN", 0) > 0  # tcgen05.alloc for the pair
    assert _count(hist, "LDTM") > 0 and _count(hist, "UTMASTG") > 0  # TMEM -> registers, TMA store
    for prefix, owner in ONLY_IN.items():
        assert (_count(hist, prefix) > 0) == (name == owner), (prefix, name)
    assert "wgmma" not in analysis.sass.classes and "local_memory" not in analysis.sass.classes
    (kernel,) = analysis.resources
    assert kernel.local_bytes == 0 and kernel.stack_bytes == 0 and kernel.registers <= 255


@pytest.mark.cutlass
@pytest.mark.usefixtures("fresh_compile_cache")
@pytest.mark.parametrize(
    ("name", "c_stages"), [("cutlass_sm100_dense_gemm", 2), ("cutlass_sm100_dense_gemm_persistent", 4)]
)
def test_launch_smem_is_the_stage_arithmetic(name: str, c_stages: int) -> None:
    """fp16, 2-CTA 256x128 MMA, K tile 64: per CTA a stage holds A 128x64 and half of B, 64x64;
    the epilogue ring holds 128x32 subtiles; the mbarriers and TMEM address take the first 256 B."""
    plan = all_plans()[name]("float16")
    kernel = plan.plan(plan.default_config())
    compiled = kernel.compile({"m": 1000, "n": 1048, "k": 520}, SM100A)
    gemm = kernel.host_for(SHAPE)
    assert (gemm.num_ab_stage, gemm.num_c_stage) == (8, c_stages)
    expected = 256 + gemm.num_ab_stage * (128 * 64 + 64 * 64) * 2 + gemm.num_c_stage * 128 * 32 * 2
    assert compiled.dynamic_smem_bytes == expected <= 227 * 1024


@pytest.mark.cutlass
def test_configs_switch_multicast_and_the_cta_pair() -> None:
    """Config 1 (2x2 cluster) multicasts A to the neighbouring pair; config 2 (one CTA) has no pair."""
    plan = all_plans()["cutlass_sm100_dense_gemm_persistent"]("bfloat16")
    multicast = compile_cached(plan, CONFIGS[1], SHAPE, SM100A, need_function=False).analysis
    one_cta = compile_cached(plan, CONFIGS[2], SHAPE, SM100A, need_function=False).analysis
    assert multicast is not None and one_cta is not None
    assert _count(multicast.sass.histogram, "UTMALDG.3D.MULTICAST.2CTA") > 0
    assert (
        one_cta.sass.histogram.get("UTCHMMA", 0) > 0 and _count(one_cta.sass.histogram, "UTCHMMA.2CTA") == 0
    )
    assert _count(one_cta.sass.histogram, "UTCBAR.2CTA") == 0


@pytest.mark.cutlass
def test_the_examples_own_checks_refuse_a_bad_config() -> None:
    plan = all_plans()["cutlass_sm100_dense_gemm_persistent_dynamic"]("float16")
    odd = {
        "mma_tiler_mn": (256, 128),
        "cluster_shape_mn": (1, 1),
        "use_2cta_instrs": True,
    }  # a pair needs 2 CTAs in M
    with pytest.raises(UnsupportedShapeError, match=r"dense_gemm_persistent_dynamic\.py cannot implement"):
        plan.plan(odd).compile_args(SHAPE)


def test_cli_refuses_sm90a_in_one_line(cli_error: Callable[[list[str]], str]) -> None:
    assert cli_error([SERIES[4], "--compile-only", "--arch", "sm_90a"]) == (
        f"error: kernel '{SERIES[4]}' does not support sm_90a; it supports sm_100a (pass --arch sm_100a)"
    )


@cute.kernel
def _prefetch_tiles(atom: cute.CopyAtom, tma_tensor: cute.Tensor, tile: cutlass.Constexpr) -> None:
    """Each CTA prefetches one (64, 64) tile of A into L2, as the prefetch example's TMA warp does."""
    smem = cute.make_tensor(
        cute.make_ptr(cutlass.Float16, 0, cute.AddressSpace.smem, assumed_align=128), cute.make_layout(tile)
    )
    gmem = cute.local_tile(tma_tensor, tile, (None, None))
    _, tiles = cpasync.tma_partition(
        atom, 0, cute.make_layout(1), cute.group_modes(smem, 0, 2), cute.group_modes(gmem, 0, 2)
    )
    bidx, _, _ = cute.arch.block_idx()
    cute.prefetch(atom, tiles[(None, bidx, 0)])


@cute.jit
def _prefetch_host(a: cute.Tensor, stream: cuda.CUstream) -> None:
    tile = (64, 64)
    atom, tma_tensor = cpasync.make_tiled_tma_atom(
        cpasync.CopyBulkTensorTileG2SOp(), a, cute.make_layout(tile), tile
    )
    _prefetch_tiles(atom, tma_tensor, tile).launch(grid=(4, 1, 1), block=(32, 1, 1), stream=stream)


@pytest.mark.usefixtures("fresh_compile_cache")
def test_tma_l2_prefetch_also_compiles_for_sm90a() -> None:
    """The prefetch example's instruction is no SM100 feature: ``cute.prefetch`` on a TMA load atom
    compiles to UTMAPF.L2 for sm_90a, so our H200 can measure the pattern (tma-l2-prefetch page)."""
    a = make_fake_compact_tensor(cutlass.Float16, (256, 256), stride_order=(1, 0), assumed_align=16)
    compiled = cute.compile(
        _prefetch_host, a, cuda.CUstream(0), options="--gpu-arch sm_90a --keep-cubin --dump-dir ."
    )
    mnemonics = {
        line.split()[1] for line in disassemble(compiled.artifacts.CUBIN).splitlines() if "UTMA" in line
    }
    assert mnemonics == {"UTMAPF.L2.2D"}
