"""``cutlass_ampere_tensorop_gemm``: CUTLASS's Ampere ``tensorop_gemm.py`` (mma.sync, cp.async ring, ldmatrix), imported from ``CUTLASS_DIR``."""

from mla_var3.kernel.cute_python.gemm.cutlass_ampere_tensorop_gemm.imported.plan import (
    CutlassAmpereTensoropGemmPlan,
)

PLAN = CutlassAmpereTensoropGemmPlan
