"""``python -m mla_var3.kernel.cute_python.launch.pdl.overlapped [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.launch.pdl.overlapped.plan import PdlPairPlan

raise SystemExit(benchmark_kernel_argparse(PdlPairPlan))
