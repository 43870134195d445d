"""``cutlass_sm100_blockscaled_gemm_persistent``: CUTLASS's Blackwell ``dense_blockscaled_gemm_persistent.py`` (block-scaled tcgen05 MMA, persistent, warp-specialized), compile-only."""

from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.persistent.plan import (
    CutlassSm100BlockscaledGemmPersistentPlan,
)

PLAN = CutlassSm100BlockscaledGemmPersistentPlan
