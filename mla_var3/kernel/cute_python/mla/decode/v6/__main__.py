"""``python -m mla_var3.kernel.cute_python.mla.decode.v6 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.mla.decode.v6.plan import MlaDecodeV6Plan

raise SystemExit(benchmark_kernel_argparse(MlaDecodeV6Plan))
