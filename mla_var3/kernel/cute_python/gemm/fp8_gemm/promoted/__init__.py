"""``hopper_gemm_fp8``: FP8 (e4m3) GEMM on sm_90a, per-tensor scales, WGMMA sums promoted to fp32 every K tile (2xAcc)."""

from mla_var3.kernel.cute_python.gemm.fp8_gemm.promoted.plan import HopperGemmFp8Plan

PLAN = HopperGemmFp8Plan
