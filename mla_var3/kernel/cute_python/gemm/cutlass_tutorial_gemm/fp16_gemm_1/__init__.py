"""``cutlass_fp16_gemm_1``: CUTLASS's tutorial ``fp16_gemm_1.py`` (2-CTA MMA and TMA multicast), imported from ``CUTLASS_DIR``."""

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_1.plan import CutlassFp16Gemm1Plan

PLAN = CutlassFp16Gemm1Plan
