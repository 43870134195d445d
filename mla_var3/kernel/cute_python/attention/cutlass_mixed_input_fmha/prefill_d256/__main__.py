"""``python -m mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.prefill_d256 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.prefill_d256.plan import (
    MixedInputPrefillD256Plan,
)

raise SystemExit(benchmark_kernel_argparse(MixedInputPrefillD256Plan))
