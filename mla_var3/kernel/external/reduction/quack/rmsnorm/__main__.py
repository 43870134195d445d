"""``python -m mla_var3.kernel.external.reduction.quack.rmsnorm [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.external.reduction.quack.rmsnorm.plan import QuackRmsNormPlan

raise SystemExit(benchmark_kernel_argparse(QuackRmsNormPlan))
