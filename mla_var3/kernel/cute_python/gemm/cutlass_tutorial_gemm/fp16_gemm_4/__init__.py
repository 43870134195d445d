"""``cutlass_fp16_gemm_4``: CUTLASS's tutorial ``fp16_gemm_4.py`` (preferred and fallback (dynamic) cluster shapes), imported from ``CUTLASS_DIR``."""

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_4.plan import CutlassFp16Gemm4Plan

PLAN = CutlassFp16Gemm4Plan
