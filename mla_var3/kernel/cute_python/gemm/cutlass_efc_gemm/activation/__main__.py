"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_efc_gemm.activation [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.cutlass_efc_gemm.activation.plan import (
    CutlassSm100EfcActivationGemmPlan,
)

raise SystemExit(benchmark_kernel_argparse(CutlassSm100EfcActivationGemmPlan))
