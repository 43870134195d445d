"""``cutlass_fp16_gemm_5``: CUTLASS's tutorial ``fp16_gemm_5.py`` (TMA prefetch into L2), imported from ``CUTLASS_DIR``."""

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_5.plan import CutlassFp16Gemm5Plan

PLAN = CutlassFp16Gemm5Plan
