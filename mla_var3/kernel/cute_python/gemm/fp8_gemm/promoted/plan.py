"""Plan for ``hopper_gemm_fp8``: our FP8 GEMM with each K tile's WGMMA sum promoted into an fp32 accumulator.

The promotion keeps a second accumulator in registers: a 64 x 256 slice per consumer warpgroup
would need 2 x 128 fp32 registers per thread, past the 232 that ``setmaxnreg`` gives the
consumers (the 128 x 256 tile spills; ``tests/test_fp8_gemm.py`` checks it). So the configs use
128 x 128 tiles (2 x 64 registers), six stages of (128 + 128) x 128 bytes.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.fp8_gemm.common import HopperFp8PlanBase
from mla_var3.kernel.cute_python.gemm.fp8_gemm.workload import PROMOTED_REL_L2
from mla_var3.kernel.plan import Config


class HopperGemmFp8Plan(HopperFp8PlanBase):
    name = "hopper_gemm_fp8"
    description = (
        "FP8 e4m3 GEMM, per-tensor scales in the epilogue, WGMMA sums promoted to fp32 every K tile (2xAcc); "
        "hopper_gemm_ws's TMA/mbarrier/WGMMA structure"
    )
    promote = True
    rel_l2_tolerance = PROMOTED_REL_L2

    def _autotune_configs(self) -> list[Config]:
        return [
            {"tile_mn": (128, 128), "cluster_mn": (2, 1), "stages": 6},
            {"tile_mn": (128, 128), "cluster_mn": (1, 2), "stages": 6},
            {"tile_mn": (128, 128), "cluster_mn": (1, 1), "stages": 6},
        ]


__all__ = ["HopperGemmFp8Plan"]
