"""``mla_decode_v6``: v5 with the split path's fp32 partials written as 64-bit stores."""

from mla_var3.kernel.cute_python.mla.decode.v6.plan import MlaDecodeV6Plan

PLAN = MlaDecodeV6Plan
