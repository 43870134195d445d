"""``cutlass_fp16_gemm_2``: CUTLASS's tutorial ``fp16_gemm_2.py`` (warp specialization and a TMA-store epilogue), imported from ``CUTLASS_DIR``."""

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_2.plan import CutlassFp16Gemm2Plan

PLAN = CutlassFp16Gemm2Plan
