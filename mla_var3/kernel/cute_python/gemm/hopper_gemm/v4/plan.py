"""Plan for ``hopper_gemm_v4``: the worklog's step 4, the TMA-store epilogue."""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v0.plan import HopperGemmStepPlan
from mla_var3.kernel.plan import Config, Tensors


class HopperGemmV4Plan(HopperGemmStepPlan):
    name = "hopper_gemm_v4"
    description = "Hopper GEMM worklog step 4: epilogue through stmatrix into an SMEM ring and TMA stores"
    persistent = True
    configs = (
        {"tile_mn": (128, 256), "stages": 4, "epi_stages": 4},
        {"tile_mn": (128, 128), "stages": 6, "epi_stages": 4},
    )

    def make_kernel(self, config: Config) -> Any:
        from mla_var3.kernel.cute_python.gemm.hopper_gemm.v4.kernel import HopperGemmV4

        return HopperGemmV4(**config)

    def compile_extras(self) -> tuple[Any, ...]:
        return (*super().compile_extras(), None)  # no bias: nothing fused

    def launch_extras(self, inputs: Tensors) -> tuple[Any, ...]:
        return (*super().launch_extras(inputs), None)


__all__ = ["HopperGemmV4Plan"]
