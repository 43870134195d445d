"""``python -m mla_var3.kernel.cute_python.reduction.row_reduce.cluster [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.reduction.row_reduce.cluster.plan import RowReducePlan

raise SystemExit(benchmark_kernel_argparse(RowReducePlan))
