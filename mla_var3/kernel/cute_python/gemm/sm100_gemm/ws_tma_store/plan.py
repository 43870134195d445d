"""Plan for ``sm100_gemm_ws_tma_store``: warp roles, TMA-store epilogue, one tile per CTA pair."""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.sm100_gemm.plan_base import Sm100GemmStepPlan


class Sm100GemmWsTmaStorePlan(Sm100GemmStepPlan):
    name = "sm100_gemm_ws_tma_store"
    description = (
        "Blackwell GEMM step 2: TMA, MMA and epilogue warps, TMEM -> SMEM -> TMA store (compile-only here)"
    )
    kernel_class = "mla_var3.kernel.cute_python.gemm.sm100_gemm.ws_tma_store.kernel:Sm100GemmWsTmaStore"
    configs = ({"mma_tiler_mn": (256, 256), "cluster_mn": (2, 1)},)
