"""``cutlass_ampere_fa2``: CUTLASS's Ampere ``flash_attention_v2.py`` loaded from ``CUTLASS_DIR``."""

from mla_var3.kernel.cute_python.attention.cutlass_ampere_fa2.imported.plan import CutlassAmpereFa2Plan

PLAN = CutlassAmpereFa2Plan
