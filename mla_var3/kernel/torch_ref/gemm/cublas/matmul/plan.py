"""Plan for ``cublas_gemm``: the cuBLAS baseline for the GEMM workload of ``gemm/common.py``.

Same shapes, inputs, reference and tolerance as our GEMM kernels; the kernel is
``torch.matmul(a, b.T, out=c)``, which cuBLAS(Lt) serves with its own heuristic choice.
"""

from __future__ import annotations

from mla_var3.kernel.backends import TorchKernel
from mla_var3.kernel.cute_python.gemm.common import GemmPlanBase
from mla_var3.kernel.plan import Config, Tensors


def cublas_matmul(inputs: Tensors, outputs: Tensors) -> None:
    """C = A @ B^T into the preallocated C (no extra allocation inside the timed region)."""
    import torch

    torch.matmul(inputs["a"], inputs["b"].T, out=outputs["c"])


class CublasGemmPlan(GemmPlanBase):
    name = "cublas_gemm"
    description = "cuBLAS baseline: torch.matmul(a, b.T) for the GEMM workload"
    # cuBLAS runs on every GPU torch supports. Under the arch rule a plain sm_XY covers only
    # its own major, so the baseline names one target per major it must run on.
    archs = ("sm_80", "sm_90", "sm_100f")
    backend = "torch"
    # What ncu measures: cuBLAS's GEMM kernel (named nvjet_*, sm90_xmma_gemm_*, ... by version),
    # not the randn and cast kernels that prepare the inputs.
    ncu_kernel_regex = "gemm|nvjet|xmma"

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def plan(self, config: Config) -> TorchKernel:
        return TorchKernel(fn=cublas_matmul)


__all__ = ["CublasGemmPlan", "cublas_matmul"]
