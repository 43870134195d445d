"""``cutlass_mla_decode_fp8``: CUTLASS's SM100 ``mla_decode_fp8.py`` loaded from ``CUTLASS_DIR`` (compile-only here)."""

from mla_var3.kernel.cute_python.mla.cutlass_mla.fp8.plan import CutlassMlaDecodeFp8Plan

PLAN = CutlassMlaDecodeFp8Plan
