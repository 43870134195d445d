"""``cublas_gemm``: C = A @ B^T by ``torch.matmul`` (cuBLAS), the GEMM baseline."""

from mla_var3.kernel.torch_ref.gemm.cublas.matmul.plan import CublasGemmPlan

PLAN = CublasGemmPlan
