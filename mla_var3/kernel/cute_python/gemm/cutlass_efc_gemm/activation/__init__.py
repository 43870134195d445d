"""``cutlass_sm100_efc_activation_gemm``: CUTLASS's Blackwell ``activation_custom_epilogue_dense_gemm.py`` (a GEMM with an EFC epilogue), compile-only."""

from mla_var3.kernel.cute_python.gemm.cutlass_efc_gemm.activation.plan import (
    CutlassSm100EfcActivationGemmPlan,
)

PLAN = CutlassSm100EfcActivationGemmPlan
