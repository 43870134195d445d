"""``cutlass_sm100_mixed_input_gemm``: CUTLASS's Blackwell ``mixed_input_gemm.py`` (narrow A widened by transform warps), compile-only."""

from mla_var3.kernel.cute_python.gemm.cutlass_mixed_input_gemm.mixed_input.plan import (
    CutlassSm100MixedInputGemmPlan,
)

PLAN = CutlassSm100MixedInputGemmPlan
