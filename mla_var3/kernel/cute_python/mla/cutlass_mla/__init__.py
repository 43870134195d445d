"""CUTLASS's SM100 MLA decode (``cute/blackwell/kernel/attention/mla/``), imported as plans from ``CUTLASS_DIR``."""
