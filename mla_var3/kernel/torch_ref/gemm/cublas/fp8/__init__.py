"""``cublas_gemm_fp8``: the FP8 GEMM workload by ``torch._scaled_mm`` (cuBLASLt FP8), the FP8 baseline."""

from mla_var3.kernel.torch_ref.gemm.cublas.fp8.plan import CublasGemmFp8Plan

PLAN = CublasGemmFp8Plan
