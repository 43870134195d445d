"""``cutlass_mixed_input_fmha_prefill_d256``: CUTLASS's ``mixed_input_fmha_prefill_d256.py`` from ``CUTLASS_DIR`` (compile-only)."""

from mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.prefill_d256.plan import (
    MixedInputPrefillD256Plan,
)

PLAN = MixedInputPrefillD256Plan
