"""``cutlass_sm100_dense_gemm_persistent_prefetch``: CUTLASS's Blackwell ``dense_gemm_persistent_prefetch.py`` (TMA prefetch into L2 ahead of the loads), compile-only."""

from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.persistent_prefetch.plan import (
    CutlassSm100DenseGemmPersistentPrefetchPlan,
)

PLAN = CutlassSm100DenseGemmPersistentPrefetchPlan
