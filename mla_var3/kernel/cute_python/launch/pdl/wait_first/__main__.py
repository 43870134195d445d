"""``python -m mla_var3.kernel.cute_python.launch.pdl.wait_first [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.launch.pdl.wait_first.plan import PdlPairWaitFirstPlan

raise SystemExit(benchmark_kernel_argparse(PdlPairWaitFirstPlan))
