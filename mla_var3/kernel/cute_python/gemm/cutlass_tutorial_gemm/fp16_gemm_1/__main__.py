"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_1 [flags]``."""

from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.fp16_gemm_1.plan import CutlassFp16Gemm1Plan

raise SystemExit(CutlassFp16Gemm1Plan().benchmark_kernel_argparse())
