"""CUTLASS's Hopper dense GEMM (``cute/hopper/kernel/dense_gemm/dense_gemm.py``), imported as plans from ``CUTLASS_DIR``."""
