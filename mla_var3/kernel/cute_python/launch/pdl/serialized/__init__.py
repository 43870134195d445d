"""``pdl_pair_serialized``: the pair launched plainly, the baseline of the ``pdl_pair`` group."""

from mla_var3.kernel.cute_python.launch.pdl.serialized.plan import PdlPairSerializedPlan

PLAN = PdlPairSerializedPlan
