"""``python -m mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.decode [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.decode.plan import MixedInputDecodePlan

raise SystemExit(benchmark_kernel_argparse(MixedInputDecodePlan))
