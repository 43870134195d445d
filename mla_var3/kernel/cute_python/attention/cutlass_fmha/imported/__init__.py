"""``cutlass_fmha_sm100``: CUTLASS's Blackwell ``fmha.py`` loaded from ``CUTLASS_DIR`` (compile-only here)."""

from mla_var3.kernel.cute_python.attention.cutlass_fmha.imported.plan import CutlassFmhaSm100Plan

PLAN = CutlassFmhaSm100Plan
