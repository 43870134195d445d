"""``python -m mla_var3.kernel.cute_python.mla.decode.v4 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.mla.decode.v4.plan import MlaDecodeV4Plan

raise SystemExit(benchmark_kernel_argparse(MlaDecodeV4Plan))
