"""Plan for ``hopper_gemm_v3``: the worklog's step 3, a persistent grid with a banded tile order."""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v0.plan import HopperGemmStepPlan
from mla_var3.kernel.plan import Config


class HopperGemmV3Plan(HopperGemmStepPlan):
    name = "hopper_gemm_v3"
    description = "Hopper GEMM worklog step 3: persistent CTAs walking tiles in bands of raster_group_m rows"
    persistent = True
    # raster_group_m = 1 walks C row by row: the L2 effect of the band, one config apart.
    configs = (
        {"tile_mn": (128, 256), "stages": 4, "raster_group_m": 8},
        {"tile_mn": (128, 256), "stages": 4, "raster_group_m": 1},
    )

    def make_kernel(self, config: Config) -> Any:
        from mla_var3.kernel.cute_python.gemm.hopper_gemm.v3.kernel import HopperGemmV3

        return HopperGemmV3(**config)


__all__ = ["HopperGemmV3Plan"]
