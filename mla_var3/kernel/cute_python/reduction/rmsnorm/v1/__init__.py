"""``rmsnorm_v1``: see :mod:`.plan`."""

from mla_var3.kernel.cute_python.reduction.rmsnorm.v1.plan import RmsNormV1Plan

PLAN = RmsNormV1Plan
