"""``hopper_gemm_ws``: warp-specialized persistent GEMM (TMA multicast, WGMMA, setmaxnreg, TMA store)."""

from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import HopperGemmWSPlan

PLAN = HopperGemmWSPlan
