"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_1 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_1.plan import CutlassFp16Gemm1Plan

raise SystemExit(benchmark_kernel_argparse(CutlassFp16Gemm1Plan))
