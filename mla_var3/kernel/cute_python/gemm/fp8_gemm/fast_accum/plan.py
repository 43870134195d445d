"""Plan for ``hopper_gemm_fp8_fast_accum``: our FP8 GEMM with WGMMA accumulating all of K in place.

The mainloop is ``hopper_gemm_ws``'s (one accumulator, one WGMMA batch in flight), so the
128 x 256 tile of the 16-bit kernel fits: the fast, less accurate side of the trade-off. Its
tolerance is the project's fp8 figure until the H200 measures the error.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.fp8_gemm.common import HopperFp8PlanBase
from mla_var3.kernel.cute_python.gemm.fp8_gemm.workload import FAST_ACCUM_REL_L2
from mla_var3.kernel.plan import Config


class HopperGemmFp8FastAccumPlan(HopperFp8PlanBase):
    name = "hopper_gemm_fp8_fast_accum"
    description = (
        "FP8 e4m3 GEMM, per-tensor scales in the epilogue, WGMMA accumulating all of K in place (fast accumulation); "
        "hopper_gemm_ws's TMA/mbarrier/WGMMA structure"
    )
    promote = False
    rel_l2_tolerance = FAST_ACCUM_REL_L2

    def _autotune_configs(self) -> list[Config]:
        return [
            {"tile_mn": (128, 256), "cluster_mn": (2, 1), "stages": 4},
            {"tile_mn": (128, 256), "cluster_mn": (1, 1), "stages": 4},
            {"tile_mn": (128, 128), "cluster_mn": (2, 1), "stages": 6},
        ]


__all__ = ["HopperGemmFp8FastAccumPlan"]
