"""``rmsnorm_v2``: see :mod:`.plan`."""

from mla_var3.kernel.cute_python.reduction.rmsnorm.v2.plan import RmsNormV2Plan

PLAN = RmsNormV2Plan
