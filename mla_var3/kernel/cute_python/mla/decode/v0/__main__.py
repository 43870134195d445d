"""``python -m mla_var3.kernel.cute_python.mla.decode.v0 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.mla.decode.v0.plan import MlaDecodeV0Plan

raise SystemExit(benchmark_kernel_argparse(MlaDecodeV0Plan))
