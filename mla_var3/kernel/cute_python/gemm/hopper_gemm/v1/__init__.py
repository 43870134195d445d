"""``hopper_gemm_v1``: the Hopper GEMM worklog's step 1: multistage TMA pipeline on mbarriers."""

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v1.plan import HopperGemmV1Plan

PLAN = HopperGemmV1Plan
