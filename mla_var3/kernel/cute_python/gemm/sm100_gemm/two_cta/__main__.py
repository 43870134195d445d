"""``python -m mla_var3.kernel.cute_python.gemm.sm100_gemm.two_cta [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.sm100_gemm.two_cta.plan import Sm100GemmTwoCtaPlan

raise SystemExit(benchmark_kernel_argparse(Sm100GemmTwoCtaPlan))
