"""``flashmla_decode``: FlashMLA's SM90 dense MLA decode (split-KV + combine), built into third_party/flashmla."""

from mla_var3.kernel.external.mla.flashmla.sm90.plan import FlashMlaDecodePlan

PLAN = FlashMlaDecodePlan
