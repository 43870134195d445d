"""``python -m mla_var3.kernel.cute_python.reduction.cutlass_rmsnorm.sm100 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.reduction.cutlass_rmsnorm.sm100.plan import CutlassRmsNormSm100Plan

raise SystemExit(benchmark_kernel_argparse(CutlassRmsNormSm100Plan))
