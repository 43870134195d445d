"""``python -m mla_var3.kernel.cute_python.mla.decode.v5 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.mla.decode.v5.plan import MlaDecodeV5Plan

raise SystemExit(benchmark_kernel_argparse(MlaDecodeV5Plan))
