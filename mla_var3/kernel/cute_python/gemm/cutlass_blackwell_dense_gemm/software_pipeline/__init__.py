"""``cutlass_sm100_dense_gemm_software_pipeline``: CUTLASS's Blackwell ``dense_gemm_software_pipeline.py`` (the K loop pipelined by the compiler), compile-only."""

from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.software_pipeline.plan import (
    CutlassSm100DenseGemmSoftwarePipelinePlan,
)

PLAN = CutlassSm100DenseGemmSoftwarePipelinePlan
