"""``mla_decode_v5``: v4's seesaw kernel, its CTAs dispatched longest sequence first, and a combine
spread over column quarters."""

from mla_var3.kernel.cute_python.mla.decode.v5.plan import MlaDecodeV5Plan

PLAN = MlaDecodeV5Plan
