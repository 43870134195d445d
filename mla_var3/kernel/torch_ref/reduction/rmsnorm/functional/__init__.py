"""See :mod:`.plan`."""

from mla_var3.kernel.torch_ref.reduction.rmsnorm.functional.plan import TorchRmsNormPlan

PLAN = TorchRmsNormPlan
