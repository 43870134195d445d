"""Plan for ``cutlass_mixed_input_fmha_prefill_d512``: ``mixed_input_fmha_prefill_d512.py`` imported from ``CUTLASS_DIR``.

Head dimension 512, scale granularity 512 (the argparse default; 128 and 256 are accepted,
``mixed_input_fmha_prefill_d512.py:1780-1781``, ``:2023-2026``). Default shape: the argparse
default, one batch of 8 heads and 256 tokens (``:2056-2067``). See
:mod:`~mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.prefill` for the interface.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.prefill import (
    MixedInputPrefillPlan,
    prefill_shape_params,
)


class MixedInputPrefillD512Plan(MixedInputPrefillPlan):
    name = "cutlass_mixed_input_fmha_prefill_d512"
    description = (
        "CUTLASS's mixed_input_fmha_prefill_d512.py imported from CUTLASS_DIR: bf16 Q x int8 K/V, a 512-column O fills "
        "TMEM, so S borrows O's second stage and the softmax warps hold that stage in registers (compile-only here)"
    )
    example_file = "mixed_input_fmha_prefill_d512.py"
    kernel_class = "MixedInputFusedMultiHeadAttentionPrefillD512"
    granularities = (512, 256, 128)
    shape_params = prefill_shape_params(512)


__all__ = ["MixedInputPrefillD512Plan"]
