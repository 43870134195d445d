"""``python -m mla_var3.kernel.torch_ref.gemm.cublas.fp8 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.torch_ref.gemm.cublas.fp8.plan import CublasGemmFp8Plan

raise SystemExit(benchmark_kernel_argparse(CublasGemmFp8Plan))
