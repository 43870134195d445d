"""``cutlass_sm100_blockwise_gemm``: CUTLASS's Blackwell ``blockwise_gemm.py`` (FP8 with fp32 block scales), compile-only."""

from mla_var3.kernel.cute_python.gemm.cutlass_blockwise_gemm.blockwise.plan import (
    CutlassSm100BlockwiseGemmPlan,
)

PLAN = CutlassSm100BlockwiseGemmPlan
