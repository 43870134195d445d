"""``hopper_gemm_v4_fused``: the Hopper GEMM worklog's step 4 with a fused bias + GELU/ReLU epilogue."""

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v4_fused.plan import HopperGemmV4FusedPlan

PLAN = HopperGemmV4FusedPlan
