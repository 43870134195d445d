"""Plan for ``cutlass_mla_decode_fp8``: CUTLASS's SM100 ``mla_decode_fp8.py`` imported from ``CUTLASS_DIR``.

e4m3 Q, cache and O, fp32 accumulation and LSE (``mla_decode_fp8.py:3411-3418``); P is
rounded to e4m3 before the PV MMA. No dequantization scales: a caller folds them into the
softmax and output scales (both 1 here, on e4m3 data drawn from the workload's normal
distribution). Separate K and V loading warps read page indices from global memory; a
3-stage K ring and a 2-stage V ring hold whole KV tiles. Tolerance: the project's generic fp8
rel-L2 bound (never run here; unverified). Adapter:
:mod:`mla_var3.kernel.cute_python.mla.cutlass_mla.common`.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.mla.cutlass_mla.common import MLA_DIR, CutlassMlaDecodePlanBase
from mla_var3.kernel.plan import REL_L2_TOLERANCE


class CutlassMlaDecodeFp8Plan(CutlassMlaDecodePlanBase):
    name = "cutlass_mla_decode_fp8"
    description = (
        "CUTLASS's SM100 MLA decode (fp8 e4m3) imported from CUTLASS_DIR: kind::f8f6f4 2-CTA tcgen05, "
        "separate K and V load warps, split-KV + reduction (compile-only here)"
    )
    dtypes = ("float8_e4m3fn",)
    example_file = f"{MLA_DIR}/mla_decode_fp8.py"
    example_class = "BlackwellMultiHeadLatentAttentionForwardFP8"

    def tolerance(self) -> float:
        return REL_L2_TOLERANCE[self.dtype]


__all__ = ["CutlassMlaDecodeFp8Plan"]
