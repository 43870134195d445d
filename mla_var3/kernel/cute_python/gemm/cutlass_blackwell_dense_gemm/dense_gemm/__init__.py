"""``cutlass_sm100_dense_gemm``: CUTLASS's Blackwell ``dense_gemm.py`` (one tile per CTA, 2-CTA tcgen05 MMA, accumulator in TMEM), compile-only."""

from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.dense_gemm.plan import (
    CutlassSm100DenseGemmPlan,
)

PLAN = CutlassSm100DenseGemmPlan
