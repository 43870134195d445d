"""Plan for ``mla_decode_torch``: the fp32 PyTorch reference of MLA decode, run as a (slow) baseline.

It computes exactly :func:`~mla_var3.kernel.workloads.mla.mla_decode_reference` -- one
sequence at a time, gathering the paged rows, fp32 products -- and writes O in the input
dtype and the LSE in fp32. It is the group member every kernel must agree with, not a
contender: expect it to be orders of magnitude slower than a fused kernel.
"""

from __future__ import annotations

from mla_var3.kernel.backends import TorchKernel
from mla_var3.kernel.plan import Config, Tensors
from mla_var3.kernel.workloads.mla import MlaDecodePlanBase, mla_decode_reference


def mla_decode_torch(inputs: Tensors, outputs: Tensors) -> None:
    """The reference into the preallocated outputs (O rounded to its dtype)."""
    o, lse = mla_decode_reference(inputs["q"], inputs["kv_cache"], inputs["block_table"], inputs["seqlens"])
    outputs["o"].copy_(o)
    outputs["lse"].copy_(lse)


class MlaDecodeTorchPlan(MlaDecodePlanBase):
    name = "mla_decode_torch"
    description = "PyTorch fp32 reference of absorbed-MLA decode over a paged KV cache (slow baseline)"
    archs = ("sm_80", "sm_90", "sm_100f")
    backend = "torch"
    static_shape_params = ()  # nothing is compiled: one cache entry serves every shape
    ncu_kernel_regex = "gemm|nvjet|xmma|softmax|reduce"

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def plan(self, config: Config) -> TorchKernel:
        return TorchKernel(fn=mla_decode_torch)


__all__ = ["MlaDecodeTorchPlan", "mla_decode_torch"]
