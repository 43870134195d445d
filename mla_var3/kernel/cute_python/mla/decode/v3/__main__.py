"""``python -m mla_var3.kernel.cute_python.mla.decode.v3 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.mla.decode.v3.plan import MlaDecodeV3Plan

raise SystemExit(benchmark_kernel_argparse(MlaDecodeV3Plan))
