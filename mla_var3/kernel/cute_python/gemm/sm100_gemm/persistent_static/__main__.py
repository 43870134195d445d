"""``python -m mla_var3.kernel.cute_python.gemm.sm100_gemm.persistent_static [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.sm100_gemm.persistent_static.plan import Sm100GemmPersistentStaticPlan

raise SystemExit(benchmark_kernel_argparse(Sm100GemmPersistentStaticPlan))
