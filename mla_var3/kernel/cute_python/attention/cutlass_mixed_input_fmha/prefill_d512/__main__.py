"""``python -m mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.prefill_d512 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.prefill_d512.plan import (
    MixedInputPrefillD512Plan,
)

raise SystemExit(benchmark_kernel_argparse(MixedInputPrefillD512Plan))
