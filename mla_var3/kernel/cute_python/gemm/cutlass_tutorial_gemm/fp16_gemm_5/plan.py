"""Plan for ``cutlass_fp16_gemm_5``: CUTLASS's Blackwell tutorial ``fp16_gemm_5.py`` (TMA prefetch into L2), compile-verified for sm_100a.

See :mod:`mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.common` for the adapter; the study
note ``docs/examples/blackwell-fp16-gemm-5.md`` reads the example.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.common import Tutorial, TutorialGemmPlan


class CutlassFp16Gemm5Plan(TutorialGemmPlan):
    name = "cutlass_fp16_gemm_5"
    description = "CUTLASS tutorial fp16_gemm_5.py: fp16_gemm_3_1 plus TMA prefetch of A/B tiles into L2 (256x64 tile, 2x2 cluster, 10 stages) (compile-only here)"
    tutorial = Tutorial(
        "fp16_gemm_5.py", tile_mn=(256, 256), cta_group=2, compact_marks=False, cluster_sizes=(4,)
    )


__all__ = ["CutlassFp16Gemm5Plan"]
