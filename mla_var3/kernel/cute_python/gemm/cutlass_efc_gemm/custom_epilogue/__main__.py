"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_efc_gemm.custom_epilogue [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.cutlass_efc_gemm.custom_epilogue.plan import (
    CutlassSm100EfcCustomEpilogueGemmPlan,
)

raise SystemExit(benchmark_kernel_argparse(CutlassSm100EfcCustomEpilogueGemmPlan))
