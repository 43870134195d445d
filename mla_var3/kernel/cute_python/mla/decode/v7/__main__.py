"""``python -m mla_var3.kernel.cute_python.mla.decode.v7 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.mla.decode.v7.plan import MlaDecodeV7Plan

raise SystemExit(benchmark_kernel_argparse(MlaDecodeV7Plan))
