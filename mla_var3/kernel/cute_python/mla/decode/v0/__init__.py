"""``mla_decode_v0``: baseline CuTe DSL MLA decode (TMA, WGMMA, online softmax; nothing overlapped)."""

from mla_var3.kernel.cute_python.mla.decode.v0.plan import MlaDecodeV0Plan

PLAN = MlaDecodeV0Plan
