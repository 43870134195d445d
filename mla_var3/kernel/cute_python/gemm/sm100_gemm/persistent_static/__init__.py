"""``sm100_gemm_persistent_static``: persistent warp-specialized tcgen05 GEMM on a static tile schedule."""

from mla_var3.kernel.cute_python.gemm.sm100_gemm.persistent_static.plan import Sm100GemmPersistentStaticPlan

PLAN = Sm100GemmPersistentStaticPlan
