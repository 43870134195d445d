"""Plan for ``torch_row_reduce``: ``torch.sum`` (fp32 accumulation, into the fp32 output) and
``torch.amax`` (in x's dtype, exact, then copied into the fp32 output) over the last dim: two
reads of x where ``row_reduce`` reads it once."""

from __future__ import annotations

from mla_var3.kernel.backends import TorchKernel
from mla_var3.kernel.cute_python.reduction.row_reduce.common import RowReducePlanBase
from mla_var3.kernel.plan import Config, Tensors


def torch_sum_amax(inputs: Tensors, outputs: Tensors) -> None:
    import torch

    x = inputs["x"]
    torch.sum(x, dim=-1, dtype=torch.float32, out=outputs["sum"])
    outputs["max"].copy_(torch.amax(x, dim=-1))


class TorchRowReducePlan(RowReducePlanBase):
    name = "torch_row_reduce"
    description = "torch baseline: torch.sum(dtype=float32) and torch.amax over the last dim"
    archs = ("sm_80", "sm_90", "sm_100f")
    backend = "torch"
    ncu_kernel_regex = "reduce"

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def plan(self, config: Config) -> TorchKernel:
        return TorchKernel(fn=torch_sum_amax)


__all__ = ["TorchRowReducePlan", "torch_sum_amax"]
