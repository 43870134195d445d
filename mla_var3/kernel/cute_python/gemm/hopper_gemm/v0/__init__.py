"""``hopper_gemm_v0``: the Hopper GEMM worklog's step 0: TMA + WGMMA, one stage, one warpgroup."""

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v0.plan import HopperGemmV0Plan

PLAN = HopperGemmV0Plan
