"""``cutlass_sm100_efc_custom_epilogue_gemm``: CUTLASS's Blackwell ``custom_epilogue_dense_gemm.py`` (a GEMM with an EFC epilogue), compile-only."""

from mla_var3.kernel.cute_python.gemm.cutlass_efc_gemm.custom_epilogue.plan import (
    CutlassSm100EfcCustomEpilogueGemmPlan,
)

PLAN = CutlassSm100EfcCustomEpilogueGemmPlan
