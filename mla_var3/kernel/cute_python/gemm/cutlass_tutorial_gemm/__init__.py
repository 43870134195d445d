"""CUTLASS's Blackwell tutorial GEMMs (``cute/blackwell/tutorial/tutorial_gemm/fp16_gemm_*.py``), imported as
compile-verified plans from ``CUTLASS_DIR``: one variant package per tutorial step, sharing ``common``."""
