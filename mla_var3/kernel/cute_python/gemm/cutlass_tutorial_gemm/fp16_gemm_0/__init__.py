"""``cutlass_fp16_gemm_0``: CUTLASS's tutorial ``fp16_gemm_0.py`` (the first tutorial: the smallest complete tcgen05 GEMM), imported from ``CUTLASS_DIR``."""

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_0.plan import CutlassFp16Gemm0Plan

PLAN = CutlassFp16Gemm0Plan
