"""CUTLASS's Hopper FMHA (``cute/hopper/kernel/attention/fmha.py``), imported as a plan from ``CUTLASS_DIR``."""
