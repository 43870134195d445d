"""Plan for ``sm100_gemm_persistent_clc``: persistent warp roles on a CLC dynamic tile schedule."""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.sm100_gemm.plan_base import Sm100GemmStepPlan


class Sm100GemmPersistentClcPlan(Sm100GemmStepPlan):
    name = "sm100_gemm_persistent_clc"
    description = (
        "Blackwell GEMM step 4: persistent warp roles over a CLC dynamic tile schedule (compile-only here)"
    )
    kernel_class = "mla_var3.kernel.cute_python.gemm.sm100_gemm.persistent_clc.kernel:Sm100GemmPersistentClc"
    configs = ({"mma_tiler_mn": (256, 256), "cluster_mn": (2, 1)},)
