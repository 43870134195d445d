"""CUTLASS's Blackwell FMHA (``cute/blackwell/kernel/attention/fmha/fmha.py``), imported as plans from ``CUTLASS_DIR``."""
