"""``python -m mla_var3.kernel.torch_ref.gemm.cublas.matmul [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.torch_ref.gemm.cublas.matmul.plan import CublasGemmPlan

raise SystemExit(benchmark_kernel_argparse(CublasGemmPlan))
