"""``python -m mla_var3.kernel.torch_ref.reduction.rmsnorm.functional [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.torch_ref.reduction.rmsnorm.functional.plan import TorchRmsNormPlan

raise SystemExit(benchmark_kernel_argparse(TorchRmsNormPlan))
