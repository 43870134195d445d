"""``python -m mla_var3.kernel.cute_python.launch.pdl.serialized [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.launch.pdl.serialized.plan import PdlPairSerializedPlan

raise SystemExit(benchmark_kernel_argparse(PdlPairSerializedPlan))
