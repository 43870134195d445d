"""``mla_decode_v7``: v6 with a combine that computes each split's weight once, into SMEM."""

from mla_var3.kernel.cute_python.mla.decode.v7.plan import MlaDecodeV7Plan

PLAN = MlaDecodeV7Plan
