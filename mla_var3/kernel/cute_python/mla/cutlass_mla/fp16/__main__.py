"""``python -m mla_var3.kernel.cute_python.mla.cutlass_mla.fp16 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.mla.cutlass_mla.fp16.plan import CutlassMlaDecodeFp16Plan

raise SystemExit(benchmark_kernel_argparse(CutlassMlaDecodeFp16Plan))
