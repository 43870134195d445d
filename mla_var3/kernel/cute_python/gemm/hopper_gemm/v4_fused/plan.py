"""Plan for ``hopper_gemm_v4_fused``: step 4 with the epilogue C = GELU(A B^T + bias) fused.

A workload of its own: a bias of N values joins A and B, and the fp32 reference adds the same
bias and applies ``torch.nn.functional.gelu`` (its default erf form) before C is rounded to 16
bits. The kernel is ``hopper_gemm_v4``'s with ``activation="gelu"``; the kernel's ReLU option
is compile-checked by the tests only (a plan's reference cannot depend on its config).
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v4.plan import HopperGemmV4Plan
from mla_var3.kernel.plan import Shape, Tensors
from mla_var3.kernel.tensors import cute_dtype, element_size, fake_dynamic_tensor, randn, to_cute_dynamic

BIAS_DIVISIBILITY = (8,)  # N is a multiple of 8 already (16-byte rows of C)


class HopperGemmV4FusedPlan(HopperGemmV4Plan):
    name = "hopper_gemm_v4_fused"
    description = "Hopper GEMM worklog step 4 with a fused epilogue: C = GELU(A B^T + bias), GELU in erf form"
    configs = tuple({**config, "activation": "gelu"} for config in HopperGemmV4Plan.configs)

    def prepare_inputs(self, shape: Shape) -> Tensors:
        return {**super().prepare_inputs(shape), "bias": randn((shape["n"],), self.dtype)}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        import torch

        return {"c": torch.nn.functional.gelu(super().reference_fn(inputs)["c"] + inputs["bias"].float())}

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        flops, nbytes = super()._algorithmic_flops_bytes(shape)
        return flops, nbytes + shape["n"] * element_size(self.dtype)

    def compile_extras(self) -> tuple[Any, ...]:
        return (
            *super().compile_extras()[:-1],
            fake_dynamic_tensor(cute_dtype(self.dtype), BIAS_DIVISIBILITY),
        )

    def launch_extras(self, inputs: Tensors) -> tuple[Any, ...]:
        return (*super().launch_extras(inputs)[:-1], to_cute_dynamic(inputs["bias"], BIAS_DIVISIBILITY))


__all__ = ["HopperGemmV4FusedPlan"]
