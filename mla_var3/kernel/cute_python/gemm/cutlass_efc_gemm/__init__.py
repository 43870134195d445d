"""CUTLASS's Blackwell GEMMs with epilogue fusion configurations (``cute/blackwell/efc/``), imported as compile-only plans from ``CUTLASS_DIR``."""
