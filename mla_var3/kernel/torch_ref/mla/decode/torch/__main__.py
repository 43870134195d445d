"""``python -m mla_var3.kernel.torch_ref.mla.decode.torch [flags]``."""

from mla_var3.kernel.torch_ref.mla.decode.torch.plan import MlaDecodeTorchPlan

raise SystemExit(MlaDecodeTorchPlan().benchmark_kernel_argparse())
