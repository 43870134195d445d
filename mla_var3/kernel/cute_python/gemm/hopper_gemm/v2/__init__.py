"""``hopper_gemm_v2``: the Hopper GEMM worklog's step 2: warp-specialized producer/consumers with register reallocation."""

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v2.plan import HopperGemmV2Plan

PLAN = HopperGemmV2Plan
