"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_dense_gemm.imported [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.cutlass_dense_gemm.imported.plan import CutlassHopperDenseGemmPlan

raise SystemExit(benchmark_kernel_argparse(CutlassHopperDenseGemmPlan))
