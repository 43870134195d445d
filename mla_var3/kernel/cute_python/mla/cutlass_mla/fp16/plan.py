"""Plan for ``cutlass_mla_decode_fp16``: CUTLASS's SM100 ``mla_decode_fp16.py`` imported from ``CUTLASS_DIR``.

fp16 in and out, fp32 accumulation and LSE (the example's ``can_implement`` admits nothing else,
``mla_decode_fp16.py:3437-3444``). 2-CTA tcgen05 MMAs into TMEM, one TMA warp fed page indices
by a cp.async page-table warp, a 15-stage K/V ring shared by the QK and PV operands, split-KV
with a reduction kernel. Compile-verified only (no SM100 GPU here); the adapter is
:mod:`mla_var3.kernel.cute_python.mla.cutlass_mla.common`.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.mla.cutlass_mla.common import MLA_DIR, CutlassMlaDecodePlanBase


class CutlassMlaDecodeFp16Plan(CutlassMlaDecodePlanBase):
    name = "cutlass_mla_decode_fp16"
    description = (
        "CUTLASS's SM100 MLA decode (fp16) imported from CUTLASS_DIR: paged-KV TMA, 2-CTA tcgen05 into TMEM, "
        "split-KV + reduction (compile-only here)"
    )
    dtypes = ("float16",)
    example_file = f"{MLA_DIR}/mla_decode_fp16.py"
    example_class = "BlackwellMultiHeadLatentAttentionForwardFP16"


__all__ = ["CutlassMlaDecodeFp16Plan"]
