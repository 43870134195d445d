"""``quack_rmsnorm``: see :mod:`.plan`."""

from mla_var3.kernel.external.reduction.quack.rmsnorm.plan import QuackRmsNormPlan

PLAN = QuackRmsNormPlan
