"""FP8 GEMMs: ``hopper_gemm_fp8`` (promoted) and ``hopper_gemm_fp8_fast_accum`` compile to e4m3 WGMMA
(SASS ``QGMMA``) with TMA and no spills; the promotion's FADDs and the scale's FMULs are in the
binary; the 128 x 256 tile spills when promoted (why the promoted plan uses 128 x 128); the workload
(quantization, reference, shape rules) and ``cublas_gemm_fp8`` on the CPU; on an H200, every plan
against the fp32 reference and the precision the promotion buys."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.cute_python.gemm.fp8_gemm.fast_accum.plan import HopperGemmFp8FastAccumPlan
from mla_var3.kernel.cute_python.gemm.fp8_gemm.promoted.plan import HopperGemmFp8Plan
from mla_var3.kernel.cute_python.gemm.fp8_gemm.workload import E4M3_MAX, Fp8GemmPlanBase, quantize_e4m3
from mla_var3.kernel.errors import ArchError, UnsupportedShapeError
from mla_var3.kernel.plan import KernelPlan
from mla_var3.kernel.torch_ref.gemm.cublas.fp8.plan import CublasGemmFp8Plan

SM90A = Arch.parse("sm_90a")
RAGGED = {"m": 1000, "n": 1040, "k": 528}
PLANS: tuple[type[Fp8GemmPlanBase], ...] = (HopperGemmFp8Plan, HopperGemmFp8FastAccumPlan, CublasGemmFp8Plan)


@cache
def _cubin(plan_cls: type[KernelPlan], config_index: int = 0) -> bytes:
    from mla_var3.kernel.compile_cache import compile_cached

    plan = plan_cls()
    result = compile_cached(plan, plan._autotune_configs()[config_index], RAGGED, SM90A, need_function=False)
    assert result.compiled.cubin is not None
    return result.compiled.cubin


def _histogram(cubin: bytes) -> dict[str, int]:
    from mla_var3.analysis.sass import instruction_histogram

    return instruction_histogram(cubin, "sm_90a")


def _opcodes(cubin: bytes) -> dict[str, int]:
    from mla_var3.analysis.sass import opcode_histogram

    return opcode_histogram(_histogram(cubin))


@pytest.mark.parametrize(
    ("plan_cls", "wgmma"),
    [
        (HopperGemmFp8Plan, "QGMMA.64x128x32.F32.E4M3.E4M3"),
        (HopperGemmFp8FastAccumPlan, "QGMMA.64x256x32.F32.E4M3.E4M3"),
    ],
)
def test_default_config_is_e4m3_wgmma_with_tma_and_no_spills(plan_cls: type[KernelPlan], wgmma: str) -> None:
    cubin = _cubin(plan_cls)
    hist, ops = _histogram(cubin), _opcodes(cubin)
    # 64 x N x 32 per atom, 4 atoms per 128-deep K tile; issued in two places (first K tile, loop).
    assert hist.get(wgmma, 0) == 8, f"e4m3 WGMMA {wgmma} missing: {sorted(k for k in hist if 'GMMA' in k)}"
    assert "HGMMA" not in ops, "16-bit WGMMA in an FP8 kernel"
    assert ops.get("UTMALDG", 0) >= 2 and ops.get("UTMASTG", 0) >= 1, (
        "TMA loads of A, B or the store of C missing"
    )
    assert ops.get("SYNCS", 0) >= 1 and ops.get("USETMAXREG", 0) == 2, (
        "mbarrier pipeline or setmaxnreg missing"
    )
    assert "LDL" not in ops and "STL" not in ops, "register spills"


def test_promotion_adds_each_k_tile_in_fp32() -> None:
    # Each consumer thread holds 64 x 128 / 128 = 64 fp32 accumulator values per tile; each K tile
    # adds its WGMMA fragment into them with FADDs (two issue sites: the first K tile and the loop).
    promoted, fast = _histogram(_cubin(HopperGemmFp8Plan)), _histogram(_cubin(HopperGemmFp8FastAccumPlan))
    assert promoted.get("FADD", 0) >= 2 * 64
    assert promoted.get("FADD", 0) - fast.get("FADD", 0) >= 2 * 64


def _wgmma_lines(cubin: bytes) -> list[str]:
    from mla_var3.analysis.sass import disassemble

    return [line for line in disassemble(cubin).splitlines() if "QGMMA" in line]


def test_zeroed_fragment_compiles_to_wgmma_without_accumulate() -> None:
    """The promoted K tile zero-fills its fragment and calls kernel.py's K tile; ptxas folds the
    fill into the first WGMMA of each K tile, which then reads RZ with scale-d off (``!UPT``):
    the form CUTLASS asks for with ACCUMULATE=False. No per-K-tile zeroing instructions remain."""
    lines = _wgmma_lines(_cubin(HopperGemmFp8Plan))
    first_of_k_tile = [line for line in lines if "RZ, !UPT" in line]
    assert len(lines) == 8 and len(first_of_k_tile) == 2  # one per issue site, 4 atoms each


@pytest.mark.parametrize(
    ("plan_cls", "acc_values"), [(HopperGemmFp8Plan, 64), (HopperGemmFp8FastAccumPlan, 128)]
)
def test_epilogue_scales_every_accumulator_value(plan_cls: type[KernelPlan], acc_values: int) -> None:
    assert _histogram(_cubin(plan_cls)).get("FMUL", 0) >= acc_values  # s_a * s_b, in registers
    assert _opcodes(_cubin(plan_cls)).get("LDG", 0) == 1  # [s_a, s_b]: one 64-bit load per thread


def test_promoted_128x256_tile_spills(tmp_path: Path) -> None:
    """Why the promoted plan uses 128 x 128 tiles: a second 64 x 256 fp32 fragment per consumer
    thread (128 + 128 registers) does not fit the 232 setmaxnreg gives the consumers."""
    import cuda.bindings.driver as cuda
    import cutlass.cute as cute

    from mla_var3.kernel.cute_python.gemm.fp8_gemm.common import compile_operands
    from mla_var3.kernel.cute_python.gemm.fp8_gemm.kernel import HopperFp8GemmWS

    gemm = HopperFp8GemmWS(promote=True, tile_mn=(128, 256), cluster_mn=(2, 1))
    compiled = cute.compile(
        gemm,
        *compile_operands("float8_e4m3fn"),
        66,
        cuda.CUstream(0),
        options=f"--gpu-arch sm_90a --keep-cubin --dump-dir {tmp_path}",
    )
    ops = _opcodes(compiled.artifacts.CUBIN)
    assert ops.get("STL", 0) > 0 and ops.get("LDL", 0) > 0


@pytest.mark.parametrize("plan_cls", [HopperGemmFp8Plan, HopperGemmFp8FastAccumPlan])
def test_smem_is_the_16bit_kernels_budget(plan_cls: type[KernelPlan]) -> None:
    from mla_var3.analysis.resources import resource_usage
    from mla_var3.kernel.cute_python.gemm.fp8_gemm.kernel import HopperFp8GemmWS
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import gemm_kwargs

    plan = plan_cls()
    gemm = HopperFp8GemmWS(promote=plan.promote, **gemm_kwargs(plan.default_config()))
    tile_m, tile_n, tile_k = gemm.tile_mnk
    assert tile_k == 128
    # stages x (A + B tile, 1 byte each) + C ring (64 x 32 bf16 per slot, 4 slots per consumer
    # warpgroup) + 1 KiB of mbarriers, each buffer 1 KiB aligned.
    expected = gemm.stages * (tile_m + tile_n) * tile_k + 2 * 4 * 64 * 32 * 2 + 1024
    assert gemm.dynamic_smem_bytes() == expected
    (kernel,) = resource_usage(_cubin(plan_cls))
    assert expected + kernel.static_smem_bytes <= 227 * 1024


def test_plans_refuse_other_archs() -> None:
    from mla_var3.kernel.arch import check_supported

    for plan_cls in (HopperGemmFp8Plan, HopperGemmFp8FastAccumPlan):
        with pytest.raises(ArchError, match="does not support sm_100a"):
            check_supported(plan_cls.name, plan_cls.archs, "sm_100a")


def test_kernel_rejects_16bit_operands() -> None:
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute

    from mla_var3.kernel.cute_python.gemm.fp8_gemm.common import compile_operands
    from mla_var3.kernel.cute_python.gemm.fp8_gemm.kernel import HopperFp8GemmWS
    from mla_var3.kernel.tensors import fake_dynamic_tensor

    _, b, c, scales = compile_operands("float8_e4m3fn")
    a16 = fake_dynamic_tensor(cutlass.BFloat16, (1, 16))
    with pytest.raises(Exception, match="must be Float8E4M3FN"):
        cute.compile(HopperFp8GemmWS(), a16, b, c, scales, 66, cuda.CUstream(0), options="--gpu-arch sm_90a")


# --- the workload -------------------------------------------------------------------------------


@pytest.mark.parametrize(("dim", "value"), [("k", 520), ("n", 1048)])
def test_rows_must_hold_16_e4m3_values(dim: str, value: int) -> None:
    for plan_cls in PLANS:
        with pytest.raises(UnsupportedShapeError, match=rf"--{dim} \(={value}.*multiple of 16.*pad {dim} to"):
            plan_cls().check_shape({**RAGGED, dim: value})


def test_every_plan_runs_the_same_workload() -> None:
    plans = [p() for p in PLANS]
    assert {p.dtype for p in plans} == {"float8_e4m3fn"}
    assert all(
        p.check_shapes == plans[0].check_shapes and p.shape_params == plans[0].shape_params for p in plans
    )
    flops, nbytes = plans[0]._algorithmic_flops_bytes(RAGGED)
    assert flops == 2 * 1000 * 1040 * 528 and nbytes == (1000 + 1040) * 528 + 1000 * 1040 * 2
    assert all(p._algorithmic_flops_bytes(RAGGED) == (flops, nbytes) for p in plans)
    assert (
        HopperGemmFp8Plan().tolerance()
        == CublasGemmFp8Plan().tolerance()
        < HopperGemmFp8FastAccumPlan().tolerance()
    )


def test_quantization_uses_the_whole_e4m3_range() -> None:
    import torch

    x = torch.randn(64, 256)
    q, scale = quantize_e4m3(x)
    assert q.dtype == torch.float8_e4m3fn and scale.dtype == torch.float32
    assert float(q.float().abs().max()) == E4M3_MAX
    # e4m3 keeps 3 mantissa bits: each value within 2^-4 relative (normal range)
    dequantized = q.float() * scale
    big = x.abs() > scale * 2**-6
    assert float(((dequantized - x).abs() / x.abs())[big].max()) <= 2**-4


def _cpu_inputs(m: int, n: int, k: int) -> dict:
    import torch

    a, scale_a = quantize_e4m3(torch.randn(m, k))
    b, scale_b = quantize_e4m3(torch.randn(n, k))
    return {"a": a, "b": b, "scales": torch.stack([scale_a, scale_b])}


def test_reference_is_the_product_of_the_dequantized_inputs() -> None:
    import torch

    inputs = _cpu_inputs(5, 16, 32)
    ref = HopperGemmFp8Plan().reference_fn(inputs)["c"]
    s = inputs["scales"].double()
    naive = (inputs["a"].double() * s[0]) @ (inputs["b"].double() * s[1]).T
    assert ref.dtype == torch.float32
    torch.testing.assert_close(ref.double(), naive, rtol=1e-5, atol=1e-5)


def test_cublas_plan_computes_the_workload_on_the_cpu() -> None:
    # torch._scaled_mm has a CPU path: the plan's call (b.T, a scale tensor each, out=) is exercised here.
    from mla_var3.kernel.torch_ref.gemm.cublas.fp8.plan import with_separate_scales

    plan = CublasGemmFp8Plan()
    shape = {"m": 33, "n": 48, "k": 64}
    inputs = with_separate_scales(_cpu_inputs(33, 48, 64))
    outputs = {"c": plan.allocate_outputs(inputs, shape)["c"].fill_(float("nan"))}
    kernel = plan.plan(plan.default_config())
    kernel.launch(kernel.compile(shape, Arch.parse("sm_90")), inputs, outputs)
    ref = plan.reference_fn(inputs)["c"]
    assert outputs["c"].shape == (33, 48) and str(outputs["c"].dtype) == "torch.bfloat16"
    assert float((outputs["c"].float() - ref).norm() / ref.norm()) <= plan.tolerance()


def test_registered() -> None:
    from mla_var3.kernel.registry import get_plan

    for plan_cls in PLANS:
        assert get_plan(plan_cls.name) is plan_cls and plan_cls.layer == "gemm"


# --- on an H200 ---------------------------------------------------------------------------------


def _run_on_gpu(plan: KernelPlan, shape: dict[str, int]) -> float:
    """rel-L2 of C against the fp32 reference after one launch on NaN-poisoned output."""
    import torch

    kernel = plan.plan(plan.default_config())
    compiled = kernel.compile(
        shape, Arch.parse(plan.archs[0]) if plan.backend == "cute" else Arch.parse("sm_90")
    )
    inputs = plan.prepare_inputs(shape)
    outputs = plan.allocate_outputs(inputs, shape)
    outputs["c"].fill_(float("nan"))
    kernel.launch(compiled, inputs, outputs)
    torch.cuda.synchronize()
    out, ref = outputs["c"].float(), plan.reference_fn(inputs)["c"]
    assert torch.isfinite(out).all(), "some of C was not written"
    return float((out - ref).norm() / ref.norm())


@pytest.mark.gpu
@pytest.mark.parametrize("plan_cls", PLANS, ids=lambda p: p.name)
@pytest.mark.parametrize("shape", [*HopperGemmFp8Plan.check_shapes, {"m": 1, "n": 16, "k": 16}], ids=str)
def test_matches_reference_on_gpu(plan_cls: type[Fp8GemmPlanBase], shape: dict[str, int]) -> None:
    import torch

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")
    plan = plan_cls()
    assert _run_on_gpu(plan, shape) <= plan.tolerance()


@pytest.mark.gpu
def test_promotion_buys_precision_at_long_k() -> None:
    """The fast-accumulation error grows with K; the promoted kernel stays at the bf16 output's
    rounding. Prints both (the numbers for the page come from the group record's checks)."""
    import torch

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")
    shape = {"m": 2048, "n": 2048, "k": 16384}
    torch.manual_seed(0)
    promoted = _run_on_gpu(HopperGemmFp8Plan(), shape)
    torch.manual_seed(0)
    fast = _run_on_gpu(HopperGemmFp8FastAccumPlan(), shape)
    print(f"rel-L2 at K={shape['k']}: promoted {promoted:.3e}, fast accumulation {fast:.3e}")
    assert promoted <= HopperGemmFp8Plan().tolerance()
    assert promoted < fast
