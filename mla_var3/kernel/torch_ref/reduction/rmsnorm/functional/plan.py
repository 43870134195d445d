"""Plan for ``torch_rmsnorm``: ``torch.nn.functional.rms_norm`` on our RMSNorm workload.

Same inputs, reference and tolerance as ``rmsnorm_v0`` .. ``v2`` (bf16 x, fp32 w, bf16 y). With a
weight whose dtype differs from x's, torch cannot use its fused kernel (it warns so: "Cannot
dispatch to fused implementation") and composes the norm from several elementwise and reduction
kernels; the result is then copied into the preallocated y. That is what a model gets from torch
for this dtype mix, and what the group measures.
"""

from __future__ import annotations

import warnings

from mla_var3.kernel.backends import TorchKernel
from mla_var3.kernel.cute_python.reduction.rmsnorm.common import EPS, RmsNormPlanBase
from mla_var3.kernel.plan import Config, Shape, Tensors


def torch_rms_norm(inputs: Tensors, outputs: Tensors) -> None:
    import torch

    x = inputs["x"]
    outputs["y"].copy_(torch.nn.functional.rms_norm(x, (x.shape[-1],), inputs["w"], EPS))


class TorchRmsNormPlan(RmsNormPlanBase):
    name = "torch_rmsnorm"
    description = "torch baseline: torch.nn.functional.rms_norm (bf16 x, fp32 w: torch's unfused path)"
    archs = ("sm_80", "sm_90", "sm_100f")
    backend = "torch"
    max_n = 2**16
    ncu_kernel_regex = "elementwise|reduce|norm"

    def validate_shape(self, shape: Shape) -> None:
        """Any row length."""

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def plan(self, config: Config) -> TorchKernel:
        warnings.filterwarnings("ignore", message=".*Cannot dispatch to fused implementation.*")
        return TorchKernel(fn=torch_rms_norm)


__all__ = ["TorchRmsNormPlan", "torch_rms_norm"]
