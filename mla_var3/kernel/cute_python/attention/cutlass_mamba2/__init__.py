"""CUTLASS's Blackwell Mamba2 SSD (``cute/blackwell/kernel/attention/mamba2_ssd/``), imported as a compile-only plan."""
