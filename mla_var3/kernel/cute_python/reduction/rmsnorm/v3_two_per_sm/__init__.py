"""``rmsnorm_v3_two_per_sm``: ``rmsnorm_v3``'s kernel with two persistent 256-thread CTAs per SM (see
:mod:`mla_var3.kernel.cute_python.reduction.rmsnorm.v3.plan`), registered as a kernel of its own so a
comparison group can time it beside ``rmsnorm_v3``'s default layout in one run."""

from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.plan import RmsNormV3TwoPerSmPlan

PLAN = RmsNormV3TwoPerSmPlan
