"""Plan for ``cutlass_fp16_gemm_2``: CUTLASS's Blackwell tutorial ``fp16_gemm_2.py`` (warp specialization and a TMA-store epilogue), compile-verified for sm_100a.

See :mod:`mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.common` for the adapter; the study
note ``docs/examples/blackwell-fp16-gemm-2.md`` reads the example.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.common import Tutorial, TutorialGemmPlan


class CutlassFp16Gemm2Plan(TutorialGemmPlan):
    name = "cutlass_fp16_gemm_2"
    description = "CUTLASS tutorial fp16_gemm_2.py: fp16_gemm_1 plus warp specialization (TMA, MMA and 4 epilogue warps) and a TMA-store epilogue (compile-only here)"
    tutorial = Tutorial("fp16_gemm_2.py", tile_mn=(256, 256), cta_group=2, compact_marks=False)


__all__ = ["CutlassFp16Gemm2Plan"]
