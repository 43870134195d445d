"""``hopper_gemm_v4``: the Hopper GEMM worklog's step 4: TMA-store epilogue."""

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v4.plan import HopperGemmV4Plan

PLAN = HopperGemmV4Plan
