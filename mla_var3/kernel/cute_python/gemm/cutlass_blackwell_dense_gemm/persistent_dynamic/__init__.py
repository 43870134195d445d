"""``cutlass_sm100_dense_gemm_persistent_dynamic``: CUTLASS's Blackwell ``dense_gemm_persistent_dynamic.py`` (CLC dynamic tile scheduling), compile-only."""

from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.persistent_dynamic.plan import (
    CutlassSm100DenseGemmPersistentDynamicPlan,
)

PLAN = CutlassSm100DenseGemmPersistentDynamicPlan
