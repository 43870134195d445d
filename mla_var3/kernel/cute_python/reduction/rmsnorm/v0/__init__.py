"""``rmsnorm_v0``: see :mod:`.plan`."""

from mla_var3.kernel.cute_python.reduction.rmsnorm.v0.plan import RmsNormV0Plan

PLAN = RmsNormV0Plan
