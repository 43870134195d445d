"""``rmsnorm_v3_one_per_sm``: ``rmsnorm_v3``'s kernel with one persistent 512-thread CTA per SM (see
:mod:`mla_var3.kernel.cute_python.reduction.rmsnorm.v3.plan`), registered as a kernel of its own so a
comparison group can time it beside ``rmsnorm_v3``'s default layout in one run."""

from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.plan import RmsNormV3OnePerSmPlan

PLAN = RmsNormV3OnePerSmPlan
