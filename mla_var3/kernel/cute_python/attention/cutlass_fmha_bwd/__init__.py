"""CUTLASS's Blackwell FMHA backward (``cute/blackwell/kernel/attention/fmha/fmha_bwd.py``), imported as a plan."""
