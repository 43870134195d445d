"""``python -m mla_var3.kernel.cute_python.mla.decode.v1 [flags]``."""

from mla_var3.kernel.cute_python.mla.decode.v1.plan import MlaDecodeV1Plan

raise SystemExit(MlaDecodeV1Plan().benchmark_kernel_argparse())
