"""Plan for ``cutlass_fp16_gemm_4``: CUTLASS's Blackwell tutorial ``fp16_gemm_4.py`` (preferred and fallback (dynamic) cluster shapes), compile-verified for sm_100a.

See :mod:`mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.common` for the adapter; the study
note ``docs/examples/blackwell-fp16-gemm-4.md`` reads the example.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.common import Tutorial, TutorialGemmPlan


class CutlassFp16Gemm4Plan(TutorialGemmPlan):
    name = "cutlass_fp16_gemm_4"
    description = "CUTLASS tutorial fp16_gemm_4.py: fp16_gemm_3_1 launched with a preferred 2x4 and a fallback 2x1 cluster shape (compile-only here)"
    tutorial = Tutorial(
        "fp16_gemm_4.py", tile_mn=(256, 256), cta_group=2, compact_marks=False, cluster_sizes=(8, 2)
    )


__all__ = ["CutlassFp16Gemm4Plan"]
