"""``python -m mla_var3.kernel.cute_python.mla.decode.v2 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.mla.decode.v2.plan import MlaDecodeV2Plan

raise SystemExit(benchmark_kernel_argparse(MlaDecodeV2Plan))
