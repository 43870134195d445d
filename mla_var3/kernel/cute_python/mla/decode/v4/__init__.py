"""``mla_decode_v4``: FlashMLA's seesaw schedule -- two warpgroups, per-piece KV barriers, PDL combine."""

from mla_var3.kernel.cute_python.mla.decode.v4.plan import MlaDecodeV4Plan

PLAN = MlaDecodeV4Plan
