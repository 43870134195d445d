"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_mixed_input_gemm.mixed_input [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.cutlass_mixed_input_gemm.mixed_input.plan import (
    CutlassSm100MixedInputGemmPlan,
)

raise SystemExit(benchmark_kernel_argparse(CutlassSm100MixedInputGemmPlan))
