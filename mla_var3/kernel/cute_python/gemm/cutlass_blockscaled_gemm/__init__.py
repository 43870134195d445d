"""CUTLASS's Blackwell block-scaled GEMMs (``cute/blackwell/kernel/blockscaled_gemm/``), imported as compile-only plans from ``CUTLASS_DIR``."""
