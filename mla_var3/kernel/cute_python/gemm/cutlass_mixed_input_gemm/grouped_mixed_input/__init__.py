"""``cutlass_sm100_grouped_mixed_input_gemm``: CUTLASS's Blackwell ``grouped_mixed_input_gemm.py`` (contiguous-offset grouped mixed-input GEMM), compile-only."""

from mla_var3.kernel.cute_python.gemm.cutlass_mixed_input_gemm.grouped_mixed_input.plan import (
    CutlassSm100GroupedMixedInputGemmPlan,
)

PLAN = CutlassSm100GroupedMixedInputGemmPlan
