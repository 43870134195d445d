"""``cutlass_sm100_blockscaled_gemm_persistent_prefetch``: CUTLASS's Blackwell ``dense_blockscaled_gemm_persistent_prefetch.py`` (the block-scaled GEMM with TMA prefetch into L2), compile-only."""

from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.persistent_prefetch.plan import (
    CutlassSm100BlockscaledGemmPersistentPrefetchPlan,
)

PLAN = CutlassSm100BlockscaledGemmPersistentPrefetchPlan
