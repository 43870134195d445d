"""Plan for ``cutlass_fp16_gemm_0``: CUTLASS's Blackwell tutorial ``fp16_gemm_0.py`` (the first tutorial: the smallest complete tcgen05 GEMM), compile-verified for sm_100a.

See :mod:`mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.common` for the adapter; the study
note ``docs/examples/blackwell-fp16-gemm-0.md`` reads the example.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.common import Tutorial, TutorialGemmPlan


class CutlassFp16Gemm0Plan(TutorialGemmPlan):
    name = "cutlass_fp16_gemm_0"
    description = "CUTLASS tutorial fp16_gemm_0.py: one 128x256 tile per CTA, TMA loads, tcgen05 MMA into TMEM, prefetch_stages pipelining, TMEM -> registers -> global epilogue (compile-only here)"
    tutorial = Tutorial("fp16_gemm_0.py", tile_mn=(128, 256), cta_group=1, compact_marks=True)


__all__ = ["CutlassFp16Gemm0Plan"]
