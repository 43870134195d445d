"""``hopper_gemm_auto``: the v5 Hopper GEMM with the config rule's tile, cluster, stages and tile order per shape."""

from mla_var3.kernel.cute_python.gemm.hopper_gemm.auto.plan import HopperGemmAutoPlan

PLAN = HopperGemmAutoPlan
