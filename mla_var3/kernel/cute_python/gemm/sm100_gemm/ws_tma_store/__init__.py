"""``sm100_gemm_ws_tma_store``: warp-specialized tcgen05 GEMM on a CTA pair with a TMA-store epilogue."""

from mla_var3.kernel.cute_python.gemm.sm100_gemm.ws_tma_store.plan import Sm100GemmWsTmaStorePlan

PLAN = Sm100GemmWsTmaStorePlan
