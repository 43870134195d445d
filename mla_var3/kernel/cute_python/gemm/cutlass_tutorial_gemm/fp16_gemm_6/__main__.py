"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_6 [flags]``."""

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_6.plan import CutlassFp16Gemm6Plan

raise SystemExit(CutlassFp16Gemm6Plan().benchmark_kernel_argparse())
