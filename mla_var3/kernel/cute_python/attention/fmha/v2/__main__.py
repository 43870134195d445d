"""``python -m mla_var3.kernel.cute_python.attention.fmha.v2 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.attention.fmha.v2.plan import FmhaHopperV2Plan

raise SystemExit(benchmark_kernel_argparse(FmhaHopperV2Plan))
