"""``python -m mla_var3.kernel.external.mla.flashmla.sm90 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.external.mla.flashmla.sm90.plan import FlashMlaDecodePlan

raise SystemExit(benchmark_kernel_argparse(FlashMlaDecodePlan))
