"""``cutlass_fmha_bwd_sm100``: CUTLASS's Blackwell ``fmha_bwd.py`` loaded from ``CUTLASS_DIR`` (compile-only here)."""

from mla_var3.kernel.cute_python.attention.cutlass_fmha_bwd.imported.plan import CutlassFmhaBwdSm100Plan

PLAN = CutlassFmhaBwdSm100Plan
