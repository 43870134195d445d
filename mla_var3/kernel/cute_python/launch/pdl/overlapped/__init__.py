"""``pdl_pair``: the row scale and row dot with PDL, the consumer's z row loaded before its wait."""

from mla_var3.kernel.cute_python.launch.pdl.overlapped.plan import PdlPairPlan

PLAN = PdlPairPlan
