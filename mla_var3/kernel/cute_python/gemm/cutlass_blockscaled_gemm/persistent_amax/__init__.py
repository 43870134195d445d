"""``cutlass_sm100_blockscaled_gemm_persistent_amax``: CUTLASS's Blackwell ``dense_blockscaled_gemm_persistent_amax.py`` (the block-scaled GEMM that also reduces max |C|), compile-only."""

from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.persistent_amax.plan import (
    CutlassSm100BlockscaledGemmPersistentAmaxPlan,
)

PLAN = CutlassSm100BlockscaledGemmPersistentAmaxPlan
