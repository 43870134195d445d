"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_4 [flags]``."""

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_4.plan import CutlassFp16Gemm4Plan

raise SystemExit(CutlassFp16Gemm4Plan().benchmark_kernel_argparse())
