"""``python -m mla_var3.kernel.torch_ref.gemm.cublas.small_int_data [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.torch_ref.gemm.cublas.small_int_data.plan import CublasGemmSmallIntPlan

raise SystemExit(benchmark_kernel_argparse(CublasGemmSmallIntPlan))
