"""``python -m mla_var3.kernel.cute_python.mla.decode.v2 [flags]``."""

from mla_var3.kernel.cute_python.mla.decode.v2.plan import MlaDecodeV2Plan

raise SystemExit(MlaDecodeV2Plan().benchmark_kernel_argparse())
