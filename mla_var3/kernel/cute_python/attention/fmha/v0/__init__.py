"""``fmha_hopper_v0``: the correct baseline (TMA, WGMMA, online softmax, causal tile skipping; nothing overlapped)."""

from mla_var3.kernel.cute_python.attention.fmha.v0.plan import FmhaHopperV0Plan

PLAN = FmhaHopperV0Plan
