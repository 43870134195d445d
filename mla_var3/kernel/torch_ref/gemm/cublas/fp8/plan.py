"""Plan for ``cublas_gemm_fp8``: cuBLASLt's FP8 GEMM through ``torch._scaled_mm``, on the FP8 workload.

Same shapes, inputs, reference and roofline as our FP8 kernels (``gemm/fp8_gemm/workload.py``):
``torch._scaled_mm(a, b.T, scale_a=s_a, scale_b=s_b, out_dtype=bfloat16, out=c)``. ``b.T`` is
the column-major view cuBLASLt's FP8 kernels want, with no copy. ``use_fast_accum`` stays off:
cuBLASLt then promotes partial sums to fp32, as ``hopper_gemm_fp8`` does, and is checked against
the same tolerance. (Its fast-accumulation mode would need its own plan, for its own tolerance.)
"""

from __future__ import annotations

from functools import partial

from mla_var3.kernel.backends import TorchKernel
from mla_var3.kernel.cute_python.gemm.fp8_gemm.workload import Fp8GemmPlanBase
from mla_var3.kernel.plan import Config, Shape, Tensors


def scaled_mm(inputs: Tensors, outputs: Tensors, fast_accum: bool) -> None:
    """C = s_a s_b (A @ B^T) into the preallocated bf16 C (no allocation inside the timed region)."""
    import torch

    torch._scaled_mm(
        inputs["a"],
        inputs["b"].T,
        scale_a=inputs["scale_a"],
        scale_b=inputs["scale_b"],
        out_dtype=torch.bfloat16,
        use_fast_accum=fast_accum,
        out=outputs["c"],
    )


class CublasGemmFp8Plan(Fp8GemmPlanBase):
    name = "cublas_gemm_fp8"
    description = "cuBLASLt FP8 baseline: torch._scaled_mm(a, b.T) with per-tensor scales, bf16 out"
    # cuBLASLt's FP8 GEMMs need sm_89 or newer; one target per major it must run on (see cublas_gemm).
    archs = ("sm_89", "sm_90", "sm_100f")
    backend = "torch"
    ncu_kernel_regex = "gemm|nvjet|xmma"

    def _autotune_configs(self) -> list[Config]:
        return [{"fast_accum": False}]

    def plan(self, config: Config) -> TorchKernel:
        return TorchKernel(fn=partial(scaled_mm, fast_accum=config["fast_accum"]))

    def prepare_inputs(self, shape: Shape) -> Tensors:
        """The workload's inputs plus each scale in a tensor of its own. On the H200 (torch 2.11,
        CUDA 13) cuBLASLt refused the views ``scales[0]``/``scales[1]`` (CUBLAS_STATUS_NOT_SUPPORTED
        at every shape); the second one starts 4 bytes into its storage."""
        return with_separate_scales(super().prepare_inputs(shape))


def with_separate_scales(inputs: Tensors) -> Tensors:
    """``inputs`` plus ``scale_a`` and ``scale_b``: copies of ``scales[0]`` and ``scales[1]``."""
    return {**inputs, "scale_a": inputs["scales"][0].clone(), "scale_b": inputs["scales"][1].clone()}


__all__ = ["CublasGemmFp8Plan", "scaled_mm", "with_separate_scales"]
