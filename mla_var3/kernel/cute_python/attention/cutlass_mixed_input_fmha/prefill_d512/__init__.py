"""``cutlass_mixed_input_fmha_prefill_d512``: CUTLASS's ``mixed_input_fmha_prefill_d512.py`` from ``CUTLASS_DIR`` (compile-only)."""

from mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.prefill_d512.plan import (
    MixedInputPrefillD512Plan,
)

PLAN = MixedInputPrefillD512Plan
