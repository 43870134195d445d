"""Plan for ``sm100_gemm_persistent_static``: persistent warp roles on a static tile schedule."""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.sm100_gemm.plan_base import Sm100GemmStepPlan


class Sm100GemmPersistentStaticPlan(Sm100GemmStepPlan):
    name = "sm100_gemm_persistent_static"
    description = (
        "Blackwell GEMM step 3: persistent warp roles over a static tile schedule (compile-only here)"
    )
    kernel_class = (
        "mla_var3.kernel.cute_python.gemm.sm100_gemm.persistent_static.kernel:Sm100GemmPersistentStatic"
    )
    # sm_count: a B200's, which sizes the one-wave grid (148 / 2 = 74 clusters).
    configs = ({"mma_tiler_mn": (256, 256), "cluster_mn": (2, 1), "sm_count": 148},)
