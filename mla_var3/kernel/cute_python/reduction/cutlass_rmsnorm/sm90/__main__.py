"""``python -m mla_var3.kernel.cute_python.reduction.cutlass_rmsnorm.sm90 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.reduction.cutlass_rmsnorm.sm90.plan import CutlassRmsNormSm90Plan

raise SystemExit(benchmark_kernel_argparse(CutlassRmsNormSm90Plan))
