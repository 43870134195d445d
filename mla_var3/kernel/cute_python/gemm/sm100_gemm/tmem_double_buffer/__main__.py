"""``python -m mla_var3.kernel.cute_python.gemm.sm100_gemm.tmem_double_buffer [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.sm100_gemm.tmem_double_buffer.plan import Sm100GemmTmemDoubleBufferPlan

raise SystemExit(benchmark_kernel_argparse(Sm100GemmTmemDoubleBufferPlan))
