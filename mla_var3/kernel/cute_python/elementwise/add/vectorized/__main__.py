"""``python -m mla_var3.kernel.cute_python.elementwise.add.vectorized [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.elementwise.add.vectorized.plan import ElementwiseAddPlan

raise SystemExit(benchmark_kernel_argparse(ElementwiseAddPlan))
