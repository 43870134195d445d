"""``row_reduce``: see :mod:`.plan`."""

from mla_var3.kernel.cute_python.reduction.row_reduce.cluster.plan import RowReducePlan

PLAN = RowReducePlan
