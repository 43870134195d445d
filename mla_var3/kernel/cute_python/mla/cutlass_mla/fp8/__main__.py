"""``python -m mla_var3.kernel.cute_python.mla.cutlass_mla.fp8 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.mla.cutlass_mla.fp8.plan import CutlassMlaDecodeFp8Plan

raise SystemExit(benchmark_kernel_argparse(CutlassMlaDecodeFp8Plan))
