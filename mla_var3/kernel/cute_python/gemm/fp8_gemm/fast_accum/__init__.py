"""``hopper_gemm_fp8_fast_accum``: FP8 (e4m3) GEMM on sm_90a, per-tensor scales, WGMMA accumulating all of K in place."""

from mla_var3.kernel.cute_python.gemm.fp8_gemm.fast_accum.plan import HopperGemmFp8FastAccumPlan

PLAN = HopperGemmFp8FastAccumPlan
