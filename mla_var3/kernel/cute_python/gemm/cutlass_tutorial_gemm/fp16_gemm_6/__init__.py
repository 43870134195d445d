"""``cutlass_fp16_gemm_6``: CUTLASS's tutorial ``fp16_gemm_6.py`` (programmatic dependent launch), imported from ``CUTLASS_DIR``."""

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_6.plan import CutlassFp16Gemm6Plan

PLAN = CutlassFp16Gemm6Plan
