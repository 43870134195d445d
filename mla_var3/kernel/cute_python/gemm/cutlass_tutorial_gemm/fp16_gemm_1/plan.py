"""Plan for ``cutlass_fp16_gemm_1``: CUTLASS's Blackwell tutorial ``fp16_gemm_1.py`` (2-CTA MMA and TMA multicast), compile-verified for sm_100a.

See :mod:`mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.common` for the adapter; the study
note ``docs/examples/blackwell-fp16-gemm-1.md`` reads the example.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.common import Tutorial, TutorialGemmPlan


class CutlassFp16Gemm1Plan(TutorialGemmPlan):
    name = "cutlass_fp16_gemm_1"
    description = "CUTLASS tutorial fp16_gemm_1.py: fp16_gemm_0 plus the 2-CTA tcgen05 MMA (256x256) and TMA multicast in a 2x1 cluster, 7 stages (compile-only here)"
    tutorial = Tutorial("fp16_gemm_1.py", tile_mn=(256, 256), cta_group=2, compact_marks=True)


__all__ = ["CutlassFp16Gemm1Plan"]
