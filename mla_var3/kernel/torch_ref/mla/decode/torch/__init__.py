"""``mla_decode_torch``: the fp32 PyTorch reference of MLA decode as a baseline."""

from mla_var3.kernel.torch_ref.mla.decode.torch.plan import MlaDecodeTorchPlan

PLAN = MlaDecodeTorchPlan
