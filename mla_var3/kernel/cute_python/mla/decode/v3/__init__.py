"""``mla_decode_v3``: v2 + the next block's Q K^T in flight during the softmax."""

from mla_var3.kernel.cute_python.mla.decode.v3.plan import MlaDecodeV3Plan

PLAN = MlaDecodeV3Plan
