"""``cutlass_mla_decode_fp16``: CUTLASS's SM100 ``mla_decode_fp16.py`` loaded from ``CUTLASS_DIR`` (compile-only here)."""

from mla_var3.kernel.cute_python.mla.cutlass_mla.fp16.plan import CutlassMlaDecodeFp16Plan

PLAN = CutlassMlaDecodeFp16Plan
