"""``cutlass_fp16_gemm_3_1``: CUTLASS's tutorial ``fp16_gemm_3_1.py`` (the CLC dynamic persistent tile scheduler), imported from ``CUTLASS_DIR``."""

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_3_1.plan import CutlassFp16Gemm31Plan

PLAN = CutlassFp16Gemm31Plan
