"""``python -m mla_var3.kernel.torch_ref.reduction.row_reduce.sum_amax [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.torch_ref.reduction.row_reduce.sum_amax.plan import TorchRowReducePlan

raise SystemExit(benchmark_kernel_argparse(TorchRowReducePlan))
