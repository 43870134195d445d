"""``rmsnorm_v3``: see :mod:`.plan`."""

from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.plan import RmsNormV3Plan

PLAN = RmsNormV3Plan
