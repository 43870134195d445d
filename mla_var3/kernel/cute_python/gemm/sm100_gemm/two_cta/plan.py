"""Plan for ``sm100_gemm_two_cta``: a CTA pair per 256-row MMA, TMA multicast across the cluster."""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.sm100_gemm.plan_base import Sm100GemmStepPlan


class Sm100GemmTwoCtaPlan(Sm100GemmStepPlan):
    name = "sm100_gemm_two_cta"
    description = (
        "Blackwell GEMM step 1: 2-CTA tcgen05 MMA (cta_group::2) with TMA multicast (compile-only here)"
    )
    kernel_class = "mla_var3.kernel.cute_python.gemm.sm100_gemm.two_cta.kernel:Sm100GemmTwoCta"
    # 2 x 2: A multicast to the CTA column beside; 2 x 1: the pair alone (no multicast).
    configs = (
        {"mma_tiler_mn": (256, 256), "cluster_mn": (2, 2)},
        {"mma_tiler_mn": (256, 256), "cluster_mn": (2, 1)},
    )
