"""Plan for ``cutlass_fp16_gemm_3_1``: CUTLASS's Blackwell tutorial ``fp16_gemm_3_1.py`` (the CLC dynamic persistent tile scheduler), compile-verified for sm_100a.

See :mod:`mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.common` for the adapter; the study
note ``docs/examples/blackwell-fp16-gemm-3-1.md`` reads the example.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.common import Tutorial, TutorialGemmPlan


class CutlassFp16Gemm31Plan(TutorialGemmPlan):
    name = "cutlass_fp16_gemm_3_1"
    description = "CUTLASS tutorial fp16_gemm_3_1.py: fp16_gemm_3 with the CLC dynamic persistent tile scheduler (a scheduler warp) (compile-only here)"
    tutorial = Tutorial(
        "fp16_gemm_3_1.py", tile_mn=(256, 256), cta_group=2, compact_marks=False, cluster_sizes=(2,)
    )


__all__ = ["CutlassFp16Gemm31Plan"]
