"""``cublas_gemm``: the cuBLAS baseline runs the same workload as our GEMM kernels."""

from __future__ import annotations

import pytest

from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import HopperGemmWSPlan
from mla_var3.kernel.torch_ref.gemm.cublas.matmul.plan import CublasGemmPlan


def test_same_workload_as_the_hopper_kernel() -> None:
    ours, base = HopperGemmWSPlan(), CublasGemmPlan()
    assert base.layer == ours.layer == "gemm"
    assert base.shape_params == ours.shape_params and base.check_shapes == ours.check_shapes
    assert base.dtypes == ours.dtypes and base.tolerance() == ours.tolerance()
    shape = {"m": 1000, "n": 1048, "k": 520}
    assert base._algorithmic_flops_bytes(shape) == ours._algorithmic_flops_bytes(shape)


@pytest.mark.parametrize("cc", [(8, 0), (8, 9), (9, 0), (10, 0), (10, 3)])
def test_runs_on_every_gpu_we_compare_on(cc: tuple[int, int]) -> None:
    from mla_var3.kernel.arch import runnable_arch

    assert CublasGemmPlan.backend == "torch"
    assert runnable_arch(CublasGemmPlan.archs, cc) is not None
    assert CublasGemmPlan().default_config() == {}


def test_kernel_computes_a_times_b_transposed() -> None:
    import torch

    from mla_var3.kernel.arch import Arch

    plan = CublasGemmPlan("bfloat16")
    kernel = plan.plan(plan.default_config())
    inputs = {"a": torch.randn(33, 24).to(torch.bfloat16), "b": torch.randn(17, 24).to(torch.bfloat16)}
    outputs = plan.allocate_outputs(inputs, {"m": 33, "n": 17, "k": 24})
    outputs["c"].fill_(float("nan"))
    kernel.launch(kernel.compile({"m": 33, "n": 17, "k": 24}, Arch.parse("sm_80")), inputs, outputs)
    ref = plan.reference_fn(inputs)["c"]
    assert outputs["c"].dtype == torch.bfloat16 and outputs["c"].shape == (33, 17)
    assert float((outputs["c"].float() - ref).norm() / ref.norm()) <= plan.tolerance()


def test_accepts_unaligned_shapes() -> None:
    CublasGemmPlan().check_shape({"m": 3, "n": 5, "k": 7})  # cuBLAS needs no 16-byte rows


def test_registered() -> None:
    from mla_var3.kernel.registry import get_plan

    assert get_plan("cublas_gemm") is CublasGemmPlan


@pytest.mark.parametrize("dim", ["m", "n", "k"])
def test_empty_dimension_is_rejected(dim: str) -> None:
    from mla_var3.kernel.errors import UnsupportedShapeError

    with pytest.raises(UnsupportedShapeError, match=f"--{dim} >= 1"):
        CublasGemmPlan().check_shape({"m": 4, "n": 4, "k": 4, dim: 0})
