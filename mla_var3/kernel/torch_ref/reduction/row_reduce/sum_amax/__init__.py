"""See :mod:`.plan`."""

from mla_var3.kernel.torch_ref.reduction.row_reduce.sum_amax.plan import TorchRowReducePlan

PLAN = TorchRowReducePlan
