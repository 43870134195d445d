"""``python -m mla_var3.kernel.cute_python.reduction.rmsnorm.v1 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.reduction.rmsnorm.v1.plan import RmsNormV1Plan

raise SystemExit(benchmark_kernel_argparse(RmsNormV1Plan))
