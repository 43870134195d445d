"""CUTLASS's RMSNorm example (``cute/blackwell/kernel/rmsnorm/rmsnorm.py`` with ``reduce/reduce.py``), imported from ``CUTLASS_DIR``."""
