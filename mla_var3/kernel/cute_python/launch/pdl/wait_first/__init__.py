"""``pdl_pair_wait_first``: the pair with PDL, but the consumer waits before any work of its own."""

from mla_var3.kernel.cute_python.launch.pdl.wait_first.plan import PdlPairWaitFirstPlan

PLAN = PdlPairWaitFirstPlan
