"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_0 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_0.plan import CutlassFp16Gemm0Plan

raise SystemExit(benchmark_kernel_argparse(CutlassFp16Gemm0Plan))
