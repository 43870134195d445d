"""CUTLASS's Blackwell blockwise-scaled FP8 GEMMs (``cute/blackwell/kernel/blockwise_gemm/``), imported as compile-only plans from ``CUTLASS_DIR``."""
