"""``python -m mla_var3.kernel.cute_python.attention.fmha.v0 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.attention.fmha.v0.plan import FmhaHopperV0Plan

raise SystemExit(benchmark_kernel_argparse(FmhaHopperV0Plan))
