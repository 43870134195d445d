"""``python -m mla_var3.kernel.cute_python.attention.fmha.v3 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.attention.fmha.v3.plan import FmhaHopperV3Plan

raise SystemExit(benchmark_kernel_argparse(FmhaHopperV3Plan))
