"""``python -m mla_var3.kernel.cute_python.reduction.rmsnorm.v3 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.plan import RmsNormV3Plan

raise SystemExit(benchmark_kernel_argparse(RmsNormV3Plan))
