"""``hopper_gemm_v3``: the Hopper GEMM worklog's step 3: persistent grid, banded tile order."""

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v3.plan import HopperGemmV3Plan

PLAN = HopperGemmV3Plan
