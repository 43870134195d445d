"""``cutlass_mixed_input_fmha_decode``: CUTLASS's ``mixed_input_fmha_decode.py`` from ``CUTLASS_DIR`` (compile-only)."""

from mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.decode.plan import MixedInputDecodePlan

PLAN = MixedInputDecodePlan
