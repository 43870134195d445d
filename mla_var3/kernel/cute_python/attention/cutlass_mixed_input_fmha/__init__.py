"""CUTLASS's Blackwell mixed-input FMHA (``cute/blackwell/kernel/attention/mixed_input_fmha/``): bf16 Q, int8 K/V with
block scales, imported as compile-only plans from ``CUTLASS_DIR``."""
