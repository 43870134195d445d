"""CUTLASS's Blackwell mixed-input GEMMs (``cute/blackwell/kernel/mixed_input_gemm/``), imported as compile-only plans from ``CUTLASS_DIR``."""
