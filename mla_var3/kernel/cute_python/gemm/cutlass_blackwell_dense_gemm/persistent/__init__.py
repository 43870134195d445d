"""``cutlass_sm100_dense_gemm_persistent``: CUTLASS's Blackwell ``dense_gemm_persistent.py`` (warp-specialized, static persistent, double-buffered TMEM accumulator), compile-only."""

from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.persistent.plan import (
    CutlassSm100DenseGemmPersistentPlan,
)

PLAN = CutlassSm100DenseGemmPersistentPlan
