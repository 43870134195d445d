"""Plan for ``sm100_gemm_tmem_double_buffer``: the CLC persistent GEMM with two TMEM accumulator stages."""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.sm100_gemm.plan_base import Sm100GemmStepPlan


class Sm100GemmTmemDoubleBufferPlan(Sm100GemmStepPlan):
    name = "sm100_gemm_tmem_double_buffer"
    description = "Blackwell GEMM step 5: double-buffered TMEM accumulator (compile-only here)"
    kernel_class = (
        "mla_var3.kernel.cute_python.gemm.sm100_gemm.tmem_double_buffer.kernel:Sm100GemmTmemDoubleBuffer"
    )
    configs = ({"mma_tiler_mn": (256, 256), "cluster_mn": (2, 1)},)
