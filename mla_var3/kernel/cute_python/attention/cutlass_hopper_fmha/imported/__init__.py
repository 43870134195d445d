"""``cutlass_hopper_fmha``: CUTLASS's Hopper ``fmha.py`` loaded from ``CUTLASS_DIR`` (runs on the H200)."""

from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.imported.plan import CutlassHopperFmhaPlan

PLAN = CutlassHopperFmhaPlan
