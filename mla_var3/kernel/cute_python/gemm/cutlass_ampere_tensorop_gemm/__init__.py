"""CUTLASS's Ampere tensor-core GEMM (``cute/ampere/kernel/dense_gemm/tensorop_gemm.py``), imported from ``CUTLASS_DIR``."""
