"""CUTLASS's Blackwell dense GEMM series (``cute/blackwell/kernel/dense_gemm/``), imported as compile-only plans from ``CUTLASS_DIR``."""
