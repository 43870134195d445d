"""``python -m mla_var3.kernel.cute_python.mla.decode.v1 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.mla.decode.v1.plan import MlaDecodeV1Plan

raise SystemExit(benchmark_kernel_argparse(MlaDecodeV1Plan))
