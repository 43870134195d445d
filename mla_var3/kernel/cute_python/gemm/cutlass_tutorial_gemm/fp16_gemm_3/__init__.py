"""``cutlass_fp16_gemm_3``: CUTLASS's tutorial ``fp16_gemm_3.py`` (the static persistent tile scheduler), imported from ``CUTLASS_DIR``."""

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_3.plan import CutlassFp16Gemm3Plan

PLAN = CutlassFp16Gemm3Plan
