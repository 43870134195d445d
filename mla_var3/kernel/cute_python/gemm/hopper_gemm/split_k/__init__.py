"""``hopper_gemm_splitk``: the v5 Hopper GEMM over (tile, K slice) units, fp32 partials, a reduce."""

from mla_var3.kernel.cute_python.gemm.hopper_gemm.split_k.plan import HopperGemmSplitKPlan

PLAN = HopperGemmSplitKPlan
