"""``python -m mla_var3.kernel.torch_ref.mla.decode.torch [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.torch_ref.mla.decode.torch.plan import MlaDecodeTorchPlan

raise SystemExit(benchmark_kernel_argparse(MlaDecodeTorchPlan))
