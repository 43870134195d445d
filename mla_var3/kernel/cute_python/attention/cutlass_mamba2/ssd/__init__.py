"""``cutlass_mamba2_ssd``: CUTLASS's ``mamba2_ssd.py`` loaded from ``CUTLASS_DIR`` (compile-only here)."""

from mla_var3.kernel.cute_python.attention.cutlass_mamba2.ssd.plan import CutlassMamba2SsdPlan

PLAN = CutlassMamba2SsdPlan
