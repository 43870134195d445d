"""``mla_decode_v1``: v0 + split-KV and an LSE-weighted combine kernel."""

from mla_var3.kernel.cute_python.mla.decode.v1.plan import MlaDecodeV1Plan

PLAN = MlaDecodeV1Plan
