"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_ampere_tensorop_gemm.imported [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.cutlass_ampere_tensorop_gemm.imported.plan import (
    CutlassAmpereTensoropGemmPlan,
)

raise SystemExit(benchmark_kernel_argparse(CutlassAmpereTensoropGemmPlan))
