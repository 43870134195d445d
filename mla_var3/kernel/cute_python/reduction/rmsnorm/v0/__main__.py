"""``python -m mla_var3.kernel.cute_python.reduction.rmsnorm.v0 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.reduction.rmsnorm.v0.plan import RmsNormV0Plan

raise SystemExit(benchmark_kernel_argparse(RmsNormV0Plan))
