"""``python -m mla_var3.kernel.cute_python.gemm.sm100_gemm.ws_tma_store [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.sm100_gemm.ws_tma_store.plan import Sm100GemmWsTmaStorePlan

raise SystemExit(benchmark_kernel_argparse(Sm100GemmWsTmaStorePlan))
