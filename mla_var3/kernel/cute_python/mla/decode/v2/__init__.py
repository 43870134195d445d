"""``mla_decode_v2``: v1 + warp specialization and a multistage KV TMA pipeline."""

from mla_var3.kernel.cute_python.mla.decode.v2.plan import MlaDecodeV2Plan

PLAN = MlaDecodeV2Plan
