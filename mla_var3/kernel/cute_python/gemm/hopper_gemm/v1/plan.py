"""Plan for ``hopper_gemm_v1``: the worklog's step 1, a multistage TMA pipeline on mbarriers."""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v0.plan import HopperGemmStepPlan
from mla_var3.kernel.plan import Config


class HopperGemmV1Plan(HopperGemmStepPlan):
    name = "hopper_gemm_v1"
    description = (
        "Hopper GEMM worklog step 1: multistage TMA pipeline (PipelineTmaAsync), loads in line with WGMMA"
    )
    # Stages: as many as SMEM holds next to nothing else (tests check these against max_stages).
    configs = (
        {"tile_mn": (128, 256), "stages": 4},
        {"tile_mn": (64, 256), "stages": 5},
        {"tile_mn": (128, 128), "stages": 7},
    )

    def make_kernel(self, config: Config) -> Any:
        from mla_var3.kernel.cute_python.gemm.hopper_gemm.v1.kernel import HopperGemmV1

        return HopperGemmV1(**config)


__all__ = ["HopperGemmV1Plan"]
