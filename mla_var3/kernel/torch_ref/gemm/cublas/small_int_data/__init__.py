"""``cublas_gemm_small_int``: cuBLAS on small-integer data, to measure the anti-pattern."""

from mla_var3.kernel.torch_ref.gemm.cublas.small_int_data.plan import CublasGemmSmallIntPlan

PLAN = CublasGemmSmallIntPlan
