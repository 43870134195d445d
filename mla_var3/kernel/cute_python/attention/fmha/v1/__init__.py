"""``fmha_hopper_v1``: v0 + warp specialization (TMA producer, two consumer warpgroups, setmaxnreg) and K/V rings."""

from mla_var3.kernel.cute_python.attention.fmha.v1.plan import FmhaHopperV1Plan

PLAN = FmhaHopperV1Plan
