"""``elementwise_add``: vectorized 128-bit copies with a predicated tail."""

from mla_var3.kernel.cute_python.elementwise.add.vectorized.plan import ElementwiseAddPlan

PLAN = ElementwiseAddPlan
