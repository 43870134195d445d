"""``cutlass_sm100_blockwise_contiguous_grouped_gemm``: CUTLASS's Blackwell ``contiguous_grouped_gemm.py`` (FP8 with fp32 block scales), compile-only."""

from mla_var3.kernel.cute_python.gemm.cutlass_blockwise_gemm.contiguous_grouped.plan import (
    CutlassSm100BlockwiseContiguousGroupedGemmPlan,
)

PLAN = CutlassSm100BlockwiseContiguousGroupedGemmPlan
