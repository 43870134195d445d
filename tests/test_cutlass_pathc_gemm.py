"""Path C and the GEMM-side examples of issue 11, imported: each compiles and its SASS shows its point.

Block-scaled MMA kinds and scale copies into TMEM, mixed-input conversions with A read from TMEM,
EFC epilogue math and TMA traffic, blockwise scaling between two accumulators, the cluster
reduction of RMSNorm (and how it disappears when the SM version is not pinned), PDL's two
instructions, and the Ampere GEMM's mma.sync ring. Compile-only on this machine; the torch-side
helpers of the plans (quantization, scale-factor layout) are checked on the CPU, the scale layout
against CUTLASS's own converter.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from functools import cache

import pytest
import torch

from mla_var3.analysis.sass import disassemble, histogram_of
from mla_var3.kernel.arch import Arch, check_supported, runnable_arch
from mla_var3.kernel.compile_cache import compile_cached
from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.operands import (
    nibble_storage,
    pack_nibbles,
    unpack_nibbles,
)
from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.quant import (
    FORMATS,
    dequantize,
    quantize,
    sf_from_atoms,
    sf_to_atoms,
)
from mla_var3.kernel.cute_python.gemm.cutlass_blockwise_gemm.common import dequantize_blocks, quantize_blocks
from mla_var3.kernel.cute_python.gemm.cutlass_mixed_input_gemm.common import divisibility
from mla_var3.kernel.errors import ArchError, UnsupportedShapeError
from mla_var3.kernel.registry import all_plans

SM100_PLANS = (
    "cutlass_sm100_blockscaled_gemm_persistent",
    "cutlass_sm100_blockscaled_gemm_persistent_prefetch",
    "cutlass_sm100_blockscaled_gemm_persistent_amax",
    "cutlass_sm100_mixed_input_gemm",
    "cutlass_sm100_grouped_mixed_input_gemm",
    "cutlass_sm100_efc_custom_epilogue_gemm",
    "cutlass_sm100_efc_activation_gemm",
    "cutlass_sm100_blockwise_gemm",
    "cutlass_sm100_blockwise_contiguous_grouped_gemm",
    "cutlass_rmsnorm_sm100",
)


@pytest.fixture(scope="module", autouse=True)
def _restored_imports(module_restored_imports: None) -> Iterator[None]:
    """Examples loaded by this module leave sys.path and sys.modules after it (conftest), and so do their binaries."""
    yield
    _compiled.cache_clear()


@cache
def _compiled(
    name: str, dtype: str, config_index: int, arch: str, shape: tuple[tuple[str, int], ...] = ()
) -> bytes:
    """The cubin of one plan at a config (by index) and shape (default shape with overrides)."""
    plan = all_plans()[name](dtype)
    full = plan.default_shape() | dict(shape)
    config = plan._autotune_configs()[config_index]
    return compile_cached(plan, config, full, arch, need_function=False).compiled.cubin  # shared with the registry test


def _hist(*args: object) -> dict[str, int]:
    return histogram_of(disassemble(_compiled(*args)))  # type: ignore[arg-type]


def _count(hist: dict[str, int], prefix: str) -> int:
    return sum(n for mnemonic, n in hist.items() if mnemonic.startswith(prefix))


# --- registration and arch refusals (no CUTLASS needed) ------------------------------------------


def test_plans_are_registered_with_their_arches() -> None:
    plans = all_plans()
    for name in SM100_PLANS:
        assert plans[name].archs == ("sm_100a",), name
        with pytest.raises(
            ArchError, match=r"does not support sm_90a; it supports sm_100a \(pass --arch sm_100a\)"
        ):
            check_supported(name, plans[name].archs, "sm_90a")
    assert plans["cutlass_rmsnorm"].archs == ("sm_90a",)
    assert plans["cutlass_pdl_elementwise_add"].archs == ("sm_90a",)
    # sm_80 SASS does not load on the H200: the Ampere plan declares sm_90 for it.
    assert runnable_arch(plans["cutlass_ampere_tensorop_gemm"].archs, (9, 0)) == Arch.parse("sm_90")
    assert plans["cutlass_rmsnorm"].sm_version == 90 and plans["cutlass_rmsnorm_sm100"].sm_version == 100


def test_shape_rules_name_the_dimension() -> None:
    plans = all_plans()
    with pytest.raises(UnsupportedShapeError, match=r"--k \(=1000\) to be a multiple of 128"):
        plans["cutlass_sm100_blockscaled_gemm_persistent"]("float16").check_shape(
            {"m": 256, "n": 256, "k": 1000}
        )
    with pytest.raises(UnsupportedShapeError, match=r"--n \(=4104\) to be a multiple of 8 x --g"):
        plans["cutlass_sm100_grouped_mixed_input_gemm"]("bfloat16").check_shape(
            {"m": 256, "n": 4104, "k": 512, "g": 4}
        )
    with pytest.raises(UnsupportedShapeError, match=r"--m \(=200, rows per group\)"):
        plans["cutlass_sm100_blockwise_contiguous_grouped_gemm"]("float8_e4m3fn").check_shape(
            {"m": 200, "n": 256, "k": 512, "g": 2}
        )


# --- the plans' torch-side helpers (CPU) ---------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_block_scaled_quantization_round_trips(name: str) -> None:
    fmt = FORMATS[name]
    x = torch.randn(300, 256, generator=torch.Generator().manual_seed(0))
    q, scales = quantize(x, fmt)
    stored = scales.to(fmt.torch_scale).float()
    assert torch.equal(stored, scales)  # e8m0 scales are powers of two, e4m3 ones already rounded
    error = (dequantize(q, scales, fmt) - x).norm() / x.norm()
    assert error < (0.15 if fmt.bits == 4 else 0.05)
    assert torch.equal(sf_from_atoms(sf_to_atoms(scales), 300, 256 // fmt.vec), scales)
    if fmt.bits == 4:
        assert torch.equal(unpack_nibbles(pack_nibbles(q)), q)
        assert nibble_storage(pack_nibbles(q)).shape == q.shape


def test_blockwise_quantization_uses_one_scale_per_block() -> None:
    x = torch.randn(300, 512, generator=torch.Generator().manual_seed(1))
    for rows in (1, 128):
        q, scale = quantize_blocks(x, rows)
        assert q.dtype == torch.float8_e4m3fn and scale.shape == (-(-300 // rows), 4)
        assert (dequantize_blocks(q, scale, rows) - x).norm() / x.norm() < 0.05


def test_divisibility_is_the_largest_power_of_two_up_to_128() -> None:
    assert [divisibility(k) for k in (6144, 520, 8, 7)] == [128, 8, 8, 1]


@pytest.mark.cutlass
def test_scale_atoms_match_cutlass_converter() -> None:
    """Our torch permutation equals the example's own ``cvt_sf_MKL_to_M32x4xrm_K4xrk_L`` (a host JIT loop)."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_ptr

    from mla_var3.kernel.upstream import load_example

    example = load_example(all_plans()["cutlass_sm100_blockscaled_gemm_persistent"].upstream_example())
    mn, sf_k = 200, 12
    scales = torch.randn(mn, sf_k, generator=torch.Generator().manual_seed(2))
    rm, rk = -(-mn // 128), -(-sf_k // 4)
    out = torch.zeros(rm * rk * 512)
    example.cvt_sf_MKL_to_M32x4xrm_K4xrk_L(
        make_ptr(cutlass.Float32, scales.data_ptr(), cute.AddressSpace.gmem, assumed_align=32),
        make_ptr(cutlass.Float32, out.data_ptr(), cute.AddressSpace.gmem, assumed_align=32),
        mn, sf_k, 1, (1, rm, rk, 32, 4, 4),
    )  # fmt: skip
    valid = torch.zeros(rm * 128, rk * 4)
    valid[:mn, :sf_k] = 1
    mask = sf_to_atoms(valid).reshape(-1).bool()
    assert torch.equal(sf_to_atoms(scales).reshape(-1)[mask], out[mask]) and int(mask.sum()) == mn * sf_k


# --- SASS of each point (compile for the plan's arch) ---------------------------------------------


@pytest.mark.cutlass
def test_block_scaled_mma_kinds_and_scale_copies() -> None:
    fp4 = _hist("cutlass_sm100_blockscaled_gemm_persistent", "float16", 0, "sm_100a")
    mxf8 = _hist("cutlass_sm100_blockscaled_gemm_persistent", "float16", 1, "sm_100a")
    assert _count(fp4, "UTCOMMA.2CTA") > 0 and _count(fp4, "UTCCP.T.S.2CTA") > 0  # kind::mxf4nvf4, tcgen05.cp
    assert _count(mxf8, "UTCQMMA") > 0 and _count(mxf8, "UTCCP.T.S") > 0  # kind::mxf8f6f4
    assert _count(fp4, "UTCHMMA") == _count(mxf8, "UTCHMMA") == 0  # never the 16-bit kind
    assert _count(fp4, "UTMAPF") == 0
    prefetch = _hist("cutlass_sm100_blockscaled_gemm_persistent_prefetch", "float16", 0, "sm_100a")
    assert _count(prefetch, "UTMAPF.L2") > 0  # A, B, SFA, SFB prefetched into L2
    amax = _hist("cutlass_sm100_blockscaled_gemm_persistent_amax", "float16", 0, "sm_100a")
    assert amax.get("CREDUX.MAX.F32.NAN", 0) > 0  # redux.sync fmax
    assert _count(amax, "REDG.E.MAX.S32") > 0  # the float's bits compared as signed integers


@pytest.mark.cutlass
def test_mixed_input_widens_into_tmem() -> None:
    int4 = _hist("cutlass_sm100_mixed_input_gemm", "bfloat16", 0, "sm_100a")
    int8 = _hist("cutlass_sm100_mixed_input_gemm", "bfloat16", 1, "sm_100a")
    assert _count(int4, "F2FP.SATFINITE.BF16.S2_6.UNPACK_B") > 0 and _count(int4, "HMUL2.BF16_V2") > 0
    assert _count(int8, "PRMT") > 0 and _count(int8, "HFMA2.BF16_V2") > 0
    assert _count(int8, "F2FP.SATFINITE") == 0
    for hist in (int4, int8):
        assert _count(hist, "STTM") > 0 and _count(hist, "USETMAXREG") > 0  # widened A into TMEM; roles
    mma = [
        line
        for line in disassemble(
            _compiled("cutlass_sm100_mixed_input_gemm", "bfloat16", 0, "sm_100a")
        ).splitlines()
        if "UTCHMMA" in line
    ]
    assert mma and all("UTCHMMA.2CTA tmem[" in line for line in mma)  # A from TMEM, B from SMEM


@pytest.mark.cutlass
def test_grouped_mixed_input_stores_partial_group_tiles_per_element() -> None:
    hist = _hist("cutlass_sm100_grouped_mixed_input_gemm", "bfloat16", 0, "sm_100a")
    assert _count(hist, "STG.E.U16") > 0 and _count(hist, "UTMASTG") > 0


@pytest.mark.cutlass
def test_efc_epilogues_fuse_their_math_and_tma_traffic() -> None:
    custom = _hist("cutlass_sm100_efc_custom_epilogue_gemm", "float16", 0, "sm_100a")
    relu = _hist("cutlass_sm100_efc_activation_gemm", "float16", 0, "sm_100a")
    gelu = _hist("cutlass_sm100_efc_activation_gemm", "float16", 1, "sm_100a")
    assert _count(custom, "FMNMX") > 0 and _count(relu, "FMNMX") > 0  # relu
    assert _count(custom, "UTMALDG") > _count(relu, "UTMALDG")  # reads C and X, against C alone
    assert _count(custom, "UTMASTG") == _count(relu, "UTMASTG") > 0  # two written tensors each
    assert _count(gelu, "MUFU.EX2") > 0 and _count(relu, "MUFU") == 0  # gelu's tanh


@pytest.mark.cutlass
def test_blockwise_scales_between_accumulators() -> None:
    dense = _hist("cutlass_sm100_blockwise_gemm", "float8_e4m3fn", 0, "sm_100a")
    grouped = _hist("cutlass_sm100_blockwise_contiguous_grouped_gemm", "float8_e4m3fn", 0, "sm_100a")
    for hist in (dense, grouped):
        assert _count(hist, "UTCQMMA") > 0 and _count(hist, "UTCOMMA") == 0  # fp8 MMA, no block-scaled kind
        assert _count(hist, "FFMA2") > 0  # final += partial * (sfa * sfb)
        assert _count(hist, "LDTM") > 0 and _count(hist, "STTM") > 0  # partial out of, final into TMEM
        assert _count(hist, "LDGSTS") > 0  # scales by cp.async
    assert _count(dense, "LDG.E") == 0 < _count(grouped, "LDG.E")  # the group index of each tile


@pytest.mark.cutlass
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_rmsnorm_cluster_reduction_needs_the_pinned_sm_version(arch: str) -> None:
    name = "cutlass_rmsnorm" if arch == "sm_90a" else "cutlass_rmsnorm_sm100"
    long_rows = (("m", 512), ("n", 65536))
    cluster = _hist(name, "bfloat16", 0, arch, long_rows)
    assert _count(cluster, "STAS") > 0 and _count(cluster, "UCGABAR_WAIT") > 0  # st.async, cluster barriers
    assert _count(cluster, "SYNCS.ARRIVE.TRANS64") > 0  # the expect-tx arrive
    short_rows = _hist(name, "bfloat16", 0, arch, (("m", 512), ("n", 4096)))
    assert _count(short_rows, "STAS") == _count(short_rows, "UCGABAR") == 0
    # What the example does on a machine without a GPU: SM 80, the single-CTA kernel at every N.
    plan = all_plans()[name]("bfloat16")
    unpinned = plan.plan({"sm_version": 80}).compile({"m": 512, "n": 65536}, Arch.parse(arch))
    hist = histogram_of(disassemble(unpinned.cubin))
    assert _count(hist, "STAS") == _count(hist, "UCGABAR") == 0


@pytest.mark.cutlass
def test_pdl_instructions_and_identical_cubins() -> None:
    if importlib.util.find_spec("tvm_ffi") is None:
        pytest.skip("needs apache-tvm-ffi (the tutorial compiles with --enable-tvm-ffi)")
    on = _compiled("cutlass_pdl_elementwise_add", "float32", 0, "sm_90a")
    off = _compiled("cutlass_pdl_elementwise_add", "float32", 1, "sm_90a")
    hist = histogram_of(disassemble(on))
    assert hist.get("PREEXIT") == 1 and hist.get("ACQBULK") == 1  # launch_dependents, wait
    assert on == off  # PDL off differs only in a launch attribute of the host code


@pytest.mark.cutlass
def test_ampere_gemm_is_an_mma_sync_cp_async_ring() -> None:
    hist = _hist("cutlass_ampere_tensorop_gemm", "float16", 0, "sm_80")
    assert hist.get("HMMA.16816.F32", 0) > 0 and _count(hist, "LDSM") > 0
    assert _count(hist, "LDGSTS") > 0 and _count(hist, "LDGDEPBAR") > 0 and _count(hist, "DEPBAR") > 0
    assert _count(hist, "UTMALDG") == _count(hist, "SYNCS") == 0  # no TMA, no mbarriers
