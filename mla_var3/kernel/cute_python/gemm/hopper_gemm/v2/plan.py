"""Plan for ``hopper_gemm_v2``: the worklog's step 2, warp specialization with register reallocation."""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v0.plan import HopperGemmStepPlan
from mla_var3.kernel.plan import Config


class HopperGemmV2Plan(HopperGemmStepPlan):
    name = "hopper_gemm_v2"
    description = (
        "Hopper GEMM worklog step 2: a TMA producer warpgroup and WGMMA consumer warpgroups (setmaxnreg)"
    )
    configs = ({"tile_mn": (128, 256), "stages": 4}, {"tile_mn": (128, 128), "stages": 7})

    def make_kernel(self, config: Config) -> Any:
        from mla_var3.kernel.cute_python.gemm.hopper_gemm.v2.kernel import HopperGemmV2

        return HopperGemmV2(**config)


__all__ = ["HopperGemmV2Plan"]
