"""``python -m mla_var3.kernel.cute_python.reduction.rmsnorm.v2 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.reduction.rmsnorm.v2.plan import RmsNormV2Plan

raise SystemExit(benchmark_kernel_argparse(RmsNormV2Plan))
