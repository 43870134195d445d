"""``sm100_gemm_persistent_clc``: persistent tcgen05 GEMM scheduled by Cluster Launch Control."""

from mla_var3.kernel.cute_python.gemm.sm100_gemm.persistent_clc.plan import Sm100GemmPersistentClcPlan

PLAN = Sm100GemmPersistentClcPlan
