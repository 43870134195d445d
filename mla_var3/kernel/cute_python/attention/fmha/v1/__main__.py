"""``python -m mla_var3.kernel.cute_python.attention.fmha.v1 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.attention.fmha.v1.plan import FmhaHopperV1Plan

raise SystemExit(benchmark_kernel_argparse(FmhaHopperV1Plan))
