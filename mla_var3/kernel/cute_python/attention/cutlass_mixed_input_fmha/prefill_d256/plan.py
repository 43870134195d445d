"""Plan for ``cutlass_mixed_input_fmha_prefill_d256``: ``mixed_input_fmha_prefill_d256.py`` imported from ``CUTLASS_DIR``.

Head dimension 256, scale granularity 256 (the argparse default; 128 is the other choice,
``mixed_input_fmha_prefill_d256.py:1638-1639``, ``:1883-1886``). Default shape: the argparse
default, one batch of 8 heads and 256 tokens (``:1916-1927``). See
:mod:`~mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.prefill` for the interface.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.prefill import (
    MixedInputPrefillPlan,
    prefill_shape_params,
)


class MixedInputPrefillD256Plan(MixedInputPrefillPlan):
    name = "cutlass_mixed_input_fmha_prefill_d256"
    description = (
        "CUTLASS's mixed_input_fmha_prefill_d256.py imported from CUTLASS_DIR: bf16 Q x int8 K/V, 8 warps dequantize "
        "K and V into SMEM for a 2-CTA tcgen05 MMA; separate softmax and correction warpgroups (compile-only here)"
    )
    example_file = "mixed_input_fmha_prefill_d256.py"
    kernel_class = "MixedInputFusedMultiHeadAttentionPrefillD256"
    granularities = (256, 128)
    shape_params = prefill_shape_params(256)


__all__ = ["MixedInputPrefillD256Plan"]
