"""The Hopper GEMM worklog (``hopper_gemm_v0`` ... ``hopper_gemm_v4``, ``hopper_gemm_v4_fused``;
v5 is ``hopper_gemm_ws``): each step compiled for sm_90a on the CPU, with the SASS that proves
what the step adds; the configs' stage counts; the fused plan's reference; and -- on an H200 --
every step against the fp32 reference at odd and large shapes."""

from __future__ import annotations

from functools import cache

import pytest

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.cute_python.gemm.common import GEMM_CHECK_SHAPES

SM90A = Arch.parse("sm_90a")
STEPS = ("hopper_gemm_v0", "hopper_gemm_v1", "hopper_gemm_v2", "hopper_gemm_v3", "hopper_gemm_v4")
ODD = {"m": 1000, "n": 1008, "k": 1016}


@cache
def _compiled(name: str, dtype: str = "bfloat16", config_index: int = 0):  # noqa: ANN202 - CompileResult
    from mla_var3.kernel.compile_cache import compile_cached
    from mla_var3.kernel.registry import get_plan

    plan = get_plan(name)(dtype)
    return compile_cached(plan, plan._autotune_configs()[config_index], ODD, "sm_90a", need_function=False)


def _ops(name: str, dtype: str = "bfloat16", config_index: int = 0) -> dict[str, int]:
    from mla_var3.analysis.sass import instruction_histogram, opcode_histogram

    return opcode_histogram(
        instruction_histogram(_compiled(name, dtype, config_index).compiled.cubin, "sm_90a")
    )


def _sass(name: str) -> str:
    from mla_var3.analysis.sass import disassemble

    return disassemble(_compiled(name).compiled.cubin)


@pytest.mark.parametrize("name", [*STEPS, "hopper_gemm_v4_fused"])
def test_every_step_is_wgmma_fed_by_tma_without_spills(name: str) -> None:
    ops = _ops(name)
    assert ops.get("HGMMA", 0) >= 4, "WGMMA (4 per 64-wide K tile) missing"
    assert ops.get("UTMALDG", 0) >= 2, "TMA loads of A and B missing"
    assert "LDL" not in ops and "STL" not in ops, "register spills"


@pytest.mark.parametrize("name", [*STEPS, "hopper_gemm_v4_fused"])
def test_every_step_issues_its_tma_loads_from_a_whole_warp(name: str) -> None:
    # A TMA copy issued under `if tidx == 0` puts WARPSYNC.ALL before the DSL's elect.sync: lane 0
    # waits there for 31 lanes that never come, and the kernel hangs (v0 did, on the H200).
    assert _ops(name).get("WARPSYNC", 0) == 0


def test_v0_one_barrier_one_warpgroup_direct_stores() -> None:
    ops = _ops("hopper_gemm_v0")
    # init, arrive.expect_tx and the try-wait loop of its one mbarrier: a handful of SYNCS.
    assert 1 <= ops.get("SYNCS", 0) <= 6
    assert "USETMAXREG" not in ops and "UTMASTG" not in ops
    assert ops.get("STG", 0) > 0, "the direct epilogue stores from registers"


def test_v1_pipeline_adds_full_and_empty_barriers() -> None:
    v0, v1 = _ops("hopper_gemm_v0"), _ops("hopper_gemm_v1")
    assert v1.get("SYNCS", 0) > 2 * v0.get("SYNCS", 0), "a ring of full/empty mbarriers"
    assert v1.get("UTMALDG", 0) > v0.get("UTMALDG", 0), "prologue loads and in-loop refills"
    assert "USETMAXREG" not in v1


@pytest.mark.parametrize(
    "name", ["hopper_gemm_v2", "hopper_gemm_v3", "hopper_gemm_v4", "hopper_gemm_v4_fused"]
)
def test_warp_specialized_steps_reallocate_registers(name: str) -> None:
    from mla_var3.analysis.resources import resource_usage

    assert _ops(name).get("USETMAXREG", 0) == 2, "one setmaxnreg per warp role"
    (kernel,) = resource_usage(_compiled(name).compiled.cubin)
    # 384 threads at one CTA per SM: 168 registers at launch, the pool setmaxnreg moves
    # (128 x (40 + 2 x 232) = 384 x 168).
    assert kernel.registers <= 168 and kernel.local_bytes == 0


def test_v3_walks_work_units_from_its_grid_z_index() -> None:
    # The persistent loop starts at blockIdx.z (the v5 kernel's _work_units); v2 never reads it.
    assert "SR_CTAID.Z" in _sass("hopper_gemm_v3")
    assert "SR_CTAID.Z" not in _sass("hopper_gemm_v2")


def test_v3_uses_the_v5_tile_order() -> None:
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.v3.kernel import HopperGemmV3
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import HopperGemmWS

    assert HopperGemmV3._cluster_tile is HopperGemmWS._cluster_tile
    assert HopperGemmV3._work_units is HopperGemmWS._work_units


def test_v4_stores_through_smem_and_tma() -> None:
    ops = _ops("hopper_gemm_v4")
    assert ops.get("UTMASTG", 0) >= 1 and ops.get("STSM", 0) >= 1, "stmatrix + TMA store epilogue"
    assert "STG" not in ops, "no direct global stores left"


def test_v4_fused_loads_bias_and_evaluates_gelu() -> None:
    plain, fused = _ops("hopper_gemm_v4"), _ops("hopper_gemm_v4_fused")
    assert fused.get("LDG", 0) > plain.get("LDG", 0), "bias loads"
    assert fused.get("MUFU", 0) > plain.get("MUFU", 0) and fused.get("FFMA", 0) > 0, "erf's math"
    assert fused.get("UTMASTG", 0) == plain.get("UTMASTG", 0)


def test_v4_relu_option_compiles_to_a_max() -> None:
    import cuda.bindings.driver as cuda
    import cutlass.cute as cute

    from mla_var3.analysis.sass import instruction_histogram, opcode_histogram
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.v4.kernel import HopperGemmV4
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.v4_fused.plan import BIAS_DIVISIBILITY
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import compile_operands
    from mla_var3.kernel.tensors import cute_dtype, fake_dynamic_tensor

    gemm = HopperGemmV4(activation="relu")
    bias = fake_dynamic_tensor(cute_dtype("float16"), BIAS_DIVISIBILITY)
    fn = cute.compile(
        gemm,
        *compile_operands("float16"),
        132,
        bias,
        cuda.CUstream(0),
        options="--gpu-arch sm_90a --keep-cubin",
    )
    ops = opcode_histogram(instruction_histogram(fn.artifacts.CUBIN, "sm_90a"))
    assert ops.get("FMNMX", 0) >= 1 and "LDL" not in ops


def test_fp16_builds_too() -> None:
    for name in ("hopper_gemm_v0", "hopper_gemm_v4"):
        ops = _ops(name, "float16")
        assert ops.get("HGMMA", 0) >= 4 and "LDL" not in ops


def test_bias_is_required_exactly_with_an_activation() -> None:
    import cuda.bindings.driver as cuda
    import cutlass.cute as cute

    from mla_var3.kernel.cute_python.gemm.hopper_gemm.v4.kernel import HopperGemmV4
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import compile_operands

    with pytest.raises(ValueError, match="bias exactly when"):
        cute.compile(
            HopperGemmV4(activation="gelu"), *compile_operands("bfloat16"), 132, None, cuda.CUstream(0)
        )
    with pytest.raises(ValueError, match="activation must be"):
        HopperGemmV4(activation="tanh")


@pytest.mark.parametrize("name", [*STEPS, "hopper_gemm_v4_fused"])
def test_config_stage_counts_are_what_smem_holds(name: str) -> None:
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import (
        SMEM_CAPACITY_SM90,
        max_stages,
    )
    from mla_var3.kernel.registry import get_plan

    plan = get_plan(name)()
    for config in plan._autotune_configs():
        gemm = plan.make_kernel(config)
        epi = config.get("epi_stages", 0)
        if "stages" in config:
            assert config["stages"] == max_stages(gemm.tile_mnk, epi), config
        assert gemm.dynamic_smem_bytes() <= SMEM_CAPACITY_SM90


def test_every_step_is_registered_for_sm90a_only() -> None:
    from mla_var3.kernel.registry import get_plan

    for name in (*STEPS, "hopper_gemm_v4_fused"):
        plan = get_plan(name)
        assert plan.archs == ("sm_90a",) and plan.layer == "gemm" and plan.dtypes == ("bfloat16", "float16")


def test_fused_reference_adds_bias_then_gelu() -> None:
    import math

    import torch

    from mla_var3.kernel.cute_python.gemm.hopper_gemm.v4_fused.plan import HopperGemmV4FusedPlan

    a, b, bias = torch.randn(3, 8), torch.randn(2, 8), torch.randn(2)
    ref = HopperGemmV4FusedPlan("bfloat16").reference_fn({"a": a, "b": b, "bias": bias})["c"]
    for i in range(3):
        for j in range(2):
            x = float(a[i] @ b[j]) + float(bias[j])
            assert ref[i, j].item() == pytest.approx(
                0.5 * x * (1 + math.erf(x / math.sqrt(2))), rel=1e-5, abs=1e-6
            )


def test_fused_roofline_counts_the_bias() -> None:
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.v4.plan import HopperGemmV4Plan
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.v4_fused.plan import HopperGemmV4FusedPlan

    _, plain = HopperGemmV4Plan()._algorithmic_flops_bytes(ODD)
    _, fused = HopperGemmV4FusedPlan()._algorithmic_flops_bytes(ODD)
    assert fused - plain == ODD["n"] * 2


GPU_SHAPES = [
    *GEMM_CHECK_SHAPES,
    ODD,
    {"m": 1, "n": 8, "k": 8},
    {"m": 16, "n": 8192, "k": 8192},
    {"m": 512, "n": 512, "k": 512},
    {"m": 8192, "n": 8192, "k": 8192},
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", GPU_SHAPES, ids=str)
@pytest.mark.parametrize("name", [*STEPS, "hopper_gemm_v4_fused", "hopper_gemm_auto"])
def test_matches_reference_on_gpu(name: str, dtype: str, shape: dict[str, int]) -> None:
    """Every config of every step; the rule's config of ``hopper_gemm_auto`` (its others are
    ``hopper_gemm_ws`` configs). Binaries come from the compile cache: M, N and K are dynamic, so
    a step compiles once per config and dtype (the rule once per shape)."""
    import torch

    from mla_var3.kernel.compile_cache import compile_cached
    from mla_var3.kernel.registry import get_plan

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")
    plan = get_plan(name)(dtype)
    configs = plan._autotune_configs()
    for config in configs[:1] if name == "hopper_gemm_auto" else configs:
        kernel = plan.plan(config)
        compiled = compile_cached(plan, config, shape, SM90A).compiled  # one binary per config, any shape
        inputs = plan.prepare_inputs(shape)
        outputs = plan.allocate_outputs(inputs, shape)
        outputs["c"].fill_(float("nan"))
        kernel.launch(compiled, inputs, outputs)
        torch.cuda.synchronize()
        out, ref = outputs["c"].float(), plan.reference_fn(inputs)["c"]
        assert torch.isfinite(out).all(), f"{config}: some of C was not written"
        assert float((out - ref).norm() / ref.norm()) <= plan.tolerance(), config
