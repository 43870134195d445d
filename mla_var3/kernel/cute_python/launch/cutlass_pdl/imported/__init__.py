"""``cutlass_pdl_elementwise_add``: CUTLASS's programmatic dependent launch tutorial (two dependent adds), for sm_90a."""

from mla_var3.kernel.cute_python.launch.cutlass_pdl.imported.plan import CutlassPdlElementwiseAddPlan

PLAN = CutlassPdlElementwiseAddPlan
